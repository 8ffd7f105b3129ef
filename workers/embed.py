"""Task: embed newly written events, one vector per event and model (`app.services.layers.embed_pending`:
idempotent, so a redelivered task changes nothing). It returns how many `embed` rows it marked
done; when that is more than none, `workers.layerbase` starts the layers that waited for the vectors."""
from __future__ import annotations

import structlog

from app.services import layers as layer_service
from workers.celery_app import celery, retry_policy

log = structlog.get_logger(__name__)


@celery.task(name="palimpsest.embed", bind=True, **retry_policy())
def embed_events(self, pks: list[int]) -> int:
    try:
        n = layer_service.embed_pending(pks)
    except Exception as exc:
        layer_service.mark_failed(layer_service.EMBED, pks, repr(exc))
        raise
    log.info("embedded", events=n, requested=len(pks), attempt=self.request.retries)
    return n
