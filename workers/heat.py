"""Tasks: heat (Cortex §4.4.1), `app.services.heat`.

Retrieval is rehearsal: a query hands the events it put in a context to `heat_bump` (with
PALIMPSEST_HEAT_ON_QUERY=queue, the default), so the reply never waits for that write. Heat decays
with time, so a stored value goes stale: the beat's `heat_refresh` recomputes it for the events of
conversations that got new events or had events retrieved within PALIMPSEST_HEAT_ACTIVE_WINDOW_H.
"""
from __future__ import annotations

from datetime import datetime

from app.services import heat
from workers.celery_app import celery
from app.domain.layer_registry import HEAT_BUMP


@celery.task(name="palimpsest.heat_refresh", ignore_result=True)
def heat_refresh() -> int:
    return heat.refresh_active()


@celery.task(name=HEAT_BUMP, ignore_result=True)
def heat_bump(tenant_id: int, pks: list[int], at: str) -> int:
    """One more presentation for each event a query handed out at `at` (ISO time of the query)."""
    return heat.apply_bump(tenant_id, pks, datetime.fromisoformat(at))
