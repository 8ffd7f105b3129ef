"""Job: L4 consolidation per conversation -- episodes (6-hour gaps and topic shifts, with extractive
summaries), the timeline of assertions with superseded-by links, and contradiction records.

Reads the stored event vectors (the embed layer has finished for the conversation before this runs;
see workers/registry.DEPENDS); without them episodes split on time gaps only.
"""
from __future__ import annotations

from app.layers import assertions as assertion_rules
from app.layers import consolidation
from app.storage import layers as store
from workers.celery_app import celery
from workers.layerbase import ConversationLayer, Context, make_task

LAYER = "consolidate"


def version() -> str:
    return f"{consolidation.LAYER_VERSION}+{assertion_rules.LAYER_VERSION}"


def build(conn, ctx: Context) -> dict:  # noqa: ANN001
    result = consolidation.consolidate(ctx.events, ctx.matrix())
    episodes = [
        {"idx": ep.index, "start_at": ep.start, "end_at": ep.end, "speakers": list(ep.speakers),
         "boundary": ep.boundary, "summary": ep.summary, "event_pks": [int(i) for i in ep.event_ids],
         "summary_event_pks": [int(i) for i in ep.summary_event_ids]}
        for ep in result.episodes
    ]
    event_of = {a.id: int(a.event_id) for a in result.timeline}
    time_of = {a.id: a.time for a in result.timeline}
    assertions = [
        {"key": a.id, "event_pk": int(a.event_id), "entity": a.entity, "attribute": a.attribute, "value": a.value,
         "value_key": a.value_key, "surface": a.surface, "asserted_at": a.time, "negated": a.negated,
         "superseded_by_key": a.superseded_by}
        for a in result.timeline
    ]
    contradictions = [
        {"key": c.id, "entity": c.entity, "attribute": c.attribute, "earlier_event_pk": int(c.earlier_event_id),
         "later_event_pk": int(c.later_event_id), "earlier_value": c.earlier_value, "later_value": c.later_value,
         "earlier_at": c.earlier_time, "later_at": c.later_time, "kind": c.kind}
        for c in result.contradictions
    ]
    store.replace_consolidation(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, episodes, assertions,
                                contradictions)
    # per event: its episode, and the latest event whose assertion replaced one of its own
    episode_of = {int(eid): ep.index for ep in result.episodes for eid in ep.event_ids}
    latest: dict[int, tuple] = {}
    for a in result.timeline:
        pk = int(a.event_id)
        if a.superseded_by in event_of and event_of[a.superseded_by] != pk:
            cand = (time_of[a.superseded_by], event_of[a.superseded_by])
            latest[pk] = max(cand, latest.get(pk, cand))
    replaced_by = {pk: later for pk, (_, later) in latest.items()}
    store.set_consolidation_signals(conn, ctx.tenant_id, ctx.conversation_id, [
        {"event_pk": r.id, "consolidation_version": ctx.version, "episode_index": episode_of.get(r.id),
         "superseded_by_event_pk": replaced_by.get(r.id)}
        for r in ctx.rows
    ])
    return {**result.stats, "with_vectors": ctx.matrix() is not None}


JOB = ConversationLayer(LAYER, version, build, needs_vectors=True)
consolidate_events = make_task(celery, JOB)
