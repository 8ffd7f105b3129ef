"""The read path, wired stage by stage:

intent -> signals (lexical, dense) -> fusion (weighted RRF) -> reweight -> rerank -> context assembly.

Each stage is a module of its own and can be switched off by the recipe; this file decides the
order and records, per candidate, which signals found it and how each stage moved it, so the
response can say why an item was chosen.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from app.models.embedder import Embedder
from app.pipeline.assemble import AssemblyPlan, ContextItem, assemble
from app.pipeline.dense import dense_signal
from app.pipeline.fusion import weighted_rrf
from app.pipeline.graph import GEdge, TypedGraph, ppr_events
from app.pipeline.intent import Intent, get_router
from app.pipeline.lexical import lexical_signal
from app.pipeline.recipe import Recipe
from app.pipeline.rerank import RerankCandidate, passage_text, question_type, rerank
from app.pipeline.reweight import Candidate, reweight
from app.storage.events import EventRow, get_events, latest_event_time, neighbours
from app.storage.layers import graph_neighbourhood, search_extra_candidates
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
    stages: dict[str, Any] = field(default_factory=dict)
    in_context: bool = False


@dataclass
class QueryOutput:
    items: list[RankedItem]
    context: str
    context_tokens: int
    recipe: dict[str, Any]
    context_items: list[tuple[EventRow, str]] = field(default_factory=list)  # (event, why it is there)
    left_out: int = 0
    intent: dict[str, Any] | None = None


def run_query(conn: Connection, q: QueryInput, recipe: Recipe, embedder: Embedder, reranker=None) -> QueryOutput:
    """`reranker` is anything with `.score(query, passages) -> logits`; None skips the stage."""
    qvec = embedder.encode([q.query])[0] if (recipe.dense or recipe.intent) else None

    intent: Intent | None = None
    if recipe.intent:
        # Relative expressions ("last May") are read from the end of the conversation, when it is asked.
        ref = latest_event_time(conn, q.scope.tenant_id, q.scope.conversation_id)
        intent = get_router(embedder.encode).route(q.query, reference_time=ref, query_vec=qvec, use_llm=True)

    signals: dict[str, list[tuple[int, float]]] = {}
    if recipe.lexical:
        signals["lexical"] = lexical_signal(conn, q.scope, q.query, recipe.candidate_pool)
    if recipe.dense and qvec is not None:
        signals["dense"] = dense_signal(conn, q.scope, qvec, embedder.name, recipe.candidate_pool)
    if recipe.derived:
        # resolved absolute dates and entity names written over the verbatim text by the layers
        signals["derived"] = search_extra_candidates(conn, q.scope.tenant_id, q.scope.conversation_id, q.query,
                                                     recipe.candidate_pool)
    if recipe.graph and q.scope.conversation_id is not None:
        signals["graph"] = graph_signal(conn, q.scope, q.query, recipe.candidate_pool)

    weights = recipe.weights()
    if intent is not None and recipe.intent_weights:
        weights = {name: intent.weights.get(name, 1.0) for name in signals}
    fused = weighted_rrf({name: [pk for pk, _ in hits] for name, hits in signals.items()}, weights, recipe.rrf_k)
    evidence: dict[int, dict[str, dict[str, float]]] = {}
    for name, hits in signals.items():
        for rank, (pk, score) in enumerate(hits, start=1):
            evidence.setdefault(pk, {})[name] = {"rank": rank, "score": round(score, 6)}

    rows = get_events(conn, q.scope.tenant_id, [pk for pk, _ in fused])
    # the derived and graph signals know conversations only: hold their hits to the request's filters
    ranked = [RankedItem(rows[pk], score, evidence.get(pk, {}), {"fusion": {"rank": i + 1, "weights": weights}})
              for i, (pk, score) in enumerate(fused) if pk in rows and _in_scope(rows[pk], q.scope)]

    if recipe.reweight and intent is not None and ranked:
        ranked = _reweight(ranked, intent)
    if recipe.rerank and reranker is not None and ranked:
        ranked = _rerank(q.query, ranked, reranker, recipe, intent)

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
    described = recipe.describe() | {"rerank": bool(recipe.rerank and reranker is not None)}
    return QueryOutput(items, ctx.text, ctx.tokens, described, context_items, ctx.left_out,
                       intent.to_dict() if intent is not None else None)


def _reweight(ranked: list[RankedItem], intent: Intent) -> list[RankedItem]:
    by_id = {r.event.id: r for r in ranked}
    out = reweight(
        [Candidate(id=r.event.id, score=r.score, occurred_at=r.event.occurred_at, speaker=r.event.speaker)
         for r in ranked],
        time_window=intent.time_window,
        knowledge_update=intent.label == "knowledge_update",
    )
    result = []
    for rw in out.items:
        item = by_id.get(rw.id)
        if item is None:  # only candidates we passed in come back here (no injection without layers)
            continue
        item.score = rw.score
        if rw.adjustments:
            item.stages["reweight"] = rw.explain()
        result.append(item)
    return result


def _rerank(query: str, ranked: list[RankedItem], reranker, recipe: Recipe, intent: Intent | None) -> list[RankedItem]:
    by_id = {r.event.id: r for r in ranked}
    results = rerank(
        query,
        [RerankCandidate(r.event.id, passage_text(r.event.speaker, r.event.content), r.score) for r in ranked],
        reranker.score,
        top_n=recipe.rerank_top_n,
        alpha=recipe.rerank_alpha,
        qtype=question_type(intent.label if intent else None),
    )
    out = []
    for res in results:
        item = by_id[res.id]
        if res.reranked:
            item.score = res.score
            item.stages["rerank"] = res.explain()
        out.append(item)
    return out


def graph_signal(conn: Connection, scope: Scope, query: str, limit: int) -> list[tuple[int, float]]:
    """Personalized PageRank over the entity graph around the entities the question names
    (HippoRAG / Cortex phase 2); only that neighbourhood is read from the database."""
    view = graph_neighbourhood(conn, scope.tenant_id, scope.conversation_id, query=query, limit=400, depth=2)
    if not view.seeds or not view.nodes:
        return []
    layer = {n["key"]: ("event" if n.get("event_pk") else n["kind"]) for n in view.nodes}
    event_of = {n["key"]: n["event_pk"] for n in view.nodes if n.get("event_pk")}
    edges = [GEdge(e["src"], e["dst"], e["type"], float(e.get("weight") or 1.0))
             for e in view.edges if e["src"] in layer and e["dst"] in layer]
    graph = TypedGraph(layer, edges, event_of=event_of)
    hits = ppr_events(graph, {k: 1.0 for k in view.seeds if k in layer}, top_k=limit, explain=0)
    return [(int(h.event_id), float(h.score)) for h in hits if isinstance(h.event_id, int)]


def _in_scope(e: EventRow, scope: Scope) -> bool:
    if scope.speakers and e.speaker not in scope.speakers:
        return False
    if scope.start is not None and e.occurred_at < scope.start:
        return False
    return scope.end is None or e.occurred_at <= scope.end


def _ctx_item(e: EventRow) -> ContextItem:
    return ContextItem(e.id, e.speaker, e.content, e.occurred_at)
