"""Backup and restore of a tenant's verbatim events as JSON Lines.

Only the verbatim log is needed: every derived layer is rebuilt from it by the workers after an
import (ingest leaves an outbox row per event and layer, and enqueues the work).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.domain.event import Event
from app.ports import Dispatcher
from app.services.ingest import WriteResult, ingest
from app.storage.transfer import tenant_events

EXPORT_FIELDS = tuple(Event.model_fields)  # one line of the export is one `Event`


def export_events(conn: Connection, tenant_id: int, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """The tenant's events in (conversation, time) order, one export record each, streamed
    (`batch` rows a statement)."""
    for r in tenant_events(conn, tenant_id, batch):
        rec = {
            "conversation_id": r.conversation_id, "event_id": r.event_id, "speaker": r.speaker,
            "recipient": r.recipient, "role": r.role, "content": r.content,
            "occurred_at": r.occurred_at.isoformat(), "metadata": r.metadata,
        }
        if r.supersedes is not None:
            rec["supersedes"] = r.supersedes
        yield rec


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
