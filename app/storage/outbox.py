"""SQL for the per-event outbox (`indexing_state`): one row per event and background layer, written in
the event's own transaction, marked done by the layer's work, re-sent by the sweeper while pending.

The one place that reads or writes `indexing_state`: ingest adds rows (`add_indexing_rows`), a
per-event layer marks its events done or failed, a conversation-level layer snapshots what is
pending in a conversation and marks exactly that done, the sweeper claims stale rows, and a
rebuild, a regate or a forget makes rows pending again.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Sequence

from sqlalchemy import Connection, func, select, text, tuple_, update

from app.storage.models import IndexingState

# ---------------------------------------------------------------- written at ingest

_OUTBOX_SQL = """
INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at)
SELECT e.pk, l.layer, :tenant_id, e.conv, now()
FROM unnest(CAST(:pks AS bigint[]), CAST(:convs AS text[])) AS e(pk, conv)
CROSS JOIN unnest(CAST(:layers AS text[])) AS l(layer)
ON CONFLICT DO NOTHING
"""


def add_indexing_rows(conn: Connection, tenant_id: int, items: list[tuple[int, str]], layers: list[str]) -> None:
    """Outbox rows, written in the event's own transaction (items are (event pk, conversation_id)):
    one row per event and layer, from three array parameters in one statement."""
    if not items or not layers:
        return
    conn.execute(text(_OUTBOX_SQL), {"tenant_id": tenant_id, "pks": [pk for pk, _ in items],
                                     "convs": [conv for _, conv in items], "layers": list(layers)})


# ---------------------------------------------------------------- per event

def pending_among(conn: Connection, layer: str, pks: list[int]) -> list[int]:
    """Those of `pks` whose `layer` work is not done yet (a redelivered task finds none)."""
    if not pks:
        return []
    res = conn.execute(
        select(IndexingState.event_pk).where(
            IndexingState.layer == layer, IndexingState.event_pk.in_(pks), IndexingState.done_at.is_(None)
        )
    )
    return [r[0] for r in res]


def mark_enqueued(conn: Connection, layer: str, pks: list[int]) -> None:
    if pks:
        conn.execute(
            update(IndexingState)
            .where(IndexingState.layer == layer, IndexingState.event_pk.in_(pks))
            .values(enqueued_at=func.now())
        )


def mark_done(conn: Connection, layer: str, pks: list[int]) -> int:
    """Mark those of `pks` still pending done; returns how many this call marked (a row a
    concurrent transaction marked first is not counted)."""
    if not pks:
        return 0
    return conn.execute(
        update(IndexingState)
        .where(IndexingState.layer == layer, IndexingState.event_pk.in_(pks), IndexingState.done_at.is_(None))
        .values(done_at=func.now(), last_error=None)
    ).rowcount


def mark_failed(conn: Connection, layer: str, pks: list[int], error: str) -> None:
    if pks:
        conn.execute(
            update(IndexingState)
            .where(IndexingState.layer == layer, IndexingState.event_pk.in_(pks), IndexingState.done_at.is_(None))
            .values(attempts=IndexingState.attempts + 1, last_error=error[:2000])
        )


def mark_layer_done(conn: Connection, tenant_id: int, layer: str, after_pk: int) -> int:
    """Mark `layer`'s outbox rows of the tenant's events after `after_pk` done (their work was done
    in bulk, outside the workers); returns how many."""
    res = conn.execute(
        update(IndexingState)
        .where(IndexingState.tenant_id == tenant_id, IndexingState.layer == layer,
               IndexingState.event_pk > after_pk, IndexingState.done_at.is_(None))
        .values(enqueued_at=func.coalesce(IndexingState.enqueued_at, func.now()), done_at=func.now())
    )
    return res.rowcount


def claim_stale(conn: Connection, stale_after_s: float, limit: int = 5000) -> dict[str, dict[int, tuple[int, str]]]:
    """Pending rows never enqueued or enqueued long ago, per layer (event pk -> its tenant and
    conversation, in pk order: the graph's tasks are routed by conversation); stamped as enqueued now.

    SKIP LOCKED lets two sweepers (two beat instances by mistake) share the work without doubling it.
    """
    cutoff = datetime.now(timezone.utc) - timedelta(seconds=stale_after_s)
    rows = conn.execute(
        select(IndexingState.layer, IndexingState.event_pk, IndexingState.tenant_id, IndexingState.conversation_id)
        .where(
            IndexingState.done_at.is_(None),
            (IndexingState.enqueued_at.is_(None)) | (IndexingState.enqueued_at < cutoff),
        )
        .order_by(IndexingState.event_pk)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    by_layer: dict[str, dict[int, tuple[int, str]]] = {}
    for layer, pk, tenant_id, conv in rows:
        by_layer.setdefault(layer, {})[pk] = (tenant_id, conv)
    for layer, owners in by_layer.items():
        mark_enqueued(conn, layer, list(owners))
    return by_layer


def indexing_lag(conn: Connection) -> list[tuple[str, int, float]]:
    """(layer, pending events, age in seconds of the oldest pending one), for the scrape-time metrics."""
    rows = conn.execute(text(
        "SELECT s.layer, count(*), coalesce(extract(epoch FROM now() - min(e.ingested_at)), 0) "
        "FROM indexing_state s JOIN events e ON e.id = s.event_pk "
        "WHERE s.done_at IS NULL GROUP BY s.layer"
    ))
    return [(r[0], int(r[1]), float(r[2])) for r in rows]


# ---------------------------------------------------------------- per conversation

def pending_counts(conn: Connection, tenant_id: int, conversation_id: str) -> dict[str, int]:
    """Per layer, how many of the conversation's events still wait for that layer's work."""
    pending_n = (func.count() - func.count(IndexingState.done_at)).label("pending")
    res = conn.execute(
        select(IndexingState.layer, pending_n)
        .where(IndexingState.tenant_id == tenant_id, IndexingState.conversation_id == conversation_id)
        .group_by(IndexingState.layer)
    )
    return {r.layer: r.pending for r in res}


def pending_in_conversation(conn: Connection, layer: str, tenant_id: int, conversation_id: str) -> list[int]:
    res = conn.execute(
        select(IndexingState.event_pk).where(
            IndexingState.tenant_id == tenant_id, IndexingState.conversation_id == conversation_id,
            IndexingState.layer == layer, IndexingState.done_at.is_(None),
        )
    )
    return sorted(r[0] for r in res)


def pending_layers(conn: Connection, tenant_id: int, conversation_id: str, layers: Sequence[str]) -> set[str]:
    """Which of `layers` still have work pending in the conversation."""
    if not layers:
        return set()
    res = conn.execute(
        select(IndexingState.layer).where(
            IndexingState.tenant_id == tenant_id, IndexingState.conversation_id == conversation_id,
            IndexingState.layer.in_(list(layers)), IndexingState.done_at.is_(None),
        ).distinct()
    )
    return {r[0] for r in res}


def first_pending(conn: Connection, convs: Sequence[tuple[int, str]], layers: Sequence[str]) -> dict[str, list[int]]:
    """layer -> one pending event pk per conversation that has work pending for it (enough to
    start a conversation-level task)."""
    if not convs or not layers:
        return {}
    res = conn.execute(
        select(IndexingState.layer, func.min(IndexingState.event_pk))
        .where(
            tuple_(IndexingState.tenant_id, IndexingState.conversation_id).in_(list(convs)),
            IndexingState.layer.in_(list(layers)), IndexingState.done_at.is_(None),
        )
        .group_by(IndexingState.layer, IndexingState.tenant_id, IndexingState.conversation_id)
    )
    out: dict[str, list[int]] = {}
    for layer, pk in res:
        out.setdefault(layer, []).append(pk)
    return out


def mark_conversation_done(conn: Connection, layer: str, tenant_id: int, conversation_id: str) -> None:
    """Every event of the conversation counts as done for `layer` (a forced rebuild): rows are
    created for events that never had one (ingested before the layer existed)."""
    conn.execute(text(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at, done_at) "
        "SELECT e.id, :layer, e.tenant_id, e.conversation_id, now(), now() FROM events e "
        "WHERE e.tenant_id = :t AND e.conversation_id = :c "
        "ON CONFLICT (event_pk, layer) DO UPDATE SET done_at = now(), last_error = NULL "
        "WHERE indexing_state.done_at IS NULL"
    ), {"layer": layer, "t": tenant_id, "c": conversation_id})


def mark_conversations_pending(conn: Connection, tenant_id: int, conversation_ids: Sequence[str], layers: Sequence[str]) -> int:
    """Make the conversations' events pending again for `layers` (they rebuild from the log). The
    rows are left un-enqueued, so the beat sweeper sends them on its next pass."""
    if not conversation_ids or not layers:
        return 0
    res = conn.execute(text(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at) "
        "SELECT e.id, l.layer, e.tenant_id, e.conversation_id, NULL FROM events e "
        "CROSS JOIN unnest(CAST(:layers AS text[])) AS l(layer) "
        "WHERE e.tenant_id = :t AND e.conversation_id = ANY(:convs) "
        "ON CONFLICT (event_pk, layer) DO UPDATE SET done_at = NULL, enqueued_at = NULL, attempts = 0, last_error = NULL"
    ), {"layers": list(layers), "t": tenant_id, "convs": list(conversation_ids)})
    return res.rowcount


def mark_events_pending(conn: Connection, tenant_id: int, pks: Sequence[int], layers: Sequence[str]) -> None:
    """Make these events pending (again) for `layers`; rows are created where missing."""
    if not pks or not layers:
        return
    conn.execute(text(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at) "
        "SELECT e.id, l.layer, e.tenant_id, e.conversation_id, NULL FROM events e "
        "CROSS JOIN unnest(CAST(:layers AS text[])) AS l(layer) "
        "WHERE e.tenant_id = :t AND e.id = ANY(:pks) "
        "ON CONFLICT (event_pk, layer) DO UPDATE SET done_at = NULL, enqueued_at = NULL, attempts = 0, last_error = NULL"
    ), {"layers": list(layers), "t": tenant_id, "pks": list(pks)})
