"""Backup and restore of a tenant's verbatim events as JSON Lines.

Only the verbatim log is needed: every derived layer is rebuilt from it by the workers after an
import (ingest leaves an outbox row per event and layer, and enqueues the work).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from app.domain.event import Event
from app.ports import Dispatcher
from app.services.ingest import WriteResult, ingest
from app.storage.models import Event as EventTable

EXPORT_FIELDS = tuple(Event.model_fields)  # one line of the export is one `Event`


def export_events(conn: Connection, tenant_id: int, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """The tenant's events in (conversation, time) order, streamed by keyset pagination."""
    last: tuple[str, datetime, int] | None = None
    while True:
        t = EventTable
        old = EventTable.__table__.alias("old")  # a correction names the event_id it supersedes
        q = select(
            t.id, t.conversation_id, t.event_id, t.speaker, t.recipient, t.role, t.content, t.occurred_at, t.metadata_,
            old.c.event_id.label("supersedes"),
        ).outerjoin(old, old.c.id == t.supersedes_id).where(t.tenant_id == tenant_id)
        if last is not None:
            from sqlalchemy import tuple_

            q = q.where(tuple_(t.conversation_id, t.occurred_at, t.id) > tuple_(*last))
        rows = conn.execute(q.order_by(t.conversation_id, t.occurred_at, t.id).limit(batch)).all()
        if not rows:
            return
        for r in rows:
            rec = {
                "conversation_id": r.conversation_id, "event_id": r.event_id, "speaker": r.speaker,
                "recipient": r.recipient, "role": r.role, "content": r.content,
                "occurred_at": r.occurred_at.isoformat(), "metadata": r.metadata,
            }
            if r.supersedes is not None:
                rec["supersedes"] = r.supersedes
            yield rec
        last = (rows[-1].conversation_id, rows[-1].occurred_at, rows[-1].id)


def event_from_record(rec: dict[str, Any]) -> Event:
    unknown = set(rec) - set(EXPORT_FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}")
    for required in ("conversation_id", "speaker", "content"):
        if not rec.get(required):
            raise ValueError(f"missing {required}")
    at = rec.get("occurred_at")
    return Event(
        conversation_id=str(rec["conversation_id"]), speaker=str(rec["speaker"]), content=rec["content"],
        event_id=None if rec.get("event_id") is None else str(rec["event_id"]),
        recipient=rec.get("recipient"), role=rec.get("role"),
        occurred_at=datetime.fromisoformat(at) if isinstance(at, str) else at,
        metadata=rec.get("metadata") or {},
        supersedes=None if rec.get("supersedes") is None else str(rec["supersedes"]),
    )


def read_jsonl(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"line {n}: not JSON ({exc.msg})") from exc


def import_batch(tenant_id: int, records: list[dict[str, Any]], dispatcher: Dispatcher) -> list[WriteResult]:
    """Write a batch of export records through ingest (one transaction, then the layers' work)."""
    return ingest(tenant_id, [event_from_record(r) for r in records], dispatcher)
