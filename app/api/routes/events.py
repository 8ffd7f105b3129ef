"""Ingest and read verbatim events. Thin: validation is in the schemas, the write in `app.services.ingest`."""
from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from sqlalchemy import Connection

from app.api import paging
from app.api.deps import DB, dispatcher, only_query_params, reader, writer
from app.api.error_models import ROUTE_ERRORS
from app.api.schemas import (
    EventBatch,
    EventBatchResult,
    EventOut,
    EventPage,
    EventResult,
)
from app.ports import Dispatcher
from app.services import conversations as reads
from app.services import versions
from app.services.ingest import BadCorrection, ChangedRetry, ingest
from app.storage.events import EventRow
from app.storage.tenants import Principal

PG_BIGINT_MAX = 2**63 - 1
router = APIRouter(prefix="/v1", tags=["events"], responses=ROUTE_ERRORS)


def event_out(row: EventRow, links: dict[int, tuple[str | None, str | None]] | None = None) -> EventOut:
    gate = None
    if row.gate_status is not None:
        gate = {
            "status": row.gate_status,
            "score": row.gate_score,
            "novelty": row.gate_novelty,
            "salience": row.gate_salience,
            "prediction_error": row.gate_prediction_error,
        }
    return EventOut(
        id=row.id, event_id=row.event_id, conversation_id=row.conversation_id, speaker=row.speaker,
        recipient=row.recipient, role=row.role, content=row.content, occurred_at=row.occurred_at,
        ingested_at=row.ingested_at, metadata=row.metadata, gate=gate,
        supersedes=(links or {}).get(row.id, (None, None))[0], superseded_by=(links or {}).get(row.id, (None, None))[1],
    )


@router.post(
    "/events", response_model=EventBatchResult, summary="Write a batch of events (verbatim, idempotent)",
    description="Events without an `event_id` get one derived from (conversation_id, speaker, occurred_at, "
                "content), so posting the same event again creates nothing. To correct an event, write the new "
                "version with `supersedes` set to the old one's `event_id`: the old version is kept verbatim.",
    responses={409: {"description": "An `event_id` already holds a different event, or a correction's `supersedes` "
                                    "names no event of the conversation or one corrected already; nothing of the "
                                    "batch was written."}},
)
def post_events(batch: EventBatch, who: Principal = Depends(writer),
                send: Dispatcher = Depends(dispatcher)) -> EventBatchResult:
    try:
        results = ingest(who.tenant_id, batch.events, send)
    except ChangedRetry as exc:
        raise HTTPException(409, detail=[
            {"field": f"events.{i}.{name}", "type": "changed_retry",
             "message": f"event_id {event_id!r} in conversation {exc.conversations.get(i)!r} already holds a different "
                        f"event ({', '.join(fields)} differ{'s' if len(fields) == 1 else ''}); nothing in this batch "
                        "was written. To correct it, send the new version with its own event_id and "
                        f"supersedes={event_id!r}"}
            for i, event_id, fields in exc.changes for name in fields
        ]) from None
    except BadCorrection as exc:
        raise HTTPException(exc.status, detail=[
            {"field": f"events.{i}.supersedes", "type": "bad_correction",
             "message": f"{message}; nothing in this batch was written"}
            for i, message in exc.problems
        ]) from None
    return EventBatchResult(results=[EventResult(id=r.id, event_id=r.event_id, status=r.status) for r in results])


@router.get("/events/{id}", response_model=EventOut, summary="Read one event",
            dependencies=[only_query_params()])
def get_event(id: int = Path(ge=1, le=PG_BIGINT_MAX), who: Principal = Depends(reader), conn: Connection = DB) -> EventOut:
    row = reads.event(conn, who.tenant_id, id)
    if row is None:
        raise HTTPException(404, f"event {id} not found")
    return event_out(row, versions.links(conn, who.tenant_id, [row.id]))


def _encode_cursor(row: EventRow, tenant_id: int, conversation_id: str) -> str:
    """Bound to the tenant and the conversation (`app.api.paging`): another's cursor is a 422."""
    return paging.encode(tenant_id, "events", [conversation_id], [row.occurred_at.isoformat(), row.id])


def _decode_cursor(cursor: str, tenant_id: int, conversation_id: str) -> tuple[datetime, int]:
    try:
        at, pk = paging.decode(cursor, tenant_id, "events", [conversation_id])
        return datetime.fromisoformat(at), int(pk)
    except (ValueError, TypeError) as exc:
        raise paging.invalid("malformed cursor") from exc


@router.get(
    "/conversations/{conversation_id}/events",
    response_model=EventPage,
    tags=["conversations"],
    summary="A conversation's events in time order (cursor-paged)",
    dependencies=[only_query_params("limit", "cursor")],
)
def list_events(
    conversation_id: str,
    request: Request,
    limit: int = paging.limit_query(100, what="events"),
    cursor: str | None = paging.cursor_query(),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> EventPage:
    after = _decode_cursor(cursor, who.tenant_id, conversation_id) if cursor else None
    rows, more = reads.events_page(conn, who.tenant_id, conversation_id, limit, after)
    links = versions.links(conn, who.tenant_id, [r.id for r in rows])
    return EventPage(events=[event_out(r, links) for r in rows], next_cursor=_encode_cursor(rows[-1], who.tenant_id, conversation_id) if more else None)
