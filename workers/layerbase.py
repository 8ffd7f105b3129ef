"""What the Celery tasks of the layers share: the task shell of a conversation-level layer (late
ack, retried with backoff; the work is `app.services.layers.run_for_pks`), the hook that starts the
layers waiting on the embed layer when its task marked rows done, and the dispatcher the tasks hand work on
through.
"""
from __future__ import annotations

import structlog
from celery.signals import task_postrun

from app.adapters.dispatch import CeleryDispatcher
from app.domain.layer_registry import LAYERS
from app.ports import Dispatcher
from app.services import layers as layer_service
from app.settings import get_settings

log = structlog.get_logger(__name__)


def dispatcher() -> Dispatcher:
    """How the tasks hand work on: Celery tasks of PALIMPSEST_INDEX_CHUNK_SIZE events each."""
    return CeleryDispatcher(get_settings().index_chunk_size)


@task_postrun.connect
def _after_embed(task=None, args=None, state=None, retval=None, **_kwargs) -> None:  # noqa: ANN001
    """The embed task lives in workers/embed.py; when it succeeds having marked rows done (its
    return value), start the layers waiting on it. One that marked none (a sweeper's re-send of
    done rows, a duplicate that lost the race) sends nothing: the task that marked them kicks."""
    if task is None or getattr(task, "name", None) != LAYERS["embed"] or state != "SUCCESS" or not retval:
        return
    try:
        layer_service.kick_after_embed(list(args[0]) if args else [], dispatcher())
    except Exception as exc:  # noqa: BLE001 - the sweeper starts them later anyway
        log.warning("kick_failed", after="embed", error=str(exc))


def make_task(celery, layer: str):  # noqa: ANN001, ANN201
    """The Celery task of a conversation-level layer (late ack, retried with backoff)."""

    from workers.celery_app import retry_policy

    @celery.task(name=LAYERS[layer], bind=True, **retry_policy())
    def task(self, pks: list[int]) -> dict[str, int]:
        try:
            counts = layer_service.run_for_pks(layer, pks, dispatcher())
        except Exception as exc:
            layer_service.mark_failed(layer, pks, repr(exc))
            raise
        log.info("layer_task", layer=layer, requested=len(pks), attempt=self.request.retries, **counts)
        return counts

    return task
