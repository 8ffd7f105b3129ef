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


def test_preload_off_leaves_the_load_to_the_first_task(monkeypatch):
    from app.adapters import embedder as module
    from app.settings import Settings
    from workers.celery_app import _preload_embedder, celery, serves_embedder

    assert Settings().worker_preload_embedder is True  # the default
    monkeypatch.setenv("PALIMPSEST_WORKER_PRELOAD_EMBEDDER", "false")
    off = Settings()
    assert off.worker_preload_embedder is False  # the variable reaches the typed field

    monkeypatch.setattr(celery.amqp.queues, "_consume_from", None)  # every queue: it serves the embedder
    calls = []
    monkeypatch.setattr(module, "preload", lambda *a, **k: calls.append("preload"))
    assert serves_embedder(celery)
    monkeypatch.setattr(get_settings(), "worker_preload_embedder", False)
    _preload_embedder()
    assert calls == []  # the first task that encodes loads it
    monkeypatch.setattr(get_settings(), "worker_preload_embedder", True)
    _preload_embedder()
    assert calls == ["preload"]
