"""Stage: context assembly inside a token budget (first version).

Takes candidates best first, keeps each whose rendered line still fits the budget (a long
turn that does not fit is skipped, so shorter evidence behind it still gets in), then orders
the chosen lines by time so the answer model reads the conversation as it happened.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ContextItem:
    id: int
    speaker: str
    content: str
    occurred_at: datetime


@dataclass(frozen=True)
class AssembledContext:
    text: str
    tokens: int
    included: frozenset[int]


def render_line(item: ContextItem) -> str:
    return f"[{item.occurred_at.strftime('%Y-%m-%d %H:%M')}] {item.speaker}: {item.content}"


def assemble(
    ranked: Sequence[ContextItem], budget: int, count_tokens: Callable[[str], int]
) -> AssembledContext:
    chosen: list[ContextItem] = []
    used = 0
    for item in ranked:
        cost = count_tokens(render_line(item))
        if used + cost > budget:
            continue
        chosen.append(item)
        used += cost
    chosen.sort(key=lambda it: (it.occurred_at, it.id))
    # WordPiece splits on whitespace, so the joined text costs exactly the sum of its lines.
    return AssembledContext("\n".join(render_line(it) for it in chosen), used, frozenset(it.id for it in chosen))
