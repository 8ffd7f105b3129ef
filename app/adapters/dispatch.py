"""The Celery `Dispatcher` (`app.ports`): background work is sent by task name, so whoever
enqueues (the API, the CLI, the workers themselves) never imports the task code.

Graph tasks go to queues of their own (`app.domain.queues`: the graph keeps a conversation's
assembly in the worker process that built its last batch, so its tasks are routed by conversation to
single-process graph workers); every other task goes to the deployment's queue (`celery_queue`).

Publishing is best effort: if the broker is down the event is still committed with its outbox
row, and the beat sweeper enqueues it once the broker is back. Celery itself is imported on the
first publish, not when this module is.
"""
from __future__ import annotations

import time

import structlog

from app.domain.layer_registry import LAYERS
from app.domain.queues import group_by_queue
from app.settings import get_settings

log = structlog.get_logger(__name__)


# After a failed publish, later ones are skipped for a moment: a post that enqueues several layers
# waits for one broker timeout, not one per layer (the sweeper sends what was skipped).
BROKER_BACKOFF_S = 5.0
_broker_down_until = 0.0


def chunks(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def enqueue(layer: str, pks: list[int], chunk_size: int, owners: dict[int, tuple[int, str]] | None = None) -> int:
    """Send one task per chunk and queue (`owners`: each event's (tenant, conversation), which routes
    the graph's tasks); returns how many chunks were sent (fewer if the broker is unreachable)."""
    s = get_settings()
    sent = 0
    for queue, group in group_by_queue(layer, pks, s.celery_queue, s.graph_shards, owners).items():
        for chunk in chunks(group, chunk_size):
            if not publish(LAYERS[layer], [chunk], queue):
                return sent  # the sweeper sends the rest
            sent += 1
    return sent


def publish(task: str, args: list, queue: str | None = None) -> bool:
    """Send one task by name (to `queue`, else the app's routes: `workers.celery_app`); False (and a
    warning) when the broker is unreachable."""
    global _broker_down_until
    if time.monotonic() < _broker_down_until:
        return False
    from workers.celery_app import celery

    # Carry the request id into the task so one id follows an event from POST to indexed.
    request_id = structlog.contextvars.get_contextvars().get("request_id")
    headers = {"request_id": request_id} if request_id else None
    try:
        celery.send_task(task, args=args, retry=False, headers=headers, **({"queue": queue} if queue else {}))
        return True
    except Exception as exc:  # noqa: BLE001 - any broker failure: the caller decides what to do instead
        _broker_down_until = time.monotonic() + BROKER_BACKOFF_S
        log.warning("publish_failed", task=task, error=str(exc))
        return False


class CeleryDispatcher:
    """`app.ports.Dispatcher` over the Celery broker: a layer's events go in chunks of `chunk_size`
    (setting `index_chunk_size`), one task per chunk."""

    def __init__(self, chunk_size: int) -> None:
        self.chunk_size = chunk_size

    def enqueue(self, layer: str, pks: list[int], owners: dict[int, tuple[int, str]] | None = None) -> int:
        return enqueue(layer, pks, self.chunk_size, owners)

    def publish(self, task: str, args: list) -> bool:
        return publish(task, args)

    def ping(self) -> None:
        from workers.celery_app import celery

        with celery.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
