"""Stage 2, the writer: plans a batch write of verbatim events (pure), then commits it in one
transaction through the storage layer.

A retry of a known `event_id` maps to the stored row and creates nothing; the same `event_id`
twice in one batch is written once.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection

from app.storage import events as store


@dataclass(frozen=True)
class NewEvent:
    conversation_id: str
    speaker: str
    content: str
    event_id: str | None = None
    recipient: str | None = None
    role: str | None = None
    occurred_at: datetime | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class WriteResult:
    id: int
    event_id: str | None
    conversation_id: str
    status: str  # "created" | "duplicate"


def plan_batch(batch: list[NewEvent]) -> tuple[list[int], dict[int, int]]:
    """Positions to write, and for repeated client ids within the batch, position -> first position."""
    first: dict[tuple[str, str], int] = {}
    to_write: list[int] = []
    repeats: dict[int, int] = {}
    for i, ev in enumerate(batch):
        if ev.event_id is None:
            to_write.append(i)
            continue
        key = (ev.conversation_id, ev.event_id)
        if key in first:
            repeats[i] = first[key]
        else:
            first[key] = i
            to_write.append(i)
    return to_write, repeats


def write_batch(
    conn: Connection, tenant_id: int, batch: list[NewEvent], layers: list[str], now: datetime | None = None
) -> list[WriteResult]:
    """Write a batch inside the caller's transaction; returns one result per input, in order."""
    now = now or datetime.now(timezone.utc)
    to_write, repeats = plan_batch(batch)
    ids = store.reserve_ids(conn, len(to_write))
    rows = []
    for pk, i in zip(ids, to_write):
        ev = batch[i]
        rows.append(
            {
                "id": pk,
                "tenant_id": tenant_id,
                "conversation_id": ev.conversation_id,
                "event_id": ev.event_id,
                "speaker": ev.speaker,
                "recipient": ev.recipient,
                "role": ev.role,
                "content": ev.content,
                "occurred_at": ev.occurred_at or now,
                "metadata_": ev.metadata or {},
            }
        )
    inserted = store.insert_events(conn, rows)
    conflicts = [(batch[i].conversation_id, batch[i].event_id) for pk, i in zip(ids, to_write) if pk not in inserted]
    existing = store.find_by_client_ids(conn, tenant_id, conflicts)

    results: dict[int, WriteResult] = {}
    for pk, i in zip(ids, to_write):
        ev = batch[i]
        if pk in inserted:
            results[i] = WriteResult(pk, ev.event_id, ev.conversation_id, "created")
        else:
            results[i] = WriteResult(existing[(ev.conversation_id, ev.event_id)], ev.event_id, ev.conversation_id, "duplicate")
    for i, j in repeats.items():
        r = results[j]
        results[i] = WriteResult(r.id, r.event_id, r.conversation_id, "duplicate")
    store.add_indexing_rows(
        conn, tenant_id, [(r.id, r.conversation_id) for r in results.values() if r.status == "created"], layers
    )
    return [results[i] for i in range(len(batch))]
