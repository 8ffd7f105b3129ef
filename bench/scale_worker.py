"""The Celery app of the scale benchmark's worker when only the `embed` layer is measured
(`palimpsest bench scale`, the default `--layers embed`).

The API still writes every layer's outbox rows and enqueues every layer's tasks, as in production.
This worker runs the real embed task, and takes the conversation-level layers' tasks off the queue
without doing them: their rows stay pending (the status endpoint shows them), and nothing competes
with embedding for the CPU. Only `workers.embed` is imported, so the post-embed hook that starts
the dependent layers (`workers.layerbase`) is not installed either. Run `--layers all` to measure
the real worker with every layer.
"""
from __future__ import annotations

from workers.celery_app import celery
from app.domain.layer_registry import CONVERSATION_LAYERS, LAYERS

celery.conf.include = ["workers.embed", "workers.heat"]  # queries hand their heat bumps to the worker


def _parked(layer: str):  # noqa: ANN202
    @celery.task(name=LAYERS[layer])
    def parked(pks: list[int]) -> int:
        return 0

    return parked


PARKED = {layer: _parked(layer) for layer in CONVERSATION_LAYERS}
