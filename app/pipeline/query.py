"""The read path, wired stage by stage: signals -> fusion -> context assembly.

Each stage is a module of its own; this file only decides the order and carries each
candidate's per-signal evidence so the response can say why an item was chosen.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.models.embedder import Embedder
from app.pipeline.assemble import AssemblyPlan, ContextItem, assemble
from app.pipeline.dense import dense_signal
from app.pipeline.fusion import weighted_rrf
from app.pipeline.lexical import lexical_signal
from app.pipeline.recipe import Recipe
from app.storage.events import EventRow, get_events, neighbours
from app.storage.search import Scope


@dataclass(frozen=True)
class QueryInput:
    query: str
    scope: Scope
    top_k: int
    token_budget: int


@dataclass
class RankedItem:
    event: EventRow
    score: float
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    in_context: bool = False


@dataclass
class QueryOutput:
    items: list[RankedItem]
    context: str
    context_tokens: int
    recipe: dict[str, Any]
    context_items: list[tuple[EventRow, str]] = field(default_factory=list)  # (event, why it is there)
    left_out: int = 0


def run_query(conn: Connection, q: QueryInput, recipe: Recipe, embedder: Embedder) -> QueryOutput:
    signals: dict[str, list[tuple[int, float]]] = {}
    if recipe.lexical:
        signals["lexical"] = lexical_signal(conn, q.scope, q.query, recipe.candidate_pool)
    if recipe.dense:
        vec = embedder.encode([q.query])[0]
        signals["dense"] = dense_signal(conn, q.scope, vec, embedder.name, recipe.candidate_pool)

    fused = weighted_rrf({name: [pk for pk, _ in hits] for name, hits in signals.items()}, recipe.weights(), recipe.rrf_k)
    evidence: dict[int, dict[str, dict[str, float]]] = {}
    for name, hits in signals.items():
        for rank, (pk, score) in enumerate(hits, start=1):
            evidence.setdefault(pk, {})[name] = {"rank": rank, "score": round(score, 6)}

    rows = get_events(conn, q.scope.tenant_id, [pk for pk, _ in fused])
    ranked = [RankedItem(rows[pk], score, evidence.get(pk, {})) for pk, score in fused if pk in rows]

    near = neighbours(conn, q.scope.tenant_id, [r.event.id for r in ranked[: recipe.neighbour_of]], recipe.neighbours)
    known = {r.event.id: r.event for r in ranked} | {e.id: e for rows_ in near.values() for e in rows_}
    ctx = assemble(
        [_ctx_item(r.event) for r in ranked],
        q.token_budget,
        embedder.count_tokens,
        neighbours={pk: [_ctx_item(e) for e in evs] for pk, evs in near.items()},
        plan=AssemblyPlan(direct=q.top_k, neighbour_of=recipe.neighbour_of if recipe.neighbours else 0,
                          notice=recipe.notice),
    )
    items = ranked[: q.top_k]
    for it in items:
        it.in_context = it.event.id in ctx.included
    context_items = sorted(((known[pk], ctx.reasons[pk]) for pk in ctx.included),
                           key=lambda x: (x[0].occurred_at, x[0].id))
    return QueryOutput(items, ctx.text, ctx.tokens, recipe.describe(), context_items, ctx.left_out)


def _ctx_item(e: EventRow) -> ContextItem:
    return ContextItem(e.id, e.speaker, e.content, e.occurred_at)
