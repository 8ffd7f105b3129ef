"""SQL for the verbatim event log: batch insert (idempotent), reads, cursor paging, status counts."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, func, or_, select, text, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.db import any_pk
from app.storage.models import Event, IndexingState

EVENT_COLUMNS = (
    Event.id,
    Event.event_id,
    Event.conversation_id,
    Event.speaker,
    Event.recipient,
    Event.role,
    Event.content,
    Event.occurred_at,
    Event.ingested_at,
    Event.metadata_,
    Event.gate_novelty,
    Event.gate_salience,
    Event.gate_prediction_error,
    Event.gate_score,
    Event.gate_status,
)


@dataclass(frozen=True)
class EventRow:
    id: int
    event_id: str | None
    conversation_id: str
    speaker: str
    recipient: str | None
    role: str | None
    content: str
    occurred_at: datetime
    ingested_at: datetime
    metadata: dict[str, Any]
    gate_novelty: float | None = None
    gate_salience: float | None = None
    gate_prediction_error: float | None = None
    gate_score: float | None = None
    gate_status: str | None = None


def _row(r) -> EventRow:  # noqa: ANN001
    return EventRow(*r)


def reserve_ids(conn: Connection, n: int) -> list[int]:
    """Take n ids from the sequence up front, so inserted rows map back to request positions."""
    rows = conn.execute(
        text("SELECT nextval(pg_get_serial_sequence('events', 'id')) FROM generate_series(1, :n)"), {"n": n}
    )
    return [r[0] for r in rows]


def insert_events(conn: Connection, rows: list[dict[str, Any]]) -> set[int]:
    """Insert rows (each with an explicit `id`; keys are the model's attribute names); return the ids
    actually inserted.

    A row whose (tenant, conversation, event_id) exists already is skipped, also when a
    concurrent transaction inserted it first: ON CONFLICT waits for that one and then skips.
    The rows go as executemany parameters of one compiled statement, which SQLAlchemy sends in
    multi-row pages ("insertmanyvalues"); `.values(rows)` would compile a bind parameter per value,
    10,000-15,000 for a batch of 1,000, in Python, and that compile was most of a POST's time.
    """
    if not rows:
        return set()
    keys = {k for r in rows for k in r}
    params = [{_EVENT_COLUMN_OF.get(k, k): r.get(k) for k in keys} for r in rows]
    return {r[0] for r in conn.execute(_INSERT_EVENTS, params)}


_EVENT_COLUMN_OF = {"metadata_": "metadata"}  # attribute name -> column name, where they differ
_INSERT_EVENTS = (pg_insert(Event.__table__).on_conflict_do_nothing(constraint="uq_events_client_id")
                  .returning(Event.__table__.c.id))


def find_by_client_ids(conn: Connection, tenant_id: int, keys: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """(conversation_id, event_id) -> id for the given keys that exist for the tenant."""
    if not keys:
        return {}
    res = conn.execute(
        select(Event.conversation_id, Event.event_id, Event.id).where(
            Event.tenant_id == tenant_id, tuple_(Event.conversation_id, Event.event_id).in_(keys)
        )
    )
    return {(r.conversation_id, r.event_id): r.id for r in res}


def add_indexing_rows(conn: Connection, tenant_id: int, items: list[tuple[int, str]], layers: list[str]) -> None:
    """Outbox rows, written in the event's own transaction (items are (event pk, conversation_id)):
    one row per event and layer, from three array parameters in one statement."""
    if not items or not layers:
        return
    conn.execute(text(_OUTBOX_SQL), {"tenant_id": tenant_id, "pks": [pk for pk, _ in items],
                                     "convs": [conv for _, conv in items], "layers": list(layers)})


_OUTBOX_SQL = """
INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at)
SELECT e.pk, l.layer, :tenant_id, e.conv, now()
FROM unnest(CAST(:pks AS bigint[]), CAST(:convs AS text[])) AS e(pk, conv)
CROSS JOIN unnest(CAST(:layers AS text[])) AS l(layer)
ON CONFLICT DO NOTHING
"""


def get_event(conn: Connection, tenant_id: int, pk: int) -> EventRow | None:
    r = conn.execute(select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id, Event.id == pk)).first()
    return _row(r) if r else None


def get_events(conn: Connection, tenant_id: int, pks: list[int]) -> dict[int, EventRow]:
    if not pks:
        return {}
    res = conn.execute(select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id, Event.id == any_pk(pks))).all()
    return {r.id: _row(r) for r in res}


def list_conversation(
    conn: Connection,
    tenant_id: int,
    conversation_id: str,
    limit: int,
    after: tuple[datetime, int] | None = None,
) -> list[EventRow]:
    """Time-ordered page of a conversation, strictly after the (occurred_at, id) cursor."""
    q = select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id)
    if after is not None:
        at, pk = after
        q = q.where(or_(Event.occurred_at > at, and_(Event.occurred_at == at, Event.id > pk)))
    q = q.order_by(Event.occurred_at, Event.id).limit(limit)
    return [_row(r) for r in conn.execute(q)]


def conversation_events_for_embedding(conn: Connection, pks: list[int]) -> list[tuple[int, int, str, str, str]]:
    """(id, tenant_id, conversation_id, speaker, content) of the given events (worker side, any tenant)."""
    if not pks:
        return []
    res = conn.execute(
        select(Event.id, Event.tenant_id, Event.conversation_id, Event.speaker, Event.content).where(Event.id.in_(pks))
    )
    return [tuple(r) for r in res]


def conversation_status(conn: Connection, tenant_id: int, conversation_id: str) -> tuple[int, dict[str, int]]:
    """Number of events, and per layer how many of them still wait for that layer's work."""
    events = conn.execute(
        select(func.count()).select_from(Event).where(
            Event.tenant_id == tenant_id, Event.conversation_id == conversation_id
        )
    ).scalar_one()
    pending_n = (func.count() - func.count(IndexingState.done_at)).label("pending")
    res = conn.execute(
        select(IndexingState.layer, pending_n)
        .where(IndexingState.tenant_id == tenant_id, IndexingState.conversation_id == conversation_id)
        .group_by(IndexingState.layer)
    )
    return events, {r.layer: r.pending for r in res}


def delete_conversation(conn: Connection, tenant_id: int, conversation_id: str) -> int:
    """Delete a conversation's events; embeddings, outbox rows and per-event derived rows go by
    cascade, the conversation-level ones (episodes, profiles, graph, ...) explicitly."""
    from app.storage import layers

    res = conn.execute(
        Event.__table__.delete().where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id)
    )
    layers.delete_conversation_rows(conn, tenant_id, [conversation_id])
    return res.rowcount


def delete_speaker(conn: Connection, tenant_id: int, speaker: str) -> tuple[int, list[str]]:
    """Delete every event a speaker wrote, in every conversation of the tenant.

    Returns the count and the conversations touched (their conversation-level layers must be
    rebuilt without the deleted events).
    """
    res = conn.execute(
        Event.__table__.delete()
        .where(Event.tenant_id == tenant_id, Event.speaker == speaker)
        .returning(Event.conversation_id)
    )
    convs = [r[0] for r in res]
    touched = sorted(set(convs))
    # Conversation-level rows could quote them (summaries, profiles, graph labels): drop them and
    # make the remaining events pending so those layers rebuild without the deleted ones.
    from app.storage import layers

    layers.forget_derived(conn, tenant_id, touched, layers.REBUILT_AFTER_FORGET)
    return len(convs), touched


def list_conversations(conn: Connection, tenant_id: int, limit: int = 1000) -> list[tuple[str, int, datetime, datetime]]:
    """(conversation_id, events, first event time, last event time), most recently active first."""
    res = conn.execute(
        select(Event.conversation_id, func.count(), func.min(Event.occurred_at), func.max(Event.occurred_at))
        .where(Event.tenant_id == tenant_id)
        .group_by(Event.conversation_id)
        .order_by(func.max(Event.occurred_at).desc(), Event.conversation_id)
        .limit(limit)
    )
    return [tuple(r) for r in res]


_NEIGHBOURS_SQL = """
SELECT c.id AS center, n.id, n.event_id, n.conversation_id, n.speaker, n.recipient, n.role, n.content,
       n.occurred_at, n.ingested_at, n.metadata, n.gate_novelty, n.gate_salience, n.gate_prediction_error,
       n.gate_score, n.gate_status
FROM events c
JOIN LATERAL (
    (SELECT * FROM events p
     WHERE p.tenant_id = c.tenant_id AND p.conversation_id = c.conversation_id
       AND (p.occurred_at, p.id) < (c.occurred_at, c.id)
       AND (p.gate_status IS NULL OR p.gate_status <> 'gated_out')
     ORDER BY p.occurred_at DESC, p.id DESC LIMIT :window)
    UNION ALL
    (SELECT * FROM events f
     WHERE f.tenant_id = c.tenant_id AND f.conversation_id = c.conversation_id
       AND (f.occurred_at, f.id) > (c.occurred_at, c.id)
       AND (f.gate_status IS NULL OR f.gate_status <> 'gated_out')
     ORDER BY f.occurred_at, f.id LIMIT :window)
) n ON true
WHERE c.tenant_id = :tenant_id AND c.id = ANY(:ids)
"""


def neighbours(conn: Connection, tenant_id: int, pks: list[int], window: int = 1) -> dict[int, list[EventRow]]:
    """The `window` events before and after each given event in its conversation (index-backed)."""
    if not pks or window <= 0:
        return {}
    out: dict[int, list[EventRow]] = {}
    for r in conn.execute(text(_NEIGHBOURS_SQL), {"tenant_id": tenant_id, "ids": pks, "window": window}):
        out.setdefault(r[0], []).append(EventRow(*r[1:]))
    for rows in out.values():
        rows.sort(key=lambda e: (e.occurred_at, e.id))
    return out


def latest_event_time(conn: Connection, tenant_id: int, conversation_id: str | None) -> datetime | None:
    """When the conversation (or the tenant's whole memory) last heard something."""
    q = select(func.max(Event.occurred_at)).where(Event.tenant_id == tenant_id)
    if conversation_id is not None:
        q = q.where(Event.conversation_id == conversation_id)
    return conn.execute(q).scalar()
