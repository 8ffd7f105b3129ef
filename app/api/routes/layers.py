"""What the ingestion layers derived from a conversation: episodes, the assertion timeline with
contradictions, the memory graph around named entities, and speaker profiles.

Each layer is read at the version computed last for the conversation (a rebuild with a new version
swaps in when it finishes), or at `?layer_version=`. An unknown conversation answers 404; a known
one whose layer has not run yet answers 200 with empty lists and `layer_version: null`.

Every list is cursor-paged (`limit`, `cursor`, `next_cursor`: `app.api.paging`); the pages of one
listing read the layer version its first page read.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

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
from app.api import paging
from app.api.error_models import ROUTE_ERRORS
from app.api.schemas import NO_NUL
from app.services import conversations as reads
from app.storage.tenants import Principal

router = APIRouter(prefix="/v1/conversations", tags=["layers"], responses=ROUTE_ERRORS)

VERSION_Q = Query(None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:+/\-]+$",
                  description="Read this layer version instead of the one computed last.")


def _not_found(conversation_id: str) -> HTTPException:
    return HTTPException(404, f"conversation {conversation_id!r} not found")


def _position(cursor: str | None, who: Principal, listing: str, bound: Any, read: Any) -> Any:
    """The cursor's position through `read` (a parser); any surprise in it is the cursor's 422."""
    pos = paging.decode(cursor, who.tenant_id, listing, bound)
    if pos is None:
        return None
    try:
        return read(pos)
    except (KeyError, TypeError, ValueError, IndexError):
        raise paging.invalid("malformed cursor") from None


def _version_offset(pos: Any) -> tuple[str, int]:
    version, offset = pos["v"], pos["o"]
    if not isinstance(version, str) or not isinstance(offset, int) or offset < 0:
        raise ValueError("cursor")
    return version, offset


@router.get("/{conversation_id}/episodes", response_model=EpisodesOut,
            summary="Episodes: 6-hour gaps and topic shifts, each with an extractive summary (cursor-paged)")
def episodes(conversation_id: str, layer_version: str | None = VERSION_Q,
             limit: int = paging.limit_query(100, what="episodes"), cursor: str | None = paging.cursor_query(),
             _q: None = only_query_params("layer_version", "limit", "cursor"),
             who: Principal = Depends(reader), conn: Connection = DB) -> EpisodesOut:
    bound = [conversation_id, layer_version]
    pos = _position(cursor, who, "episodes", bound, lambda p: _version_offset({"v": p["v"], "o": p["i"]}))
    try:
        version, eps, more = reads.episodes_paged(conn, who.tenant_id, conversation_id,
                                                  pos[0] if pos else layer_version, pos[1] if pos else None, limit)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    nxt = paging.encode(who.tenant_id, "episodes", bound, {"v": version, "i": eps[-1].index}) if more else None
    return EpisodesOut(conversation_id=conversation_id, layer_version=version, next_cursor=nxt, episodes=[
        EpisodeOut(index=e.index, start=e.start, end=e.end, speakers=e.speakers, boundary=e.boundary,
                   summary=e.summary, event_ids=e.event_pks, summary_event_ids=e.summary_event_pks)
        for e in eps
    ])


def _timeline_position(pos: Any) -> tuple[str, Any, Any]:
    """(version, assertions' position, contradictions' position); a list's position is None before
    its first row, 0 once it has ended, else the last row's sort key."""
    version, a, c = pos["v"], pos["a"], pos["c"]
    if not isinstance(version, str):
        raise ValueError("cursor")
    if isinstance(a, list):
        a = (datetime.fromisoformat(a[0]), int(a[1]), str(a[2]))
    elif a not in (None, 0):
        raise ValueError("cursor")
    if isinstance(c, list):
        c = (datetime.fromisoformat(c[0]), str(c[1]))
    elif c not in (None, 0):
        raise ValueError("cursor")
    return version, a, c


@router.get("/{conversation_id}/timeline", response_model=TimelineOut,
            summary="Assertions in time order with superseded-by links, and contradictions (cursor-paged)")
def timeline(
    conversation_id: str,
    entity: str | None = Query(None, min_length=1, max_length=256, pattern=NO_NUL,
                               description="Only this entity (case-insensitive), e.g. `Ana`."),
    attribute: str | None = Query(None, min_length=1, max_length=128, pattern=NO_NUL,
                                  description="Only this attribute, e.g. `lives_in`."),
    layer_version: str | None = VERSION_Q,
    limit: int = paging.limit_query(500, what="assertions and at most this many contradictions"),
    cursor: str | None = paging.cursor_query(),
    _q: None = only_query_params("entity", "attribute", "layer_version", "limit", "cursor"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> TimelineOut:
    bound = [conversation_id, layer_version, entity, attribute]
    pos = _position(cursor, who, "timeline", bound, _timeline_position)
    version, a_after, c_after = pos if pos else (layer_version, None, None)
    try:
        version, assertions, a_more, contradictions, c_more = reads.timeline_paged(
            conn, who.tenant_id, conversation_id, version, after_assertion=a_after or None,
            after_contradiction=c_after or None, assertions_done=a_after == 0, contradictions_done=c_after == 0,
            limit=limit, entity=entity, attribute=attribute)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    nxt = None
    if a_more or c_more:
        a_pos = [assertions[-1].time.isoformat(), assertions[-1].event_pk, assertions[-1].key] if a_more else 0
        c_pos = [contradictions[-1].later_at.isoformat(), contradictions[-1].key] if c_more else 0
        nxt = paging.encode(who.tenant_id, "timeline", bound, {"v": version, "a": a_pos, "c": c_pos})
    return TimelineOut(
        conversation_id=conversation_id, layer_version=version, next_cursor=nxt,
        assertions=[AssertionOut(id=a.key, event_id=a.event_pk, entity=a.entity, attribute=a.attribute,
                                 value=a.value, time=a.time, negated=a.negated, superseded_by=a.superseded_by,
                                 valid_from=a.valid_from)
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
    limit: int = Query(40, ge=1, le=500, description="At most this many nodes on this page (500 at most)."),
    depth: int = Query(2, ge=0, le=4, description="Hops from the seeds."),
    layer_version: str | None = VERSION_Q,
    cursor: str | None = paging.cursor_query(
        f"Opaque: `next_cursor` of the previous page, for the walk's next nodes (a walk is paged over its first "
        f"{reads.GRAPH_WALK_MAX} nodes). Omit for the first page."),
    _q: None = only_query_params("entity", "query", "limit", "depth", "layer_version", "cursor"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> GraphOut:
    bound = [conversation_id, layer_version, entity, query, depth]
    pos = _position(cursor, who, "graph", bound, _version_offset)
    try:
        view, stats, more = reads.graph_paged(conn, who.tenant_id, conversation_id, entity, limit, query=query,
                                              depth=depth, layer_version=pos[0] if pos else layer_version,
                                              offset=pos[1] if pos else 0)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    nxt = paging.encode(who.tenant_id, "graph", bound,
                        {"v": view.layer_version, "o": stats["offset"] + len(view.nodes)}) if more else None
    return GraphOut(
        conversation_id=conversation_id, layer_version=view.layer_version, next_cursor=nxt,
        nodes=[GraphNodeOut(id=n["key"], kind=n["kind"], label=n["label"], event_id=n["event_pk"], data=n["data"] or {})
               for n in view.nodes],
        edges=[GraphEdgeOut(src=e["src"], dst=e["dst"], type=e["type"], weight=e["weight"], meta=e["meta"] or {})
               for e in view.edges],
        stats=stats,
    )


@router.get("/{conversation_id}/speakers", response_model=SpeakersOut,
            summary="Speaker engrams: per speaker a profile and (on request) a 256-d style vector (cursor-paged)")
def speakers(
    conversation_id: str,
    include_vectors: bool = Query(False, description="Also return each speaker's style vector."),
    layer_version: str | None = VERSION_Q,
    limit: int = paging.limit_query(100, what="speakers"),
    cursor: str | None = paging.cursor_query(),
    _q: None = only_query_params("include_vectors", "layer_version", "limit", "cursor"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> SpeakersOut:
    bound = [conversation_id, layer_version]
    pos = _position(cursor, who, "speakers", bound, _version_offset)
    offset = pos[1] if pos else 0
    try:
        version, profiles, more = reads.profiles_paged(conn, who.tenant_id, conversation_id,
                                                       pos[0] if pos else layer_version, offset, limit,
                                                       include_vectors=include_vectors)
    except reads.UnknownConversation:
        raise _not_found(conversation_id) from None
    nxt = paging.encode(who.tenant_id, "speakers", bound, {"v": version, "o": offset + len(profiles)}) if more else None
    out = []
    for p in profiles:
        out.append(SpeakerProfileOut(
            speaker=p["speaker"], message_count=p["message_count"], first_seen=p["first_seen"],
            last_seen=p["last_seen"], topics=[TopicOut(**t) for t in p.get("topics", [])],
            addresses=p.get("addresses", {}), mentions=p.get("mentions", {}), style=p.get("style", {}),
            attributes=p.get("attributes", {}), layer_version=version or p.get("layer_version", ""),
            style_vector=p.get("style_vector"),
        ))
    return SpeakersOut(conversation_id=conversation_id, layer_version=version, speakers=out, next_cursor=nxt)
