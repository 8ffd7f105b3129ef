"""Enqueue background work by task name (the API need not import the task code).

Publishing is best effort: if the broker is down the event is still committed with its outbox
row, and the beat sweeper enqueues it once the broker is back.
"""
from __future__ import annotations

import time

import structlog

from workers.registry import LAYERS

log = structlog.get_logger(__name__)


# After a failed publish, later ones are skipped for a moment: a post that enqueues several layers
# waits for one broker timeout, not one per layer (the sweeper sends what was skipped).
BROKER_BACKOFF_S = 5.0
_broker_down_until = 0.0


def chunks(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def enqueue(layer: str, pks: list[int], chunk_size: int) -> int:
    """Send one task per chunk; returns how many chunks were sent (0 if the broker is unreachable)."""
    sent = 0
    for chunk in chunks(pks, chunk_size):
        if not publish(LAYERS[layer], [chunk]):
            break  # the sweeper sends the rest
        sent += 1
    return sent


def publish(task: str, args: list) -> bool:
    """Send one task by name; False (and a warning) when the broker is unreachable."""
    global _broker_down_until
    if time.monotonic() < _broker_down_until:
        return False
    from workers.celery_app import celery

    # Carry the request id into the task so one id follows an event from POST to indexed.
    request_id = structlog.contextvars.get_contextvars().get("request_id")
    headers = {"request_id": request_id} if request_id else None
    try:
        celery.send_task(task, args=args, retry=False, headers=headers)
        return True
    except Exception as exc:  # noqa: BLE001 - any broker failure: the caller decides what to do instead
        _broker_down_until = time.monotonic() + BROKER_BACKOFF_S
        log.warning("publish_failed", task=task, error=str(exc))
        return False
