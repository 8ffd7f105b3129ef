"""A tenant's conversations: the list and search, and the background work's lag (forgetting: `erasure.py`)."""
from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BeforeValidator, Field, ValidationError
from sqlalchemy import Connection

from app.api import paging
from app.api.deps import DB, only_query_params, reader
from app.api.error_models import ROUTE_ERRORS
from app.api.schemas import (
    NO_NUL,
    NOT_BLANK,
    ConversationList,
    ConversationSearch,
    ConversationStatus,
    ConversationSummary,
    TimeRange,
)
from app.domain.filters import where_json
from app.services.conversations import conversations_page, indexing_status
from app.storage.candidates import Scope
from app.storage.tenants import Principal

router = APIRouter(prefix="/v1/conversations", tags=["conversations"], responses=ROUTE_ERRORS)


def _not_a_number(value: object) -> object:
    # a query string is text: "1700000000" would otherwise be read as a Unix time
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", value):
        raise ValueError("must be an ISO 8601 date-time, e.g. 2024-05-01T00:00:00Z")
    return value


IsoTime = Annotated[datetime, BeforeValidator(_not_a_number)]
_WHERE_Q = Query(None, min_length=2, max_length=16384, examples=['{"user": "u-42"}'],
                 description="A JSON object: only conversations with an event whose metadata contains it "
                 "(as `where` in /v1/query).")


@router.get("", response_model=ConversationList,
            summary="The tenant's conversations, most recently active first; filtered, cursor-paged",
            dependencies=[only_query_params("limit", "cursor", "speaker", "start", "end", "where", "text", "prefix")])
def list_conversations(
    limit: int = paging.limit_query(200, what="conversations"),
    cursor: str | None = paging.cursor_query(),
    speaker: list[Annotated[str, Field(min_length=1, max_length=256, pattern=NO_NUL)]] | None = Query(
        None, max_length=100, description="Only conversations in which this speaker said something (repeat for "
        "any of several)."),
    start: IsoTime | None = Query(None, description="Only conversations with an event at or after this time "
                                  "(ISO 8601)."),
    end: IsoTime | None = Query(None, description="Only conversations with an event at or before this time (ISO 8601)."),
    where: str | None = _WHERE_Q,
    text: str | None = Query(None, min_length=1, max_length=4000, pattern=NOT_BLANK,
                             description="Only conversations with an event saying these words (full text)."),
    prefix: str | None = Query(None, min_length=1, max_length=256, pattern=NO_NUL,
                               description="Only conversation ids starting with this."),
    who: Principal = Depends(reader), conn: Connection = DB,
) -> ConversationList:
    try:
        filters = ConversationSearch(where=_where_param(where), speakers=speaker, text=text, prefix=prefix,
                                     limit=limit, cursor=cursor,
                                     time_range=TimeRange(start=start, end=end) if start or end else None)
    except ValidationError as exc:
        raise HTTPException(422, detail=[{"field": _param(e["loc"]), "message": e["msg"], "type": e["type"]}
                                         for e in exc.errors()]) from None
    except OverflowError:  # a time at the edge of the calendar, with an offset that takes it past
        raise HTTPException(422, detail=[{"field": "start" if start else "end", "type": "datetime_range",
                                          "message": "time out of range"}]) from None
    return _conversations(filters, who, conn)


@router.post("/search", response_model=ConversationList,
             summary="Search the tenant's conversations: metadata, speakers, time, words; cursor-paged")
def search_conversations(body: ConversationSearch, who: Principal = Depends(reader),
                         conn: Connection = DB) -> ConversationList:
    return _conversations(body, who, conn)


def _where_param(raw: str | None) -> dict | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        raise HTTPException(422, detail=[{"field": "where", "type": "json_invalid",
                                          "message": "must be a JSON object, e.g. {\"user\": \"u-42\"}"}]) from None
    if not isinstance(value, dict):
        raise HTTPException(422, detail=[{"field": "where", "type": "dict_type",
                                          "message": "must be a JSON object, e.g. {\"user\": \"u-42\"}"}])
    return value


def _param(loc: tuple) -> str:
    """A filter's query parameter from the model's field path (`speakers.0` -> `speaker`)."""
    names = {"speakers": "speaker", "time_range": "start"}
    return names.get(str(loc[0]), str(loc[0])) if loc else "start"  # the range's own check: start after end


def _conversations(f: ConversationSearch, who: Principal, conn: Connection) -> ConversationList:
    scope = Scope(tenant_id=who.tenant_id, speakers=tuple(f.speakers) if f.speakers else None,
                  start=f.time_range.start if f.time_range else None, end=f.time_range.end if f.time_range else None,
                  where=where_json(f.where))
    bound = [sorted(scope.speakers or ()), scope.start, scope.end, scope.where, f.text, f.prefix]
    pos = paging.decode(f.cursor, who.tenant_id, "conversations", bound)
    after = None
    if pos is not None:
        try:
            after = (datetime.fromisoformat(pos[0]), str(pos[1]))
        except (TypeError, ValueError, IndexError, KeyError):
            raise paging.invalid("malformed cursor") from None
    rows, more = conversations_page(conn, scope, f.limit, search=f.text, prefix=f.prefix, after=after)
    nxt = paging.encode(who.tenant_id, "conversations", bound,
                        [rows[-1].last_at.isoformat(), rows[-1].conversation_id]) if more else None
    return ConversationList(next_cursor=nxt, conversations=[
        ConversationSummary(conversation_id=c.conversation_id, events=c.events, first_at=c.first_at, last_at=c.last_at)
        for c in rows
    ])


@router.get("/{conversation_id}/status", response_model=ConversationStatus, summary="Indexing lag per layer",
            dependencies=[only_query_params()])
def status(conversation_id: str, who: Principal = Depends(reader), conn: Connection = DB) -> ConversationStatus:
    """The conversation's event count and, per background layer, how many of its events still wait
    for it. 404 when the tenant has no event in it (never posted, erased, or another tenant's): a
    conversation has a status from its first event on, so polling right after a write never 404s."""
    events, pending = indexing_status(conn, who.tenant_id, conversation_id)
    if not events:
        raise HTTPException(404, f"conversation {conversation_id!r} not found")
    return ConversationStatus(conversation_id=conversation_id, events=events, pending=pending)


# Forgetting a conversation or a speaker (admin scope, dry run, audit): app/api/routes/erasure.py
