"""The query's in-memory steps, once every candidate is read: fusion with the evidence of which
signal found what, the reweight (True Memory eq. 4) and rerank over the fused list, the recency
list, the relevance the abstain decision reads, and the abstain decision itself.

Pure: events and their per-event signals come in as plain rows (anything with the attributes
named below), nothing here reads or writes. `RankedItem` is what the query hands back per
candidate: the event, its score, which signals found it and how each stage moved it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from app.domain.event import turn_text
from app.domain.filters import metadata_matches
from app.domain.recipe import Recipe
from app.domain.retrieval.abstain import AbstainModel, abstain_features, decide
from app.domain.retrieval.features import candidate_features, order_by_model, prior_boost
from app.domain.retrieval.fusion import settle_order, weighted_rrf
from app.domain.retrieval.intent import Intent
from app.domain.retrieval.rerank import RerankCandidate, max_relevance, rerank
from app.domain.retrieval.reweight import Candidate, ReweightConfig, newest, reweight
from app.domain.retrieval.separation import WEIGHT_OF_DENSE as SEPARATION_WEIGHT
from app.domain.retrieval.separation import addressee_role, asker_role, names_speaker

RECENCY_MIN_WEIGHT = 0.4  # profiles below this (general 0.2) do not add the recency list at all

Hits = list[tuple[int, float]]


class EventLike(Protocol):
    id: int
    conversation_id: str
    speaker: str
    role: str | None
    content: str
    occurred_at: datetime


class ScopeLike(Protocol):
    speakers: tuple[str, ...] | None
    start: datetime | None
    end: datetime | None


@dataclass
class RankedItem:
    event: Any  # the event row (EventLike)
    score: float
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    stages: dict[str, Any] = field(default_factory=dict)
    in_context: bool = False


def bounded_window(intent: Intent | None, max_days: float) -> tuple[datetime, datetime] | None:
    """The question's window when it is closed and narrow enough to mean "then" (not "before 2022")."""
    if intent is None or intent.time_window is None:
        return None
    start, end = intent.time_window
    if start is None or end is None or end <= start or (end - start).days > max_days:
        return None
    return start, end


def recency_list(candidates: Iterable[EventLike], limit: int) -> Hits:
    """The candidates the other signals found, newest first (score: days before the newest)."""
    order = sorted(candidates, key=lambda e: (e.occurred_at, e.id), reverse=True)[:limit]
    if not order:
        return []
    newest = order[0].occurred_at
    return [(e.id, -round((newest - e.occurred_at).total_seconds() / 86400.0, 4)) for e in order]


def fusion_weights(names: Iterable[str], profile: Mapping[str, float]) -> dict[str, float]:
    """Each signal's weight from the profile (1.0 when it names none); the separation list weighs
    0.8 of the dense one (True Memory: w_sep = 0.8 × w_dense)."""
    weights = {name: profile.get(name, 1.0) for name in names}
    if "separation" in weights:
        weights["separation"] = SEPARATION_WEIGHT * profile.get("dense", 1.0)
    return weights


def fuse(signals: Mapping[str, Hits], weights: dict[str, float], rrf_k: int, rows: Mapping[int, EventLike],
         scope: ScopeLike) -> list[RankedItem]:
    """Weighted RRF of the signals' lists, each item with the rank and score every signal gave it,
    only the events that pass the request's filters (`in_scope`): every signal searches inside them
    already (the graph's walk keeps to the conversation, then its hits are filtered before they are
    cut to its limit); this is the guard for a list that would not."""
    fused = weighted_rrf({name: [pk for pk, _ in hits] for name, hits in signals.items()}, weights, rrf_k)
    evidence: dict[int, dict[str, dict[str, float]]] = {}
    for name, hits in signals.items():
        for rank, (pk, score) in enumerate(hits, start=1):
            evidence.setdefault(pk, {})[name] = {"rank": rank, "score": round(score, 6)}
    return [RankedItem(rows[pk], score, evidence.get(pk, {}), {"fusion": {"rank": i + 1, "weights": weights}})
            for i, (pk, score) in enumerate(fused) if pk in rows and in_scope(rows[pk], scope)]


def reweight_config(recipe: Recipe) -> ReweightConfig:
    """The reweight's strengths and switches as the request's recipe sets them: read by the reweight
    (learned ranker off) and by the priors on top of the learned score alike."""
    return ReweightConfig(asker=recipe.asker, salience_floor=recipe.salience_floor, speaker_beta=recipe.speaker_beta,
                          asker_beta=recipe.asker_beta, addressee_beta=recipe.addressee_beta)


def learned_ranked(ranked: list[RankedItem], model: Any, *, query: str, intent: Intent | None,
                   signals: Mapping[str, Hits], signals_of: Mapping[int, Any], reference_time: datetime | None,
                   explain: int, priors: ReweightConfig | None = None) -> list[RankedItem]:
    """The fused candidates ordered by the learned model (`app.ports.FusionModel`) over their
    features (`app.domain.retrieval.features`), with the reweight's factors at `priors`' strengths on
    top when given; the first `explain` say which features decided."""
    x = candidate_features(ranked, signals, query=query, intent=intent, signals_of=signals_of,
                           reference_time=reference_time)
    return order_by_model(ranked, x, model.score(x), model.contributions, explain=explain,
                          priors=prior_boost(x, priors) if priors is not None else None)


def in_scope(e: EventLike, scope: ScopeLike) -> bool:
    if scope.speakers and e.speaker not in scope.speakers:
        return False
    if scope.start is not None and e.occurred_at < scope.start:
        return False
    if scope.end is not None and e.occurred_at > scope.end:
        return False
    # the metadata filter (`where`, canonical JSON) when the scope has one: jsonb `@>` semantics
    where = getattr(scope, "where", None)
    return where is None or metadata_matches(getattr(e, "metadata", None), where)


def reweight_ranked(ranked: list[RankedItem], intent: Intent, query: str, scope: ScopeLike, recipe: Recipe, *,
                    signals_of: Mapping[int, Any], events: Mapping[int, EventLike]) -> list[RankedItem]:
    """True Memory eq. 4 over the fused list, fed with what the layers wrote per event (`signals_of`:
    the dates an event talks about, its surprise σ, salience, and the newer assertion that
    superseded it). Only the head (`recipe.reweight_depth`) moves; the tail keeps its fused order below it. A
    knowledge-update question brings in the newer assertion from `events` when it was not retrieved."""
    head = ranked[: recipe.reweight_depth]  # only the head can move into the answer
    head_ids = {r.event.id for r in head}
    sig = {pk: signals_of[pk] for pk in head_ids if pk in signals_of}
    ku = intent.label == "knowledge_update"
    newer_rows: dict[int, EventLike] = {}
    if ku:
        missing = {s.superseded_by for s in sig.values() if s.superseded_by is not None} - head_ids
        newer_rows = {pk: events[pk] for pk in missing if pk in events and in_scope(events[pk], scope)}
    head_events = [r.event for r in head]
    speakers = {r.event.speaker for r in head if r.event.speaker}
    named = {sp for sp in speakers if names_speaker(query, sp)}
    out = reweight(
        [to_candidate(r.event, r.score, sig.get(r.event.id)) for r in head],
        time_window=intent.time_window,
        speaker_priors={sp: 1.0 for sp in named} or None,
        asker_turns=role_turns(asker_role(query), head_events) if recipe.asker else (),
        addressee_turns=role_turns(addressee_role(query), head_events) if recipe.asker else (),
        knowledge_update=ku,
        newer={pk: to_candidate(ev, 0.0, None) for pk, ev in newer_rows.items()},
        config=reweight_config(recipe),
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


def supersession_links(signals_of: Mapping[int, Any]) -> dict[int, int]:
    """Event id -> the id of the event whose claim superseded it, for the events `signals_of` knows."""
    return {i: s.superseded_by for i, s in signals_of.items() if getattr(s, "superseded_by", None) is not None}


def newest_in_chain(pk: int, signals_of: Mapping[int, Any], links: Mapping[int, int] | None = None) -> int | None:
    """The newest statement in `pk`'s supersession chain, as far as `signals_of` knows it (the walk
    is the reweight's, `reweight.newest`; `links`: `supersession_links(signals_of)`, when the caller
    has it); None when nothing superseded `pk`."""
    head = newest(pk, supersession_links(signals_of) if links is None else links)
    return None if head == pk else head


def current_first(ranked: list[RankedItem], *, signals_of: Mapping[int, Any], events: Mapping[int, EventLike],
                  scope: ScopeLike, depth: int) -> list[RankedItem]:
    """A question asking for a current value, after the learned ranker: the newest statement in a
    superseded candidate's chain goes just above it (from `events` when it was not retrieved and is
    in scope); the superseded candidate stays where it was, below it. Only the head (`depth`) moves;
    scores are lowered where needed so they stay in rank order."""
    by_id = {r.event.id: r for r in ranked}
    pos = {r.event.id: i for i, r in enumerate(ranked, start=1)}  # None below: brought in, not retrieved
    out: list[RankedItem] = []
    placed: set[int] = set()
    links = supersession_links(signals_of)
    for r in ranked[:depth]:
        if r.event.id in placed:
            continue
        head = newest_in_chain(r.event.id, signals_of, links)
        if head is not None and head not in placed:
            item = by_id.get(head)
            if item is None and head in events and in_scope(events[head], scope):
                item = RankedItem(events[head], r.score, {}, {})
            if item is not None:
                item.stages["current_first"] = {"supersedes": r.event.id, "rank_before": pos.get(head)}
                item.score = max(item.score, r.score)
                out.append(item)
                placed.add(head)
        out.append(r)
        placed.add(r.event.id)
    return settle_order(out, ranked, depth, placed)


def asker_turns(query: str, events: Sequence[EventLike]) -> set[int]:
    """A first-person question among turns of a user and another role: the user's own turns (f_asker)."""
    return role_turns(asker_role(query), events)


def role_turns(role: str | None, events: Sequence[EventLike]) -> set[int]:
    """The turns of `role` among turns of that role and another. Empty when `role` is None, or the
    events carry no roles, or all share one (nothing to prefer)."""
    roles = {e.role for e in events}
    if role is None or role not in roles or len(roles) < 2:
        return set()
    return {e.id for e in events if e.role == role}


def to_candidate(ev: EventLike, score: float, s: Any | None) -> Candidate:
    """An event (and its per-event signals, when it has any) as the reweight sees it."""
    if s is None:
        return Candidate(id=ev.id, score=score, occurred_at=ev.occurred_at, speaker=ev.speaker)
    dates = tuple((d, d + timedelta(days=1)) for d in s.resolved_dates)
    return Candidate(id=ev.id, score=score, occurred_at=ev.occurred_at, dates=dates, speaker=ev.speaker,
                     surprise=s.surprise, salience=s.salience, superseded_by=s.superseded_by)


def rerank_ranked(query: str, ranked: list[RankedItem], score: Callable[[str, Sequence[str]], Any], *,
                  top_n: int, alpha: float, intent: Intent | None) -> tuple[list[RankedItem], float | None]:
    """The cross-encoder (`score(query, passages) -> logits`) over the top `top_n`; the best probability.
    `intent` is not read (it chose the modality factor, removed: only events are ever reranked)."""
    del intent
    by_id = {r.event.id: r for r in ranked}
    results = rerank(
        query,
        [RerankCandidate(r.event.id, turn_text(r.event.speaker, r.event.content), r.score) for r in ranked],
        score,
        top_n=top_n,
        alpha=alpha,
    )
    out = []
    for res in results:
        item = by_id[res.id]
        if res.reranked:
            item.score = res.score
            item.stages["rerank"] = res.explain()
        out.append(item)
    return out, max_relevance(results)


def relevance(dense: Hits | None, ce_best: float | None) -> dict[str, float]:
    """The best dense cosine and the best cross-encoder probability (when each ran)."""
    out: dict[str, float] = {}
    if dense:
        out["dense"] = round(max(score for _, score in dense), 4)
    if ce_best is not None:
        out["rerank"] = round(ce_best, 4)
    return out


def should_abstain(query: str, signals: Mapping[str, Hits], texts: Mapping[int, str], ranked: Sequence[RankedItem],
                   ce_best: float | None, recipe: Recipe, model: AbstainModel | None
                   ) -> tuple[dict[str, float], bool]:
    """The response's `relevance` and `abstain` (`app.domain.retrieval.abstain`): abstain when nothing
    was found; else, with `recipe.abstain_learned` and a model, when the model's probability over the
    question's evidence (its features, all shown in `relevance` with `abstain_score`,
    `abstain_threshold` and `abstain_covered`: 1 when every word of the question is in the first ten
    items, which the model answers whatever its score) reaches its threshold; else when the best
    relevance is under its floor
    (the cross-encoder's probability when it ran, else the best dense cosine)."""
    rel = relevance(signals.get("dense"), ce_best)
    model = model if recipe.abstain_learned else None
    feats = None
    if model is not None and ranked:
        feats = abstain_features(query, signals, texts, [r.event.id for r in ranked], [r.score for r in ranked])
        rel |= feats.as_dict()
    d = decide(feats, model, found_any=bool(ranked), dense=rel.get("dense"), rerank=rel.get("rerank"),
               dense_floor=recipe.abstain_dense_floor, rerank_floor=recipe.abstain_rerank_floor)
    if d.rule in ("model", "covered"):
        rel |= {"abstain_score": round(float(d.score or 0.0), 4), "abstain_threshold": round(float(d.threshold or 0.0), 4),
                "abstain_covered": 1.0 if d.rule == "covered" else 0.0}
    return rel, d.abstain
