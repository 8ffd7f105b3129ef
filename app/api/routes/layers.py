"""What the ingestion layers derived from a conversation: episodes, the assertion timeline with
contradictions, the memory graph around named entities, and speaker profiles.

Each layer is read at the version computed last for the conversation (a rebuild with a new version
swaps in when it finishes), or at `?layer_version=`. An unknown conversation answers 404; a known
one whose layer has not run yet answers 200 with empty lists and `layer_version: null`.
"""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Query
from sqlalchemy import Connection

from app.api.deps import DB, only_query_params, reader
from app.api.layer_schemas import (
    AssertionOut,
    ContradictionOut,
    EpisodeOut,
    EpisodesOut,
    GraphEdgeOut,
    GraphNodeOut,
    GraphOut,
    SpeakerProfileOut,
    SpeakersOut,
    TimelineOut,
    TopicOut,
)
from app.api.schemas import NO_NUL, ROUTE_ERRORS
from app.services import conversations as reads
from app.storage.tenants import Principal

router = APIRouter(prefix="/v1/conversations", tags=["layers"], responses=ROUTE_ERRORS)

VERSION_Q = Query(None, min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_.:+/\-]+$",
                  description="Read this layer version instead of the one computed last.")


def _not_found(conversation_id: str) -> HTTPException:
    return HTTPException(404, f"conversation {conversation_id!r} not found")


@router.get("/{conversation_id}/episodes", response_model=EpisodesOut,
            summary="Episodes: 6-hour gaps and topic shifts, each with an extractive summary")
def episodes(conversation_id: str, layer_version: str | None = VERSION_Q, _q: None = only_query_params("layer_version"),
             who: Principal = Depends(reader), conn: Connection = DB) -> EpisodesOut:
    try:
        version, eps = reads.episodes(conn, who.tenant_id, conversation_id, layer_version)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    return EpisodesOut(conversation_id=conversation_id, layer_version=version, episodes=[
        EpisodeOut(index=e.index, start=e.start, end=e.end, speakers=e.speakers, boundary=e.boundary,
                   summary=e.summary, event_ids=e.event_pks, summary_event_ids=e.summary_event_pks)
        for e in eps
    ])


@router.get("/{conversation_id}/timeline", response_model=TimelineOut,
            summary="Assertions in time order with superseded-by links, and contradictions")
def timeline(
    conversation_id: str,
    entity: str | None = Query(None, min_length=1, max_length=256, pattern=NO_NUL,
                               description="Only this entity (case-insensitive), e.g. `Ana`."),
    attribute: str | None = Query(None, min_length=1, max_length=128, pattern=NO_NUL,
                                  description="Only this attribute, e.g. `lives_in`."),
    layer_version: str | None = VERSION_Q,
    _q: None = only_query_params("entity", "attribute", "layer_version"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> TimelineOut:
    try:
        version, assertions, contradictions = reads.timeline(conn, who.tenant_id, conversation_id, layer_version,
                                                             entity=entity, attribute=attribute)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    return TimelineOut(
        conversation_id=conversation_id, layer_version=version,
        assertions=[AssertionOut(id=a.key, event_id=a.event_pk, entity=a.entity, attribute=a.attribute,
                                 value=a.value, time=a.time, negated=a.negated, superseded_by=a.superseded_by)
                    for a in assertions],
        contradictions=[ContradictionOut(id=c.key, entity=c.entity, attribute=c.attribute, kind=c.kind,
                                         earlier_event_id=c.earlier_event_pk, later_event_id=c.later_event_pk,
                                         earlier_value=c.earlier_value, later_value=c.later_value,
                                         earlier_time=c.earlier_at, later_time=c.later_at)
                        for c in contradictions],
    )


@router.get("/{conversation_id}/graph", response_model=GraphOut,
            summary="The memory graph around an entity, or around the entities a question names")
def graph(
    conversation_id: str,
    entity: str | None = Query(None, min_length=1, max_length=256, pattern=NO_NUL,
                               description="Seed entity by name or alias, e.g. `Ana`."),
    query: str | None = Query(None, min_length=1, max_length=4000, pattern=NO_NUL,
                              description="Seed with every entity this text names, e.g. a question."),
    limit: int = Query(40, ge=1, le=500, description="At most this many nodes."),
    depth: int = Query(2, ge=0, le=4, description="Hops from the seeds."),
    layer_version: str | None = VERSION_Q,
    _q: None = only_query_params("entity", "query", "limit", "depth", "layer_version"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> GraphOut:
    try:
        view, stats = reads.graph_view(conn, who.tenant_id, conversation_id, entity, limit, query=query, depth=depth,
                                       layer_version=layer_version)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    return GraphOut(
        conversation_id=conversation_id, layer_version=view.layer_version,
        nodes=[GraphNodeOut(id=n["key"], kind=n["kind"], label=n["label"], event_id=n["event_pk"], data=n["data"] or {})
               for n in view.nodes],
        edges=[GraphEdgeOut(src=e["src"], dst=e["dst"], type=e["type"], weight=e["weight"], meta=e["meta"] or {})
               for e in view.edges],
        stats=stats,
    )


@router.get("/{conversation_id}/speakers", response_model=SpeakersOut,
            summary="Speaker engrams: per speaker a profile and (on request) a 256-d style vector")
def speakers(
    conversation_id: str,
    include_vectors: bool = Query(False, description="Also return each speaker's style vector."),
    layer_version: str | None = VERSION_Q,
    _q: None = only_query_params("include_vectors", "layer_version"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> SpeakersOut:
    try:
        version, profiles = reads.profiles(conn, who.tenant_id, conversation_id, layer_version,
                                           include_vectors=include_vectors)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    out = []
    for p in profiles:
        out.append(SpeakerProfileOut(
            speaker=p["speaker"], message_count=p["message_count"], first_seen=p["first_seen"],
            last_seen=p["last_seen"], topics=[TopicOut(**t) for t in p.get("topics", [])],
            addresses=p.get("addresses", {}), mentions=p.get("mentions", {}), style=p.get("style", {}),
            attributes=p.get("attributes", {}), layer_version=version or p.get("layer_version", ""),
            style_vector=p.get("style_vector"),
        ))
    return SpeakersOut(conversation_id=conversation_id, layer_version=version, speakers=out)
