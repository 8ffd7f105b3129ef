"""The consolidation layer's build (L4: episodes, the assertion timeline, contradictions), in full and
incrementally (#18 item 4).

Full (`build_consolidation`, and `palimpsest rebuild`): the whole log through the episode fold
(`app.domain.layers.episodes.EpisodeFold`), every event's assertions (`extract_assertions`) through
the timeline fold (`LiveTimeline`); the slice and every event's consolidation signals are rewritten,
and the folds' state is saved (`layer_state`).

Incremental (`extend_consolidation`): a batch after the watermark extends the saved state. Only the
batch is extracted (plus the few events holding the latest plans, which a cancellation naming no
plan reads again); the timeline fold says which earlier assertions the batch superseded, and only
those rows change; the episode fold is given the batch after its open tail (the events since the
last episode whose end is final), so only the open episodes are rewritten. Anything else (no state,
an event at or before the watermark, a correction, an erasure, a version change, a fold without
vectors, a batch event without a vector) recomputes in full. The two paths give the same rows by
construction: the full build is the same folds over the whole log.
"""
from __future__ import annotations

import numpy as np
from sqlalchemy import Connection

from app.adapters.llm import llm_from_settings
from app.adapters.span_model import installed_span_model
from app.domain.layers import consolidation, timeparse
from app.domain.layers.assertion_spans import SpanModel
from app.domain.layers.assertions import Assertion
from app.domain.layers.consolidation import Contradiction, LiveTimeline, TimelineStep, track_plans
from app.domain.layers.episodes import Episode, EpisodeFold, fold_all
from app.domain.layers.events import LayerEvent
from app.domain.layers.extractors import assertion_extractor_version, extract_assertion_set, extract_assertions
from app.services.builds import new_rows, save_state
from app.services.layer_job import Context, ConversationLayer
from app.settings import get_settings
from app.storage import episodes as episode_store
from app.storage import layer_state
from app.storage import signals as signal_store
from app.storage import vectors as vector_store

LAYER = "consolidate"


def consolidation_version() -> str:
    """The episode and timeline rules, the assertion extractor (the LLM's when one is configured) and the time
    resolver that dates the claims ("I start on June 12"): a change in any of them rebuilds the layer."""
    llm = bool(get_settings().llm_base_url)
    return f"{consolidation.LAYER_VERSION}+{assertion_extractor_version(llm, span_model())}+{timeparse.LAYER_VERSION}"


def span_model() -> SpanModel | None:
    """The learned reader of names the rules' claims are joined with: the shipped one unless the setting
    switches it off (None then, and with an LLM configured: its claims are the LLM's)."""
    settings = get_settings()
    if not settings.span_claims or settings.llm_base_url:
        return None
    return installed_span_model()


def _assertions(events: list[LayerEvent], context: list[LayerEvent] = ()  # type: ignore[assignment]
                ) -> tuple[list[Assertion], dict]:
    """The assertions of `events` (`extract_assertions`). `context`: earlier events holding the latest
    plans (and the open tail): the rules read them again for their cross-event state (a cancellation
    naming no plan takes the latest plan) and their own assertions are dropped; the LLM reads them
    as read-only context. Also the LLM extractor's counts (batches, those that fell back to the rules
    and why, items dropped by reason), which the layer run's stats keep as `llm_assertions`; empty
    for the rules."""
    llm = llm_from_settings(get_settings())
    if llm is not None:
        found = extract_assertion_set(events, llm, context=context)
        return found.assertions, found.stats
    ids = {e.id for e in context}
    return [a for a in extract_assertions([*context, *events], spans=span_model()) if a.event_id not in ids], {}


def _episode_rows(episodes: list[Episode]) -> list[dict]:
    return [{"idx": ep.index, "start_at": ep.start, "end_at": ep.end, "speakers": list(ep.speakers),
             "boundary": ep.boundary, "summary": ep.summary, "event_pks": [int(i) for i in ep.event_ids],
             "summary_event_pks": [int(i) for i in ep.summary_event_ids]} for ep in episodes]


def _assertion_rows(assertions: list[Assertion], superseded: dict[str, str]) -> list[dict]:
    return [{"key": a.id, "event_pk": int(a.event_id), "entity": a.entity, "attribute": a.attribute,
             "value": a.value, "value_key": a.value_key, "surface": a.surface, "asserted_at": a.time,
             "negated": a.negated, "superseded_by_key": superseded.get(a.id), "valid_from": a.valid_from}
            for a in assertions]


def _contradiction_rows(contradictions: list[Contradiction]) -> list[dict]:
    return [{"key": c.id, "entity": c.entity, "attribute": c.attribute, "earlier_event_pk": int(c.earlier_event_id),
             "later_event_pk": int(c.later_event_id), "earlier_value": c.earlier_value, "later_value": c.later_value,
             "earlier_at": c.earlier_time, "later_at": c.later_time, "kind": c.kind} for c in contradictions]


def _replaced_by(step: TimelineStep) -> dict[int, int]:
    """event pk -> the latest other event (by time, then pk) whose assertion superseded one of its own."""
    latest: dict[int, tuple] = {}
    for old, new in step.superseded:
        pk, later = int(old.event_id), int(new.event_id)
        if later != pk:
            cand = (new.time, later)
            latest[pk] = max(cand, latest.get(pk, cand))
    return {pk: later for pk, (_, later) in latest.items()}


def _stats(run: str, log_events: int, episodes: int, step: TimelineStep, new_assertions: int, size: int,
           with_vectors: bool, llm_stats: dict | None = None) -> dict:
    out = {"run": run, "log_events": log_events, "episodes": episodes, "assertions": new_assertions,
           "superseded": len(step.superseded), "contradictions": len(step.contradictions), "state_bytes": size,
           "with_vectors": with_vectors}
    if llm_stats:  # the LLM extractor's counts: a batch that fell back to the rules is said, never hidden
        out["llm_assertions"] = llm_stats
    return out


def _state(fold: EpisodeFold, live: LiveTimeline, plans: dict) -> dict:
    return {"episodes": fold.to_dict(), "timeline": live.to_dict(), "plans": plans}


def build_consolidation(conn: Connection, ctx: Context) -> dict:
    events, matrix = ctx.events, ctx.matrix()
    fold = EpisodeFold(with_vectors=matrix is not None and len(events) > 0)
    episodes = fold_all(fold, ((e, matrix[i] if matrix is not None else None) for i, e in enumerate(events)))
    episodes += fold.open_episodes()
    assertions, llm_stats = _assertions(events)
    live = LiveTimeline()
    step = live.add(assertions)
    superseded = {old.id: new.id for old, new in step.superseded}
    ordered = sorted(assertions, key=lambda a: (a.time, a.seq, a.id))
    episode_store.replace_consolidation(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, _episode_rows(episodes),
                                        _assertion_rows(ordered, superseded), _contradiction_rows(step.contradictions))
    episode_of = {int(eid): ep.index for ep in episodes for eid in ep.event_ids}
    replaced_by = _replaced_by(step)
    signal_store.set_consolidation_signals(conn, ctx.tenant_id, ctx.conversation_id, [
        {"event_pk": r.id, "consolidation_version": ctx.version, "episode_index": episode_of.get(r.id),
         "superseded_by_event_pk": replaced_by.get(r.id)}
        for r in ctx.rows
    ])
    size = save_state(conn, ctx, LAYER, len(ctx.rows), ctx.rows[-1] if ctx.rows else None, None, None,
                      _state(fold, live, track_plans(assertions, {})))
    out = _stats("full", len(ctx.rows), len(episodes), step, len(assertions), size, fold.with_vectors, llm_stats)
    out.update({"episodes_by_gap": sum(e.boundary in ("start", "gap") for e in episodes),
                "episodes_by_topic": sum(e.boundary == "topic" for e in episodes)})
    return out


def extend_consolidation(conn: Connection, ctx: Context) -> dict | None:
    """The batch folded into the stored episode and timeline folds (see the module's docstring);
    None when it needs a full run."""
    stored = layer_state.load(conn, ctx.tenant_id, ctx.conversation_id, LAYER, ctx.version)
    new = new_rows(conn, ctx, stored)
    if new is None or stored is None:
        return None
    data = stored.data
    if not data["episodes"]["with_vectors"] or data["episodes"]["n"] != stored.events:
        return None
    model = get_settings().embedding_model_name
    tail_ids = [int(i) for i, _ in data["episodes"]["tail"]]
    plan_ref = sorted({(int(seq), int(eid)) for eid, seq in data["plans"].values()})
    vecs = vector_store.vectors_for(conn, tail_ids + [r.id for r in new], model)
    if any(r.id not in vecs for r in new):
        return None
    known = {r.id: r for r in layer_state.admitted_rows(conn, ctx.tenant_id, ctx.conversation_id,
                                                          tail_ids + [pk for _, pk in plan_ref])}

    def tail(ids: list[str]) -> tuple[list[LayerEvent], list[np.ndarray]]:
        seqs = dict((int(i), s) for i, s in data["episodes"]["tail"])
        return ([LayerEvent.of(known[int(i)], seq=seqs[int(i)]) for i in ids if int(i) in known],
                [vecs[int(i)] for i in ids if int(i) in vecs])

    try:
        fold = EpisodeFold.from_dict(data["episodes"], tail)
    except (KeyError, ValueError):
        return None
    if any(pk not in known for _, pk in plan_ref):
        return None
    reopened = fold.closed
    # read again before the batch: the events of the latest plans, and the last few events folded
    context = {e.id: e for e in [*[LayerEvent.of(known[pk], seq=seq) for seq, pk in plan_ref], *fold.tail[-10:]]}
    events = [LayerEvent.of(r, seq=stored.events + i) for i, r in enumerate(new)]
    episodes = fold_all(fold, ((e, vecs[int(e.id)]) for e in events)) + fold.open_episodes()
    assertions, llm_stats = _assertions(events, sorted(context.values(), key=lambda e: (e.occurred_at, e.seq)))
    live = LiveTimeline.from_dict(data["timeline"])
    step = live.add(assertions)
    superseded = {old.id: new_.id for old, new_ in step.superseded}
    mine = {a.id for a in assertions}
    ordered = sorted(assertions, key=lambda a: (a.time, a.seq, a.id))
    episode_store.extend_consolidation(
        conn, ctx.tenant_id, ctx.conversation_id, ctx.version, reopened, _episode_rows(episodes),
        _assertion_rows(ordered, superseded), _contradiction_rows(step.contradictions),
        {k: v for k, v in superseded.items() if k not in mine})

    new_pks = {r.id for r in new}
    episode_of = {int(eid): ep.index for ep in episodes for eid in ep.event_ids}
    replaced_by = _replaced_by(step)
    signal_store.add_consolidation_signals(conn, ctx.tenant_id, ctx.conversation_id, [
        {"event_pk": r.id, "consolidation_version": ctx.version, "episode_index": episode_of.get(r.id),
         "superseded_by_event_pk": replaced_by.get(r.id)} for r in new])
    signal_store.set_signal_values(conn, "episode_index", {pk: i for pk, i in episode_of.items() if pk not in new_pks})
    signal_store.set_signal_values(conn, "superseded_by_event_pk",
                                   {pk: by for pk, by in replaced_by.items() if pk not in new_pks})
    size = save_state(conn, ctx, LAYER, stored.events + len(new), new[-1] if new else None, stored.last_at,
                      stored.last_pk, _state(fold, live, track_plans(assertions, dict(data["plans"]))))
    return _stats("incremental", stored.events + len(new), reopened + len(episodes), step,
                  len(assertions), size, True, llm_stats)


CONSOLIDATE = ConversationLayer(LAYER, consolidation_version, build_consolidation, needs_vectors=True,
                                extend=extend_consolidation)
