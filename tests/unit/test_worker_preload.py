"""A worker process loads the embedder as it starts when it serves the tasks that encode (embed,
gate: the deployment's default queue); a graph-only worker never loads it."""
from __future__ import annotations

from app.domain.queues import graph_queue
from app.settings import get_settings


def test_only_a_worker_on_the_default_queue_preloads_the_embedder(monkeypatch):
    from app.adapters import embedder as module
    from workers.celery_app import _preload_embedder, celery, serves_embedder

    queues = celery.amqp.queues
    monkeypatch.setattr(queues, "_consume_from", None)  # restored after the test
    calls = []
    monkeypatch.setattr(module, "preload", lambda *a, **k: calls.append("preload"))

    assert serves_embedder(celery)  # a worker started without -Q consumes every queue
    s = get_settings()
    queues.select([graph_queue(celery.conf.task_default_queue, 0, s.graph_shards)])  # `--role graph`
    assert not serves_embedder(celery)
    _preload_embedder()
    assert calls == []
    queues.select([celery.conf.task_default_queue])  # `--role main`
    _preload_embedder()
    assert calls == ["preload"]
