"""SQL for the verbatim event log: batch insert (idempotent), reads (one event, a page, a whole
conversation as the layers read it, the neighbours of a hit), the gate's columns, deletes."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, or_, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.db import any_pk
from app.storage.models import Event
from app.storage.outbox import pending_counts

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
    Event.supersedes_id,
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
    supersedes_id: int | None = None  # a correction: the event this version replaces


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


def successors(conn: Connection, tenant_id: int, pks: list[int]) -> dict[int, tuple[int, str | None]]:
    """event pk -> (pk, event_id) of the version that supersedes it, for those of `pks` corrected already."""
    if not pks:
        return {}
    res = conn.execute(select(Event.supersedes_id, Event.id, Event.event_id).where(
        Event.tenant_id == tenant_id, Event.supersedes_id == any_pk(pks)))
    return {r[0]: (r[1], r[2]) for r in res}


def version_links(conn: Connection, tenant_id: int, pks: list[int]) -> dict[int, tuple[str | None, str | None]]:
    """event pk -> (event_id it supersedes, event_id of the version superseding it), for those of
    `pks` that are part of a correction (either side)."""
    if not pks:
        return {}
    old, new = Event.__table__.alias("old"), Event.__table__.alias("new")
    out: dict[int, list[str | None]] = {}
    for pk, eid in conn.execute(select(new.c.id, old.c.event_id).join(old, old.c.id == new.c.supersedes_id)
                                .where(new.c.tenant_id == tenant_id, new.c.id == any_pk(pks))):
        out.setdefault(pk, [None, None])[0] = eid
    for pk, eid in conn.execute(select(new.c.supersedes_id, new.c.event_id)
                                .where(new.c.tenant_id == tenant_id, new.c.supersedes_id == any_pk(pks))):
        out.setdefault(pk, [None, None])[1] = eid
    return {pk: (a, b) for pk, (a, b) in out.items()}


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
    return events, pending_counts(conn, tenant_id, conversation_id)


def delete_conversation(conn: Connection, tenant_id: int, conversation_id: str) -> int:
    """Delete a conversation's events; embeddings, outbox rows and per-event derived rows go by
    cascade (the conversation-level ones are `app.services.forget`'s to delete)."""
    res = conn.execute(
        Event.__table__.delete().where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id)
    )
    return res.rowcount


def delete_speaker(conn: Connection, tenant_id: int, speaker: str) -> tuple[int, list[str]]:
    """Delete every event a speaker wrote, in every conversation of the tenant.

    Returns the count and the conversations touched (their conversation-level layers must be
    rebuilt without the deleted events: `app.services.forget`).
    """
    res = conn.execute(
        Event.__table__.delete()
        .where(Event.tenant_id == tenant_id, Event.speaker == speaker)
        .returning(Event.conversation_id)
    )
    convs = [r[0] for r in res]
    return len(convs), sorted(set(convs))


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
       AND NOT EXISTS (SELECT 1 FROM events v WHERE v.supersedes_id = p.id)
     ORDER BY p.occurred_at DESC, p.id DESC LIMIT :window)
    UNION ALL
    (SELECT * FROM events f
     WHERE f.tenant_id = c.tenant_id AND f.conversation_id = c.conversation_id
       AND (f.occurred_at, f.id) > (c.occurred_at, c.id)
       AND (f.gate_status IS NULL OR f.gate_status <> 'gated_out')
       AND NOT EXISTS (SELECT 1 FROM events v WHERE v.supersedes_id = f.id)
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


# ---------------------------------------------------------------- the log, as the layers read it

def conversation_log(conn: Connection, tenant_id: int, conversation_id: str, include_gated_out: bool = False) -> list[EventRow]:
    """Every event of a conversation in time order (then id: arrival order for equal times); an
    event a correction superseded is left out (its newest version is in)."""
    q = select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id,
                                     ~exists_newer_version(Event.id))
    if not include_gated_out:
        q = q.where((Event.gate_status.is_(None)) | (Event.gate_status != "gated_out"))
    return [EventRow(*r) for r in conn.execute(q.order_by(Event.occurred_at, Event.id))]


def exists_newer_version(pk_column):  # noqa: ANN001, ANN201
    """SQL: a correction supersedes the event `pk_column` (the layers and retrieval read the newest version)."""
    newer = Event.__table__.alias("newer")
    return select(newer.c.id).where(newer.c.supersedes_id == pk_column).exists()


def tenant_log(conn: Connection, tenant_id: int, conversation_id: str | None = None) -> list[EventRow]:
    """Every event of a tenant (or one conversation), gated-out ones included, by conversation and
    time (re-gating reads it)."""
    q = select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id)
    if conversation_id is not None:
        q = q.where(Event.conversation_id == conversation_id)
    return [EventRow(*r) for r in conn.execute(q.order_by(Event.conversation_id, Event.occurred_at, Event.id))]


def conversations_of(conn: Connection, pks: list[int]) -> list[tuple[int, str]]:
    """The distinct (tenant, conversation) of the given events (worker side: any tenant)."""
    if not pks:
        return []
    res = conn.execute(
        select(Event.tenant_id, Event.conversation_id).where(Event.id.in_(pks)).distinct()
    )
    return sorted((r[0], r[1]) for r in res)


def conversation_exists(conn: Connection, tenant_id: int, conversation_id: str) -> bool:
    return conn.execute(
        select(Event.id).where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id).limit(1)
    ).first() is not None


def tenant_conversations(conn: Connection, tenant_id: int) -> list[str]:
    res = conn.execute(select(Event.conversation_id).where(Event.tenant_id == tenant_id).distinct())
    return sorted(r[0] for r in res)


def conversations_named(conn: Connection, conversation_id: str | None, tenant_id: int | None) -> list[tuple[int, str]]:
    """(tenant, conversation) pairs with events, narrowed by either or both."""
    q = select(Event.tenant_id, Event.conversation_id).distinct()
    if tenant_id is not None:
        q = q.where(Event.tenant_id == tenant_id)
    if conversation_id is not None:
        q = q.where(Event.conversation_id == conversation_id)
    return sorted((r[0], r[1]) for r in conn.execute(q))


def event_times(conn: Connection, tenant_id: int, pks: list[int]) -> dict[int, tuple[str, datetime, datetime]]:
    """event pk -> (conversation_id, occurred_at, ingested_at) of the tenant's events among `pks`."""
    return {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            select(Event.id, Event.conversation_id, Event.occurred_at, Event.ingested_at)
            .where(Event.tenant_id == tenant_id, Event.id.in_(pks))
        )
    }


# ---------------------------------------------------------------- the encoding gate's columns

def recent_contents(conn: Connection, tenant_id: int, conversation_ids: list[str], n: int) -> dict[str, list[str]]:
    """Per conversation, the contents of its `n` latest admitted events, newest first (the
    neighbours novelty is measured against at ingest)."""
    if not conversation_ids or n <= 0:
        return {}
    res = conn.execute(text(
        "SELECT c.conv, r.content FROM unnest(CAST(:convs AS text[])) AS c(conv) "
        "JOIN LATERAL (SELECT e.content, e.occurred_at, e.id FROM events e "
        "  WHERE e.tenant_id = :t AND e.conversation_id = c.conv "
        "    AND (e.gate_status IS NULL OR e.gate_status <> 'gated_out') "
        "  ORDER BY e.occurred_at DESC, e.id DESC LIMIT :n) r ON true "
        "ORDER BY c.conv, r.occurred_at DESC, r.id DESC"
    ), {"convs": list(conversation_ids), "t": tenant_id, "n": n})
    out: dict[str, list[str]] = {}
    for conv, content in res:
        out.setdefault(conv, []).append(content)
    return out


def gate_counts(conn: Connection) -> list[tuple[str, int]]:
    """(gate status or 'unscored', events), across tenants, for the scrape-time metrics."""
    rows = conn.execute(text(
        "SELECT coalesce(gate_status, 'unscored'), count(*) FROM events GROUP BY 1"
    ))
    return [(r[0], int(r[1])) for r in rows]


def set_gate(conn: Connection, rows: list[dict]) -> None:
    """rows: {id, gate_novelty, gate_salience, gate_prediction_error, gate_score, gate_status}."""
    if not rows:
        return
    stmt = (
        update(Event)
        .where(Event.id == bindparam("pk"))
        .values(gate_novelty=bindparam("n"), gate_salience=bindparam("s"), gate_prediction_error=bindparam("p"),
                gate_score=bindparam("score"), gate_status=bindparam("status"))
    )
    conn.execute(stmt, [{"pk": r["id"], "n": r["gate_novelty"], "s": r["gate_salience"],
                         "p": r["gate_prediction_error"], "score": r["gate_score"], "status": r["gate_status"]}
                        for r in rows])
