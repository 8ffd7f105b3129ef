"""The read path: a question in, ranked evidence and a budgeted context out, in three I/O phases.

0. One preliminary statement (`preliminaries`): the question's lexemes, the scope's latest event
   time (unless the request gives `as_of`: the intent router reads relative dates from whichever),
   the conversation's speakers and graph version, the HNSW scan settings. Then the intent, in memory.
1. Gather: every enabled retriever (`app.services.retrievers.RETRIEVERS`: lexical, dense, derived,
   expansion, separation, graph, temporal window) returns its candidates.
2. Hydrate: every candidate event with its per-event signals (and, for a knowledge-update
   question, the events that superseded them) in one statement (`candidate_rows`).
3. Compute in memory (`app.domain.retrieval.ranking`): the recency list, weighted RRF, the reweight
   (True Memory eq. 4), the rerank, then the context: the neighbours of the strongest evidence are
   read (one statement), and, when direct evidence did not fit the budget, its episodes' summaries
   (one more), before the context is assembled and the abstain decision taken.

Per stage wall times are kept (`timings`, the Server-Timing header), and per candidate which
signals found it and how each stage moved it, so the response can say why an item was chosen.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Iterable

from sqlalchemy import Connection

from app.domain.filters import metadata_matches
from app.domain.layers.graph_rows import turn_mentions
from app.domain.layers.timediscourse import NO_DISCOURSE
from app.domain.layers.timeparse import TimeMention
from app.domain.layers.timeturns import discourses, may_take_up, remembered_before
from app.domain.recipe import Recipe
from app.domain.retrieval.assemble import AssemblyPlan, ContextItem, SummaryItem, assemble
from app.domain.retrieval.exchanges import asks_for_account, exchange_order
from app.domain.retrieval.fusion import first_occurrences
from app.domain.retrieval.intent import get_router
from app.domain.retrieval.ranking import (
    RECENCY_MIN_WEIGHT,
    RankedItem,
    current_first,
    fuse,
    fusion_weights,
    in_scope,
    learned_ranked,
    recency_list,
    rerank_ranked,
    reweight_config,
    reweight_ranked,
    should_abstain,
)
from app.ports import LLM, Dispatcher, Embedder, FusionModel
from app.services.retrievers import GRAPH, RETRIEVERS, SEPARATION, SearchContext
from app.storage.candidates import Scope, preliminaries
from app.storage.events import EventRow, neighbours
from app.storage.hydrate import candidate_rows, episode_summaries
from app.storage.signals import EventSignalsView, signals_for, time_mentions_before


@dataclass(frozen=True)
class QueryInput:
    query: str
    scope: Scope
    top_k: int
    token_budget: int
    as_of: datetime | None = None  # the time anchor of relative dates; None: the scope's newest event


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
    as_of: datetime | None = None  # the anchor relative dates were read from (when the intent ran)


class StageClock:
    """Wall time per stage, lap by lap: `lap("dense")` charges the time since the previous lap."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.ms[stage] = round(self.ms.get(stage, 0.0) + (now - self._last) * 1000.0, 3)
        self._last = now


def run_query(conn: Connection, q: QueryInput, recipe: Recipe, embedder: Embedder, reranker=None,  # noqa: ANN001
              llm: LLM | None = None, fusion_model: FusionModel | None = None) -> QueryOutput:
    """`reranker` is anything with `.score(query, passages) -> logits` (`app.ports.Reranker`); None
    skips the stage. `llm` lets the intent router ask a model when rules and prototypes are not sure.
    `fusion_model`: the learned fusion when `recipe.learned` (default: the shipped one, if any)."""
    clock = StageClock()
    qvec = embedder.encode([q.query])[0] if (recipe.dense or recipe.intent) else None
    ctx = SearchContext(conn, q.scope, q.query, qvec, embedder, recipe, llm)
    ctx.pre = preliminaries(
        conn, q.scope, query=q.query if recipe.lexical and q.query.strip() else None,
        reference=recipe.intent and q.as_of is None,
        speakers=SEPARATION.wants_speakers(recipe, q.scope, qvec is not None),
        graph=GRAPH.wants_version(recipe, q.scope), hnsw=qvec is not None, language=recipe.learned)
    anchor = q.as_of if q.as_of is not None else ctx.pre.reference_time
    if recipe.intent:
        ctx.intent = get_router(embedder.encode, llm).route(q.query, reference_time=anchor,
                                                            query_vec=qvec, use_llm=llm is not None)
    intent = ctx.intent
    clock.lap("intent")

    # 1. gather
    for retriever in RETRIEVERS:
        if retriever.applies(ctx):
            ctx.signals[retriever.name] = retriever.run(ctx)
            clock.lap(retriever.name)
    signals = ctx.signals

    # 2. hydrate: every candidate once (the recency list re-orders these, fusion ranks only these)
    found = {pk for hits in signals.values() for pk, _ in hits}
    knowledge_update = (recipe.reweight or recipe.current_first) and intent is not None \
        and intent.label == "knowledge_update"
    rows, sig = candidate_rows(conn, q.scope.tenant_id, found,
                               signals=recipe.reweight or recipe.summaries or recipe.current_first,
                               superseding=knowledge_update)
    clock.lap("hydrate")

    # 3. compute. Fusion weights: the intent's profile (PRISM eq. 3), or the fixed weights with routing off.
    profile = intent.weights if intent is not None and recipe.intent_weights else recipe.weights()
    if recipe.recency and profile.get("recency", 0.0) >= RECENCY_MIN_WEIGHT and signals:
        # Knowledge updates and preferences ask for what holds now: the newest of the candidates.
        signals["recency"] = recency_list([ev for pk, ev in rows.items() if pk in found], recipe.candidate_pool)
    weights = fusion_weights(signals, profile)
    signals = {name: first_occurrences(hits) for name, hits in signals.items()}
    ranked = fuse(signals, weights, recipe.rrf_k, rows, q.scope)
    clock.lap("fusion")

    # The learned model was fitted on English conversations, with features from layers that English-only
    # rules build; in another language those features are absent and it misranks: fusion's order stands.
    learned = recipe.learned and ctx.pre.english is not False
    model = (fusion_model or installed_fusion_ranker()) if learned and ranked else None
    if model is not None:
        # the reweight's factors are among the model's features; `learned_priors` applies them again on top
        ranked = learned_ranked(ranked, model, query=q.query, intent=intent, signals=signals, signals_of=sig,
                                reference_time=None, explain=q.top_k,  # recency: before the newest candidate
                                priors=reweight_config(recipe) if recipe.learned_priors else None)
        if recipe.current_first and intent is not None and intent.label == "knowledge_update":
            ranked = current_first(ranked, signals_of=sig, events=rows, scope=q.scope, depth=recipe.reweight_depth)
        clock.lap("learned")
    elif recipe.reweight and intent is not None and ranked:
        ranked = reweight_ranked(ranked, intent, q.query, q.scope, recipe, signals_of=sig, events=rows)
        clock.lap("reweight")
    ce_best: float | None = None
    if recipe.rerank and reranker is not None and ranked:
        ranked, ce_best = rerank_ranked(q.query, ranked, reranker.score, top_n=recipe.rerank_top_n,
                                        alpha=recipe.rerank_alpha, intent=intent)
        clock.lap("rerank")
    if recipe.exchanges and ranked and asks_for_account(q.query):
        ranked = _exchanges(conn, q, ranked, recipe.exchange_depth)
        clock.lap("exchanges")

    out = _assemble(conn, q, recipe, embedder, ranked, sig)
    clock.lap("assemble")
    out.recipe = recipe.describe() | {"rerank": bool(recipe.rerank and reranker is not None), "learned": learned}
    out.intent = intent.to_dict() | {"reference_time": anchor.isoformat() if anchor else None} \
        if intent is not None else None
    out.as_of = anchor if intent is not None else q.as_of
    # abstain: the model was fitted on what the default pipeline measures (the learned ranker's scores,
    # lexical and dense both searched); a recipe without them abstains by the floors
    fitted_for = model is not None and recipe.lexical and recipe.dense
    abstainer = installed_abstain_model() if recipe.abstain_learned and fitted_for else None
    out.relevance, out.abstain = should_abstain(  # its texts: the candidates the request may see only
        q.query, signals, {pk: f"{ev.speaker}: {ev.content}" for pk, ev in rows.items() if in_scope(ev, q.scope)},
        ranked, ce_best, recipe, abstainer)
    clock.lap("abstain")
    out.timings = clock.ms
    return out


def _assemble(conn: Connection, q: QueryInput, recipe: Recipe, embedder: Embedder, ranked: list[RankedItem],
              sig: dict[int, EventSignalsView]) -> QueryOutput:
    """The context: direct evidence, the turns around the strongest of it (read here), and when direct
    evidence did not fit, its episodes' summaries in its place (read then, a second pass)."""
    near = neighbours(conn, q.scope.tenant_id, [r.event.id for r in ranked[: recipe.neighbour_of]], recipe.neighbours)
    if q.scope.where is not None:
        # a metadata filter is a boundary (one user's, one project's events): the turns around the
        # evidence join the context only when they pass it too
        near = {pk: [e for e in evs if metadata_matches(e.metadata, q.scope.where)] for pk, evs in near.items()}
    known = {r.event.id: r.event for r in ranked} | {e.id: e for rows_ in near.values() for e in rows_}
    plan = AssemblyPlan(direct=q.top_k, neighbour_of=recipe.neighbour_of if recipe.neighbours else 0,
                        notice=recipe.notice, compact_stamps=recipe.compact_stamps)
    # each item's dates as the graph layer read them with every turn before it ("the 16th" after "December 14");
    # a turn it has not read yet (or under a metadata filter: what the filter hides may not date what it shows)
    # is read here, with the turns before it that the query holds and the days its conversation named before
    held = _layer_dates(conn, q, known, sig)
    rest = [e for e in known.values() if e.id not in held]
    said = discourses([(e.id, e.conversation_id, e.content, e.occurred_at) for e in known.values()],
                      _named_before(conn, q, rest)) if rest else {}
    ctx_ranked = [_ctx_item(r.event, sig, known, said, held) for r in ranked]
    ctx_near = {pk: [_ctx_item(e, sig, known, said, held) for e in evs] for pk, evs in near.items()}
    at_least = getattr(embedder, "token_floor", None)  # a cheap lower bound of count_tokens, when it has one
    ctx = assemble(ctx_ranked, q.token_budget, embedder.count_tokens, neighbours=ctx_near, plan=plan,
                   at_least=at_least)
    if recipe.summaries and ctx.missing_direct and q.scope.where is None:  # a summary may quote filtered-out turns
        summaries = _summaries(conn, q.scope.tenant_id, ctx.missing_direct, sig)
        if summaries:
            ctx = assemble(ctx_ranked, q.token_budget, embedder.count_tokens, neighbours=ctx_near, plan=plan,
                           summaries=summaries, at_least=at_least)
    items = ranked[: q.top_k]
    for it in items:
        it.in_context = it.event.id in ctx.included
        newer = sig[it.event.id].superseded_by if it.event.id in sig else None
        if newer is not None:  # the response says so too: a later statement replaced this one's claim
            it.stages["superseded_by"] = {"id": newer, "occurred_at": known[newer].occurred_at.isoformat()
                                          if newer in known else None}
    context_items = sorted(((known[pk], ctx.reasons[pk]) for pk in ctx.included),
                           key=lambda x: (x[0].occurred_at, x[0].id))
    return QueryOutput(items, ctx.text, ctx.tokens, {}, context_items, ctx.left_out, summaries=ctx.summaries)


def _layer_dates(conn: Connection, q: QueryInput, known: dict[int, EventRow],
                 sig: dict[int, EventSignalsView]) -> dict[int, tuple[TimeMention, ...]]:
    """Event pk -> its turn's time mentions as the graph layer stored them (`graph_rows.turn_mentions`), for
    the held events it has read with this version; none under a metadata filter."""
    if q.scope.where is not None:
        return {}
    missing = [pk for pk in known if pk not in sig]
    views = sig | signals_for(conn, q.scope.tenant_id, missing) if missing else sig
    out = {}
    for pk, e in known.items():
        v = views.get(pk)
        if v is not None and (ms := turn_mentions(v.graph_version, e.content, v.time_mentions)) is not None:
            out[pk] = ms
    return out


def _named_before(conn: Connection, q: QueryInput, events: Iterable[EventRow]) -> dict[int, tuple[date, ...]]:
    """Event pk -> the days its conversation named with their month before it, as the graph layer resolved them,
    for the held turns with a bare day number ("can we still do the 20th?" weeks after "the 20th of April"); under
    a metadata filter, named in the turns it lets through only."""
    wanting: dict[str, list[EventRow]] = {}
    for e in events:
        if may_take_up(e.content):
            wanting.setdefault(e.conversation_id, []).append(e)
    out: dict[int, tuple[date, ...]] = {}
    for conv, evs in wanting.items():
        history = [(at, [TimeMention(**m) for m in ms if m.get("granularity") == "day"])
                   for at, meta, ms in time_mentions_before(conn, q.scope.tenant_id, conv, max(e.occurred_at for e in evs))
                   if metadata_matches(meta, q.scope.where)]
        named = remembered_before(history, [e.occurred_at for e in evs])
        out |= {e.id: named[e.occurred_at] for e in evs}
    return out


def _exchanges(conn: Connection, q: QueryInput, ranked: list[RankedItem], depth: int) -> list[RankedItem]:
    """A question asking for an account: the best turns with the turn each answers and its reply (one
    statement reads them), inside the request's filters."""
    around = neighbours(conn, q.scope.tenant_id, [r.event.id for r in ranked[:depth]], 1)
    return exchange_order(ranked, around, depth=depth, make=lambda e, score: RankedItem(e, score),
                          visible=lambda e: in_scope(e, q.scope))


def _summaries(conn: Connection, tenant_id: int, pks: list[int],
               sig: dict[int, EventSignalsView]) -> dict[int, SummaryItem]:
    """Event pk -> its episode's summary (current consolidation), for those that have a non-empty one."""
    episode = {pk: (sig[pk].conversation_id, sig[pk].episode_index) for pk in pks
               if pk in sig and sig[pk].episode_index is not None}
    found = episode_summaries(conn, tenant_id, set(episode.values()))
    out = {}
    for pk, key in episode.items():
        if key in found and found[key][2]:
            start, end, summary = found[key]
            out[pk] = SummaryItem(key[1], key[0], summary, start, end)
    return out


def _ctx_item(e: EventRow, sig: dict[int, EventSignalsView] | None = None,
              known: dict[int, EventRow] | None = None, said: dict | None = None,
              dates: dict[int, tuple[TimeMention, ...]] | None = None) -> ContextItem:
    """The event as the context shows it, with the later event that superseded it (from the layers)
    and its dates: as the layers read them (`dates`), else what the turns before it settled
    (`said`, from `timeturns.discourses`)."""
    newer = sig[e.id].superseded_by if sig and e.id in sig else None
    at = known[newer].occurred_at if newer is not None and known and newer in known else None
    return ContextItem(e.id, e.speaker, e.content, e.occurred_at, newer, at, (said or {}).get(e.id, NO_DISCOURSE),
                       (dates or {}).get(e.id))


# ---------------------------------------------------------------- one request, as the API runs it


def query_for(conn: Connection, tenant_id: int, q: QueryInput, overrides: dict[str, Any] | None,
              dispatcher: Dispatcher | None = None) -> QueryOutput:
    """The pipeline for one request (POST /v1/query, /v1/answer): the server's recipe with the
    request's overrides, the installed models, then the retrieval recorded as rehearsal (heat)."""
    from app.adapters.embedder import get_embedder
    from app.adapters.llm import QUERY_WAIT_S, llm_from_settings
    from app.settings import get_settings

    s = get_settings()
    recipe = Recipe.from_settings(s).with_overrides(overrides)
    out = run_query(conn, q, recipe, get_embedder(), reranker=installed_reranker() if recipe.rerank else None,
                    llm=llm_from_settings(s, max_wait_s=QUERY_WAIT_S))
    started = time.perf_counter()
    record_retrieval(conn, tenant_id, [e.id for e, _ in out.context_items], dispatcher)
    out.timings["heat"] = round((time.perf_counter() - started) * 1000.0, 3)
    return out


def record_retrieval(conn: Connection, tenant_id: int, pks: list[int], dispatcher: Dispatcher | None = None) -> None:
    """Retrieval is rehearsal: what was handed out gets warmer (Cortex heat). Queued for a worker
    by default; written here when so set, or when there is no broker to take it (nothing is dropped)."""
    from app.domain.layer_registry import HEAT_BUMP
    from app.services.heat import bump_access
    from app.settings import get_settings

    mode = get_settings().heat_on_query
    if mode == "off" or not pks:
        return
    if mode == "queue" and dispatcher is not None:
        if dispatcher.publish(HEAT_BUMP, [tenant_id, pks, datetime.now(timezone.utc).isoformat()]):
            return
    bump_access(conn, tenant_id, pks)


def installed_fusion_ranker() -> FusionModel | None:
    """The shipped learned-fusion model, or None when it is missing (weighted RRF then ranks)."""
    from app.adapters.fusion_ranker import installed_fusion_ranker as installed

    return installed()


def installed_abstain_model():  # noqa: ANN201
    """The shipped abstention model (`app.domain.retrieval.abstain.AbstainModel`), or None."""
    from app.adapters.abstain_model import installed_abstain_model as installed

    return installed()


def installed_reranker():  # noqa: ANN201
    """The installed cross-encoder, or None when there is none (the stage is then skipped)."""
    from app.adapters.reranker import RerankerUnavailable, get_reranker

    try:
        return get_reranker()
    except (RerankerUnavailable, FileNotFoundError, OSError):
        return None
