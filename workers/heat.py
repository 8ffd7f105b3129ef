"""Job (Celery beat): refresh per-event heat (Cortex §4.4.1) in recently active conversations.

Heat decays with time (ACT-R base level over the event's presentations, stage-dependent rates and
floors), so a stored value goes stale; this pass recomputes it for the events of conversations
that got new events or had events retrieved within PALIMPSEST_HEAT_ACTIVE_WINDOW_H.

Retrieval is rehearsal: a query hands the events it put in a context to `heat_bump` (with
PALIMPSEST_HEAT_ON_QUERY=queue, the default), so the reply never waits for that write. The
importance comes from the surprise layer.
"""
from __future__ import annotations

from datetime import datetime

import structlog

from app.settings import get_settings
from app.storage import layers as store
from app.storage.db import get_engine
from workers.celery_app import celery
from workers.registry import HEAT_BUMP

log = structlog.get_logger(__name__)


def refresh_once(tenant_id: int | None = None) -> int:
    s = get_settings()
    with get_engine().begin() as conn:
        n = store.refresh_heat(conn, window_h=s.heat_active_window_h, tenant_id=tenant_id)
    if n:
        log.info("heat_refreshed", events=n)
    return n


@celery.task(name="palimpsest.heat_refresh", ignore_result=True)
def heat_refresh() -> int:
    return refresh_once()


@celery.task(name=HEAT_BUMP, ignore_result=True)
def heat_bump(tenant_id: int, pks: list[int], at: str) -> int:
    """One more presentation for each event a query handed out at `at` (ISO time of the query)."""
    with get_engine().begin() as conn:
        return len(store.bump_access(conn, tenant_id, pks, datetime.fromisoformat(at)))
