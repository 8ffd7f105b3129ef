"""The read path, wired stage by stage:

intent -> signals (lexical, dense, derived, graph, temporal window, recency) -> fusion (weighted RRF)
-> reweight (with the layers' per-event signals) -> rerank -> context assembly -> abstain decision.

Each stage is a module of its own and can be switched off by the recipe; this file decides the
order and records, per candidate, which signals found it and how each stage moved it, so the
response can say why an item was chosen.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection

from app.models.embedder import Embedder
from app.pipeline.assemble import AssemblyPlan, ContextItem, SummaryItem, assemble
from app.pipeline.dense import dense_signal
from app.pipeline.fusion import weighted_rrf
from app.pipeline.graph import GEdge, TypedGraph, ppr_events
from app.pipeline.intent import Intent, LLMConfig, get_router
from app.pipeline.lexical import lexical_signal
from app.pipeline.recipe import Recipe
from app.pipeline.rerank import RerankCandidate, max_relevance, passage_text, question_type, rerank
from app.pipeline.reweight import Candidate, ReweightConfig, reweight
from app.storage.events import EventRow, get_events, latest_event_time, neighbours
from app.storage.layers import (
    EventSignalsView,
    episodes_containing,
    graph_neighbourhood,
    search_extra_candidates,
    signals_for,
    window_candidates,
)
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
    relevance: dict[str, float] = field(default_factory=dict)  # best dense cosine, best cross-encoder prob
    abstain: bool = False
    summaries: list[SummaryItem] = field(default_factory=list)  # episode summaries in the context


def run_query(conn: Connection, q: QueryInput, recipe: Recipe, embedder: Embedder, reranker=None,
              llm: LLMConfig | None = None) -> QueryOutput:
    """`reranker` is anything with `.score(query, passages) -> logits`; None skips the stage.
    `llm` lets the intent router ask a model when rules and prototypes are not sure."""
    qvec = embedder.encode([q.query])[0] if (recipe.dense or recipe.intent) else None

    intent: Intent | None = None
    if recipe.intent:
        # Relative expressions ("last May") are read from the end of the conversation, when it is asked.
        ref = latest_event_time(conn, q.scope.tenant_id, q.scope.conversation_id)
        intent = get_router(embedder.encode, llm).route(q.query, reference_time=ref, query_vec=qvec,
                                                        use_llm=llm is not None)

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
    window = _bounded_window(intent, recipe.window_max_days) if recipe.window and qvec is not None else None
    if window is not None:
        # A question that names a date: what was said then (or about then), closest in meaning first.
        # A boost alone cannot lift an event from rank 40; a signal of its own puts it in the fusion.
        signals["temporal"] = window_candidates(conn, q.scope.tenant_id, q.scope.conversation_id, qvec,
                                                embedder.name, window[0], window[1], recipe.candidate_pool)

    # Fusion weights: the intent's profile (PRISM eq. 3), or the fixed weights with routing off.
    profile = intent.weights if intent is not None and recipe.intent_weights else recipe.weights()
    # Every candidate is read once: the recency list re-orders these, and fusion ranks only these.
    rows = get_events(conn, q.scope.tenant_id, list({pk for hits in signals.values() for pk, _ in hits}))
    if recipe.recency and profile.get("recency", 0.0) >= RECENCY_MIN_WEIGHT and signals:
        # Knowledge updates and preferences ask for what holds now: the newest of the candidates.
        signals["recency"] = _recency_list(rows.values(), recipe.candidate_pool)
    weights = {name: profile.get(name, 1.0) for name in signals}
    signals = {name: first_occurrences(hits) for name, hits in signals.items()}
    fused = weighted_rrf({name: [pk for pk, _ in hits] for name, hits in signals.items()}, weights, recipe.rrf_k)
    evidence: dict[int, dict[str, dict[str, float]]] = {}
    for name, hits in signals.items():
        for rank, (pk, score) in enumerate(hits, start=1):
            evidence.setdefault(pk, {})[name] = {"rank": rank, "score": round(score, 6)}

    # the derived and graph signals know conversations only: hold their hits to the request's filters
    ranked = [RankedItem(rows[pk], score, evidence.get(pk, {}), {"fusion": {"rank": i + 1, "weights": weights}})
              for i, (pk, score) in enumerate(fused) if pk in rows and _in_scope(rows[pk], q.scope)]

    if recipe.reweight and intent is not None and ranked:
        ranked = _reweight(conn, q.scope, ranked, intent, q.query, recipe)
    ce_best: float | None = None
    if recipe.rerank and reranker is not None and ranked:
        ranked, ce_best = _rerank(q.query, ranked, reranker, recipe, intent)

    near = neighbours(conn, q.scope.tenant_id, [r.event.id for r in ranked[: recipe.neighbour_of]], recipe.neighbours)
    known = {r.event.id: r.event for r in ranked} | {e.id: e for rows_ in near.values() for e in rows_}
    plan = AssemblyPlan(direct=q.top_k, neighbour_of=recipe.neighbour_of if recipe.neighbours else 0,
                        notice=recipe.notice)
    ctx_ranked = [_ctx_item(r.event) for r in ranked]
    ctx_near = {pk: [_ctx_item(e) for e in evs] for pk, evs in near.items()}
    ctx = assemble(ctx_ranked, q.token_budget, embedder.count_tokens, neighbours=ctx_near, plan=plan)
    if recipe.summaries and ctx.missing_direct:
        # Direct evidence the budget could not hold: its episode's summary stands in (a second pass).
        found = episodes_containing(conn, q.scope.tenant_id, ctx.missing_direct)
        summaries = {pk: SummaryItem(ep.index, conv, ep.summary, ep.start, ep.end)
                     for pk, (conv, ep) in found.items() if ep.summary}
        if summaries:
            ctx = assemble(ctx_ranked, q.token_budget, embedder.count_tokens, neighbours=ctx_near, plan=plan,
                           summaries=summaries)
    items = ranked[: q.top_k]
    for it in items:
        it.in_context = it.event.id in ctx.included
    context_items = sorted(((known[pk], ctx.reasons[pk]) for pk in ctx.included),
                           key=lambda x: (x[0].occurred_at, x[0].id))
    described = recipe.describe() | {"rerank": bool(recipe.rerank and reranker is not None)}
    relevance = _relevance(signals.get("dense"), ce_best)
    return QueryOutput(items, ctx.text, ctx.tokens, described, context_items, ctx.left_out,
                       intent.to_dict() if intent is not None else None, relevance,
                       should_abstain(relevance, recipe, bool(ranked)), ctx.summaries)


def first_occurrences(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """A ranked list with each event once, at its best rank. RRF sums over positions, so an event
    listed twice (several graph nodes of one event) would be counted twice."""
    seen: set[int] = set()
    out = []
    for pk, score in hits:
        if pk not in seen:
            seen.add(pk)
            out.append((pk, score))
    return out


RECENCY_MIN_WEIGHT = 0.4  # profiles below this (general 0.2) do not add the recency list at all


def _bounded_window(intent: Intent | None, max_days: float) -> tuple[datetime, datetime] | None:
    """The question's window when it is closed and narrow enough to mean "then" (not "before 2022")."""
    if intent is None or intent.time_window is None:
        return None
    start, end = intent.time_window
    if start is None or end is None or end <= start or (end - start).days > max_days:
        return None
    return start, end


def _recency_list(candidates: Iterable[EventRow], limit: int) -> list[tuple[int, float]]:
    """The candidates the other signals found, newest first (score: days before the newest)."""
    order = sorted(candidates, key=lambda e: (e.occurred_at, e.id), reverse=True)[:limit]
    if not order:
        return []
    newest = order[0].occurred_at
    return [(e.id, -round((newest - e.occurred_at).total_seconds() / 86400.0, 4)) for e in order]


def _relevance(dense: list[tuple[int, float]] | None, ce_best: float | None) -> dict[str, float]:
    out: dict[str, float] = {}
    if dense:
        out["dense"] = round(max(score for _, score in dense), 4)
    if ce_best is not None:
        out["rerank"] = round(ce_best, 4)
    return out


def should_abstain(relevance: dict[str, float], recipe: Recipe, found_any: bool) -> bool:
    """Abstain when nothing was found, or the best relevance is under its calibrated floor: the
    cross-encoder's probability when it ran (the sharper judge), else the best dense cosine."""
    if not found_any:
        return True
    if "rerank" in relevance:
        return relevance["rerank"] < recipe.abstain_rerank_floor
    if "dense" in relevance:
        return relevance["dense"] < recipe.abstain_dense_floor
    return False


def _reweight(conn: Connection, scope: Scope, ranked: list[RankedItem], intent: Intent, query: str,
              recipe: Recipe) -> list[RankedItem]:
    """True Memory eq. 4 over the fused list, fed with what the layers wrote per event: the dates an
    event talks about, its surprise σ, salience, and the newer assertion that superseded it."""
    head = ranked[: recipe.reweight_depth]  # only the head can move into the answer; the tail keeps its order
    sig = signals_for(conn, scope.tenant_id, [r.event.id for r in head])
    ku = intent.label == "knowledge_update"
    newer_rows: dict[int, EventRow] = {}
    if ku:
        missing = {s.superseded_by for s in sig.values() if s.superseded_by is not None} - {r.event.id for r in head}
        newer_rows = {pk: ev for pk, ev in get_events(conn, scope.tenant_id, list(missing)).items()
                      if _in_scope(ev, scope)}
    speakers = {r.event.speaker for r in head if r.event.speaker}
    named = {sp for sp in speakers if _names_speaker(query, sp)}
    out = reweight(
        [_candidate(r.event, r.score, sig.get(r.event.id)) for r in head],
        time_window=intent.time_window,
        speaker_priors={sp: 1.0 for sp in named} or None,
        knowledge_update=ku,
        newer={pk: _candidate(ev, 0.0, None) for pk, ev in newer_rows.items()},
        config=ReweightConfig(salience_floor=recipe.salience_floor),
    )
    by_id = {r.event.id: r for r in head}
    result = []
    for rw in out.items:
        item = by_id.get(rw.id)
        if item is None:
            ev = newer_rows.get(rw.id)  # only a newer assertion is ever injected here
            if ev is None:
                continue
            item = RankedItem(ev, rw.score, {}, {})
        item.score = rw.score
        if rw.adjustments or rw.supersedes or rw.superseded_by is not None or rw.injected:
            item.stages["reweight"] = rw.explain()
        result.append(item)
    # the tail stays below the reweighted head, in its fused order
    floor = min((r.score for r in result), default=0.0)
    tail = ranked[recipe.reweight_depth:]
    for i, item in enumerate(tail, start=1):
        item.score = min(item.score, floor * (1.0 - 1e-6 * i))
    return result + tail


def _candidate(ev: EventRow, score: float, s: EventSignalsView | None) -> Candidate:
    if s is None:
        return Candidate(id=ev.id, score=score, occurred_at=ev.occurred_at, speaker=ev.speaker)
    dates = tuple((d, d + timedelta(days=1)) for d in s.resolved_dates)
    return Candidate(id=ev.id, score=score, occurred_at=ev.occurred_at, dates=dates, speaker=ev.speaker,
                     surprise=s.surprise, salience=s.salience, superseded_by=s.superseded_by)


def _names_speaker(query: str, speaker: str) -> bool:
    """Whether the question names this speaker (by full name or first name, as a whole word)."""
    names = {speaker.strip(), speaker.strip().split()[0]} if speaker.strip() else set()
    return any(len(n) >= 2 and re.search(rf"\b{re.escape(n)}\b", query, re.I) for n in names)


def _rerank(query: str, ranked: list[RankedItem], reranker, recipe: Recipe,
            intent: Intent | None) -> tuple[list[RankedItem], float | None]:
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
    return out, max_relevance(results)


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
    hits = ppr_events(graph, {k: 1.0 for k in view.seeds if k in layer}, top_k=limit * 4, explain=0)
    # several nodes (an event and its facet points) can stand for one event: keep its best
    return first_occurrences([(int(h.event_id), float(h.score)) for h in hits if isinstance(h.event_id, int)])[:limit]


def _in_scope(e: EventRow, scope: Scope) -> bool:
    if scope.speakers and e.speaker not in scope.speakers:
        return False
    if scope.start is not None and e.occurred_at < scope.start:
        return False
    return scope.end is None or e.occurred_at <= scope.end


def _ctx_item(e: EventRow) -> ContextItem:
    return ContextItem(e.id, e.speaker, e.content, e.occurred_at)
