"""Job (Celery beat): re-enqueue outbox rows that stayed pending too long.

This is what makes delivery eventual-but-certain: a task lost with a crashed broker, a killed
worker or exhausted retries is sent again, and the tasks' idempotence makes repeats harmless.
"""
from __future__ import annotations

import structlog

from app.settings import get_settings
from app.storage import indexing
from app.storage.db import get_engine
from workers.celery_app import celery
from workers.dispatch import enqueue

log = structlog.get_logger(__name__)


def sweep_once() -> dict[str, int]:
    s = get_settings()
    with get_engine().begin() as conn:
        stale = indexing.claim_stale(conn, s.sweep_stale_after_s)
    for layer, pks in stale.items():
        enqueue(layer, pks, s.index_chunk_size)
    counts = {layer: len(pks) for layer, pks in stale.items()}
    if counts:
        log.info("sweep_requeued", **counts)
    return counts


@celery.task(name="palimpsest.sweep", ignore_result=True)
def sweep() -> dict[str, int]:
    return sweep_once()
