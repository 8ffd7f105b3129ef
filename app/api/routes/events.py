"""Ingest and read verbatim events. Thin: validation is in the schemas, the write in `app.services.ingest`."""
from __future__ import annotations

import base64
import json
from datetime import datetime

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from sqlalchemy import Connection

from app.api.deps import DB, dispatcher, only_query_params, reader, writer
from app.api.schemas import (
    ROUTE_ERRORS,
    EventBatch,
    EventBatchResult,
    EventOut,
    EventPage,
    EventResult,
)
from app.ports import Dispatcher
from app.services import conversations as reads
from app.services.ingest import ChangedRetry, ingest
from app.storage.events import EventRow
from app.storage.tenants import Principal

PG_BIGINT_MAX = 2**63 - 1
router = APIRouter(prefix="/v1", tags=["events"], responses=ROUTE_ERRORS)


def event_out(row: EventRow) -> EventOut:
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
    )


@router.post("/events", response_model=EventBatchResult, summary="Write a batch of events (verbatim, idempotent)",
             responses={409: {"description": "An `event_id` already holds a different event; nothing was written."}})
def post_events(batch: EventBatch, who: Principal = Depends(writer),
                send: Dispatcher = Depends(dispatcher)) -> EventBatchResult:
    try:
        results = ingest(who.tenant_id, batch.events, send)
    except ChangedRetry as exc:
        raise HTTPException(409, detail=[
            {"field": f"events.{i}.{name}", "type": "changed_retry",
             "message": f"event_id {event_id!r} already holds a different event; nothing in this batch was written"}
            for i, event_id, fields in exc.changes for name in fields
        ]) from None
    return EventBatchResult(results=[EventResult(id=r.id, event_id=r.event_id, status=r.status) for r in results])


@router.get("/events/{id}", response_model=EventOut, summary="Read one event",
            dependencies=[only_query_params()])
def get_event(id: int = Path(ge=1, le=PG_BIGINT_MAX), who: Principal = Depends(reader), conn: Connection = DB) -> EventOut:
    row = reads.event(conn, who.tenant_id, id)
    if row is None:
        raise HTTPException(404, f"event {id} not found")
    return event_out(row)


def _encode_cursor(row: EventRow) -> str:
    raw = json.dumps([row.occurred_at.isoformat(), row.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        at, pk = json.loads(raw)
        return datetime.fromisoformat(at), int(pk)
    except (ValueError, TypeError) as exc:
        raise HTTPException(422, detail=[{"field": "cursor", "message": "malformed cursor", "type": "value_error"}]) from exc


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
    limit: int = Query(100, ge=1, le=1000),
    cursor: str | None = Query(None, min_length=1, max_length=512, pattern=r"^[A-Za-z0-9_-]+$"),
    who: Principal = Depends(reader),
    conn: Connection = DB,
) -> EventPage:
    after = _decode_cursor(cursor) if cursor else None
    rows, more = reads.events_page(conn, who.tenant_id, conversation_id, limit, after)
    return EventPage(events=[event_out(r) for r in rows], next_cursor=_encode_cursor(rows[-1]) if more else None)
