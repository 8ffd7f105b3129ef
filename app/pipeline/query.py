"""The read path, wired stage by stage:

intent -> signals (lexical, dense, expansion, separation, derived, graph, temporal window, recency)
-> fusion (weighted RRF)
-> reweight (with the layers' per-event signals) -> rerank -> context assembly -> abstain decision.

Each stage is a module of its own and can be switched off by the recipe; this file decides the
order and records, per candidate, which signals found it and how each stage moved it, so the
response can say why an item was chosen.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from collections.abc import Collection, Iterable
from typing import Any

import numpy as np
from sqlalchemy import Connection

from app.models.embedder import Embedder
from app.models.llm import LLMError, chat
from app.pipeline.assemble import AssemblyPlan, ContextItem, SummaryItem, assemble
from app.pipeline.dense import dense_signal
from app.pipeline.expansion import feedback_ids, hyde_messages, rocchio, usable_passage
from app.pipeline.fusion import weighted_rrf
from app.pipeline.graph import GEdge, GraphSignal, TypedGraph, bundle_search, ppr_events
from app.pipeline.intent import Intent, LLMConfig, get_router
from app.pipeline.lexical import lexical_signal
from app.pipeline.recipe import Recipe
from app.pipeline.rerank import RerankCandidate, max_relevance, passage_text, question_type, rerank
from app.pipeline.reweight import Candidate, ReweightConfig, reweight
from app.pipeline.separation import WEIGHT_OF_DENSE as SEPARATION_WEIGHT, asker_role, names_speaker, separated_speakers
from app.storage.events import EventRow, get_events, latest_event_time, neighbours
from app.storage.layers import (
    EventSignalsView,
    episodes_containing,
    graph_neighbourhood,
    search_extra_candidates,
    signals_for,
    window_candidates,
)
from app.storage.search import Scope, conversation_speakers, event_vectors


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
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds per stage (Server-Timing)


class StageClock:
    """Wall time per stage, lap by lap: `lap("dense")` charges the time since the previous lap."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.ms[stage] = round(self.ms.get(stage, 0.0) + (now - self._last) * 1000.0, 3)
        self._last = now


def run_query(conn: Connection, q: QueryInput, recipe: Recipe, embedder: Embedder, reranker=None,
              llm: LLMConfig | None = None) -> QueryOutput:
    """`reranker` is anything with `.score(query, passages) -> logits`; None skips the stage.
    `llm` lets the intent router ask a model when rules and prototypes are not sure."""
    clock = StageClock()
    qvec = embedder.encode([q.query])[0] if (recipe.dense or recipe.intent) else None

    intent: Intent | None = None
    if recipe.intent:
        # Relative expressions ("last May") are read from the end of the conversation, when it is asked.
        ref = latest_event_time(conn, q.scope.tenant_id, q.scope.conversation_id)
        intent = get_router(embedder.encode, llm).route(q.query, reference_time=ref, query_vec=qvec,
                                                        use_llm=llm is not None)
    clock.lap("intent")

    signals: dict[str, list[tuple[int, float]]] = {}
    if recipe.lexical:
        signals["lexical"] = lexical_signal(conn, q.scope, q.query, recipe.candidate_pool)
        clock.lap("lexical")
    if recipe.dense and qvec is not None:
        signals["dense"] = dense_signal(conn, q.scope, qvec, embedder.name, recipe.candidate_pool)
        clock.lap("dense")
    if recipe.derived:
        # resolved absolute dates and entity names written over the verbatim text by the layers
        signals["derived"] = search_extra_candidates(conn, q.scope.tenant_id, q.scope.conversation_id, q.query,
                                                     recipe.candidate_pool)
        clock.lap("derived")
    if recipe.expansion and recipe.dense and qvec is not None:
        signals["expansion"] = expansion_signal(conn, q, qvec, embedder, signals, recipe.candidate_pool, llm)
        clock.lap("expansion")
    if recipe.separation and qvec is not None and q.scope.conversation_id is not None and not q.scope.speakers:
        named = separated_speakers(q.query, conversation_speakers(conn, q.scope.tenant_id, q.scope.conversation_id))
        if named:  # many speakers, and the question names some: their turns, by meaning
            signals["separation"] = dense_signal(conn, replace(q.scope, speakers=named), qvec, embedder.name,
                                                 recipe.candidate_pool)
        clock.lap("separation")
    if recipe.graph and q.scope.conversation_id is not None:
        found = {pk for hits in signals.values() for pk, _ in hits[:GRAPH_PREFER_DEPTH]}
        anchors = dict(signals.get("dense", [])[:GRAPH_PREFER_DEPTH]) if recipe.bundle else {}
        signals["graph"] = graph_signal(conn, q.scope, q.query, recipe.candidate_pool, found, anchors,
                                        intent.label if intent is not None else None)
        clock.lap("graph")
    window = _bounded_window(intent, recipe.window_max_days) if recipe.window and qvec is not None else None
    if window is not None:
        # A question that names a date: what was said then (or about then), closest in meaning first.
        # A boost alone cannot lift an event from rank 40; a signal of its own puts it in the fusion.
        signals["temporal"] = window_candidates(conn, q.scope.tenant_id, q.scope.conversation_id, qvec,
                                                embedder.name, window[0], window[1], recipe.candidate_pool)
        clock.lap("temporal")

    # Fusion weights: the intent's profile (PRISM eq. 3), or the fixed weights with routing off.
    profile = intent.weights if intent is not None and recipe.intent_weights else recipe.weights()
    # Every candidate is read once: the recency list re-orders these, and fusion ranks only these.
    rows = get_events(conn, q.scope.tenant_id, list({pk for hits in signals.values() for pk, _ in hits}))
    if recipe.recency and profile.get("recency", 0.0) >= RECENCY_MIN_WEIGHT and signals:
        # Knowledge updates and preferences ask for what holds now: the newest of the candidates.
        signals["recency"] = _recency_list(rows.values(), recipe.candidate_pool)
    weights = {name: profile.get(name, 1.0) for name in signals}
    if "separation" in weights:  # True Memory: w_sep = 0.8 × w_dense
        weights["separation"] = SEPARATION_WEIGHT * profile.get("dense", 1.0)
    signals = {name: first_occurrences(hits) for name, hits in signals.items()}
    fused = weighted_rrf({name: [pk for pk, _ in hits] for name, hits in signals.items()}, weights, recipe.rrf_k)
    evidence: dict[int, dict[str, dict[str, float]]] = {}
    for name, hits in signals.items():
        for rank, (pk, score) in enumerate(hits, start=1):
            evidence.setdefault(pk, {})[name] = {"rank": rank, "score": round(score, 6)}

    # the derived and graph signals know conversations only: hold their hits to the request's filters
    ranked = [RankedItem(rows[pk], score, evidence.get(pk, {}), {"fusion": {"rank": i + 1, "weights": weights}})
              for i, (pk, score) in enumerate(fused) if pk in rows and _in_scope(rows[pk], q.scope)]
    clock.lap("fusion")

    if recipe.reweight and intent is not None and ranked:
        ranked = _reweight(conn, q.scope, ranked, intent, q.query, recipe)
        clock.lap("reweight")
    ce_best: float | None = None
    if recipe.rerank and reranker is not None and ranked:
        ranked, ce_best = _rerank(q.query, ranked, reranker, recipe, intent)
        clock.lap("rerank")

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
    clock.lap("assemble")
    return QueryOutput(items, ctx.text, ctx.tokens, described, context_items, ctx.left_out,
                       intent.to_dict() if intent is not None else None, relevance,
                       should_abstain(relevance, recipe, bool(ranked)), ctx.summaries, clock.ms)


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


GRAPH_PREFER_DEPTH = 30  # the other signals' top hits the graph neighbourhood reaches first
GRAPH_NODES = 400  # the neighbourhood PageRank runs on (nodes read per query)
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
    named = {sp for sp in speakers if names_speaker(query, sp)}
    out = reweight(
        [_candidate(r.event, r.score, sig.get(r.event.id)) for r in head],
        time_window=intent.time_window,
        speaker_priors={sp: 1.0 for sp in named} or None,
        asker_turns=asker_turns(query, [r.event for r in head]) if recipe.asker else (),
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


def asker_turns(query: str, events: list[EventRow]) -> set[int]:
    """A first-person question among turns of a user and another role: the user's own turns (f_asker).
    Empty when the events carry no roles, or all share one (nothing to prefer)."""
    role = asker_role(query)
    roles = {e.role for e in events}
    if role is None or role not in roles or len(roles) < 2:
        return set()
    return {e.id for e in events if e.role == role}


def _candidate(ev: EventRow, score: float, s: EventSignalsView | None) -> Candidate:
    if s is None:
        return Candidate(id=ev.id, score=score, occurred_at=ev.occurred_at, speaker=ev.speaker)
    dates = tuple((d, d + timedelta(days=1)) for d in s.resolved_dates)
    return Candidate(id=ev.id, score=score, occurred_at=ev.occurred_at, dates=dates, speaker=ev.speaker,
                     surprise=s.surprise, salience=s.salience, superseded_by=s.superseded_by)


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


def expansion_signal(conn: Connection, q: QueryInput, qvec: np.ndarray, embedder: Embedder,
                     signals: dict[str, list[tuple[int, float]]], limit: int,
                     llm: LLMConfig | None) -> list[tuple[int, float]]:
    """The dense search again with the question restated: HyDE when an LLM is configured (and
    answers), else the question's vector moved toward the turns lexical and dense agree on."""
    vec = None
    if llm is not None:
        try:
            passage = usable_passage(chat(llm, hyde_messages(q.query)))
        except LLMError:
            passage = None  # no LLM answer: feedback from the conversation instead
        if passage:
            vec = embedder.encode([passage])[0]
    if vec is None:
        top = feedback_ids([[pk for pk, _ in signals.get(name, [])] for name in ("lexical", "dense")])
        vec = rocchio(qvec, event_vectors(conn, q.scope.tenant_id, top, embedder.name))
    return [] if vec is None else dense_signal(conn, q.scope, vec, embedder.name, limit)


def graph_signal(conn: Connection, scope: Scope, query: str, limit: int, found: Collection[int] = (),
                 anchors: dict[int, float] | None = None, intent: str | None = None) -> list[tuple[int, float]]:
    """The graph's ranked events: Personalized PageRank from the entities the question names
    (HippoRAG / Cortex phase 2), fused (RRF) with PRISM's typed-path bundle search from `anchors`
    (event -> dense cosine) when given. Only the neighbourhood is read from the database, and where
    it is too big to read whole, the part that reaches `found` (the other signals' events) first."""
    view = graph_neighbourhood(conn, scope.tenant_id, scope.conversation_id, query=query, limit=GRAPH_NODES, depth=2,
                               light=True, prefer_events=found)
    if not view.seeds or not view.nodes:
        return []
    layer = {n["key"]: ("event" if n.get("event_pk") else n["kind"]) for n in view.nodes}
    event_of = {n["key"]: n["event_pk"] for n in view.nodes if n.get("event_pk")}
    edges = [GEdge(e["src"], e["dst"], e["type"], float(e.get("weight") or 1.0))
             for e in view.edges if e["src"] in layer and e["dst"] in layer]
    graph = TypedGraph(layer, edges, event_of=event_of)
    named = set(view.seeds)
    seeds = {n["key"]: seed_weight(n) for n in view.nodes if n["key"] in named}
    found_by = GraphSignal(ppr=ppr_events(graph, seeds, top_k=limit * 4, explain=0))
    if anchors:
        # PRISM eqs. 2-5: from the events dense retrieval found (anchor cost 1 - cos), the backbone
        # and one typed relation (temporal / causal / evolution) further, edge costs by intent.
        # The anchors themselves are the dense list again; what the search adds is the bridges.
        nodes = {key: anchors[pk] for key, pk in event_of.items() if pk in anchors}
        found_by.bundle = [h for h in (bundle_search(graph, nodes, intent, top_k=limit * 4) if nodes else [])
                           if h.template.startswith("bridge")]
    ranked = found_by.ranking()
    # several nodes (an event and its facet points) can stand for one event: keep its best
    hits = first_occurrences([(int(pk), 1.0 / (1 + i)) for i, pk in enumerate(ranked) if isinstance(pk, int)])
    return hits[:limit]


def seed_weight(node: dict) -> float:
    """Restart mass of a seed entity, by how specific it is: an entity named in three turns says more
    about which turns matter than a speaker named in three hundred (1 / log2(2 + mentions))."""
    mentions = (node.get("data") or {}).get("mentions")
    return 1.0 / math.log2(2.0 + float(mentions)) if isinstance(mentions, (int, float)) and mentions > 0 else 1.0


def _in_scope(e: EventRow, scope: Scope) -> bool:
    if scope.speakers and e.speaker not in scope.speakers:
        return False
    if scope.start is not None and e.occurred_at < scope.start:
        return False
    return scope.end is None or e.occurred_at <= scope.end


def _ctx_item(e: EventRow) -> ContextItem:
    return ContextItem(e.id, e.speaker, e.content, e.occurred_at)
