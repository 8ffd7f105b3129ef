"""Heat (Cortex §4.4.1) kept current: retrieval is rehearsal, and time cools what is not retrieved.

A query hands the events it put in a context to `bump_access` (through a worker by default, see
`app.services.query.record_retrieval`): each gets one more presentation and its heat now. The
Celery beat calls `refresh_active`, which recomputes the heat of the events of recently active
conversations, since a stored value goes stale as it decays. What heat is, is
`app.domain.layers.heat`; the rows are `app.storage.signals`.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Iterable

import structlog
from sqlalchemy import Connection, Engine

from app.domain.layers.heat import HeatRecord, memory_created_at, refresh, retrieved
from app.settings import get_settings
from app.storage import events as event_store
from app.storage import signals as store
from app.storage.db import get_engine

log = structlog.get_logger(__name__)


def bump_access(conn: Connection, tenant_id: int, pks: Iterable[int], at: datetime | None = None) -> dict[int, float]:
    """Retrieval touched these events: one more presentation each (ACT-R), heat recomputed now.

    Call it after a query returns, in any transaction. Events of other tenants are ignored; an
    event with no signals row yet gets one (importance 0.5 until the surprise layer sets it).
    Returns event pk -> new heat.
    """
    ids = sorted({int(p) for p in pks})
    if not ids:
        return {}
    at = at or datetime.now(timezone.utc)
    known = store.heat_inputs(conn, tenant_id, ids)
    events = event_store.event_times(conn, tenant_id, ids)
    rows = []
    out: dict[int, float] = {}
    for pk in ids:
        if pk not in events:
            continue  # another tenant's, or deleted
        conversation_id, occurred_at, ingested_at = events[pk]
        rec_d, importance = known.get(pk, (None, None))
        rec, state = retrieved(HeatRecord.from_dict(rec_d) if rec_d else None,
                               memory_created_at(occurred_at, ingested_at), importance, at)
        out[pk] = state.heat
        rows.append({"event_pk": pk, "tenant_id": tenant_id, "conversation_id": conversation_id,
                     "heat": state.heat, "heat_stage": state.stage.value, "last_access_at": at,
                     "heat_record": rec.to_dict(), "heat_updated_at": at})
    store.record_accesses(conn, rows)
    return out


def refresh_heat(conn: Connection, now: datetime | None = None, window_h: float = 72.0, batch: int = 5000,
                 tenant_id: int | None = None) -> int:
    """Recompute `heat` for the events of conversations active within `window_h` (a layer ran on
    them, i.e. new events came in, or one of their events was retrieved). Returns rows refreshed."""
    now = now or datetime.now(timezone.utc)
    since = now - timedelta(hours=window_h)
    after, total = 0, 0
    while True:
        rows = store.active_heat_records(conn, since, after, batch, tenant_id)
        if not rows:
            return total
        states = refresh([HeatRecord.from_dict(rec) for _, rec in rows], now)
        store.set_heat(conn, [pk for pk, _ in rows], [s.heat for s in states], [s.stage.value for s in states], now)
        total += len(rows)
        after = rows[-1][0]


def apply_bump(tenant_id: int, pks: list[int], at: datetime, engine: Engine | None = None) -> int:
    """A query's bump, in its own transaction (the worker's side of a queued bump); returns how many."""
    with (engine or get_engine()).begin() as conn:
        return len(bump_access(conn, tenant_id, pks, at))


def refresh_active(tenant_id: int | None = None, engine: Engine | None = None) -> int:
    """The periodic pass: refresh heat in conversations active within PALIMPSEST_HEAT_ACTIVE_WINDOW_H."""
    with (engine or get_engine()).begin() as conn:
        n = refresh_heat(conn, window_h=get_settings().heat_active_window_h, tenant_id=tenant_id)
    if n:
        log.info("heat_refreshed", events=n)
    return n
