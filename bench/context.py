"""How a baseline turns ranked turns into a context, and the one tokenizer every system is measured by.

Turns are rendered like the service renders them, one line per turn:
`[<YYYY-MM-DD HH:MM>] <speaker>: <content>`; lines are joined with a newline. Token counts are
all-MiniLM-L6-v2 word pieces (`app.adapters.embedder.count_tokens`) for the service and baselines alike.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from bench.metrics import pack_by_budget


def render_turn(speaker: str, content: str, occurred_at: datetime) -> str:
    ts = occurred_at.astimezone(UTC) if occurred_at.tzinfo else occurred_at
    return f"[{ts:%Y-%m-%d %H:%M}] {speaker}: {content}"


def count_tokens(text: str) -> int:
    """Word-piece tokens of `text` (no [CLS]/[SEP]) with the service's fixed tokenizer."""
    from app.adapters.embedder import count_tokens as _count

    return _count(text)


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """`count_tokens` for many texts at once (same tokenizer, batched)."""
    from app.adapters.embedder import load_tokenizer
    from app.settings import get_settings

    tok = load_tokenizer(get_settings().embedding_model_path)
    return [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=False)]


def build_context(ranked: Sequence[str], lines: Mapping[str, str], tokens: Mapping[str, int],
                  budget: int) -> tuple[list[str], str]:
    """A plain baseline's context for `budget`: rendered turns in rank order, stopping at the first
    that does not fit. Returns (event ids included, context text)."""
    chosen, _ = pack_by_budget(ranked, tokens, budget)
    return chosen, "\n".join(lines[e] for e in chosen)
