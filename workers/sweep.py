"""Task (Celery beat): re-enqueue outbox rows that stayed pending too long (`app.services.layers.sweep_once`).

This is what makes delivery eventual-but-certain: a task lost with a crashed broker, a killed
worker or exhausted retries is sent again, and the tasks' idempotence makes repeats harmless.
"""
from __future__ import annotations

from app.services.layers import sweep_once
from workers.celery_app import celery
from workers.layerbase import dispatcher


@celery.task(name="palimpsest.sweep", ignore_result=True)
def sweep() -> dict[str, int]:
    return sweep_once(dispatcher())
