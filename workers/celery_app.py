"""The Celery application: Redis broker, late acks, retries with backoff, a beat sweeper."""
from __future__ import annotations

from celery import Celery
import structlog
from kombu import Exchange, Queue
from celery.signals import setup_logging, task_postrun, task_prerun, worker_process_init

from app.domain.layer_registry import LAYERS
from app.domain.queues import graph_queue, worker_queues
from app.runtime import install, redis_url
from app.settings import get_settings


PERIODS_QUEUED = 10  # how many periods a periodic task may wait in the queue before it expires


def make_celery() -> Celery:
    s = get_settings()
    install()  # no URL configured: storage and the broker fall back on the embedded servers (app/runtime.py)
    app = Celery("palimpsest", broker=redis_url(), include=[
        "workers.embed", "workers.sweep", "workers.gate", "workers.consolidate", "workers.surprise",
        "workers.engrams", "workers.graph", "workers.heat",
    ])
    app.conf.update(
        task_acks_late=True,  # a task killed mid-way is redelivered, not lost
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": 3600, "socket_connect_timeout": 2, "socket_timeout": 5},
        task_default_queue=s.celery_queue,
        # Every queue of the deployment: the default one and the graph's (app/domain/queues.py). A worker
        # started without -Q consumes them all; `palimpsest worker --role` picks. The dispatcher names a
        # graph task's queue by its conversation; a graph task sent without one (a retry keeps its
        # queue) goes to shard 0.
        task_queues=[Queue(q, Exchange(q), routing_key=q) for q in worker_queues(s.celery_queue, s.graph_shards)],
        task_routes={LAYERS["graph"]: {"queue": graph_queue(s.celery_queue, 0, s.graph_shards)}},
        worker_hijack_root_logger=False,
        beat_schedule={
            # A periodic task that waits in the queue for ten of its periods is dropped, not run late: behind
            # a backlog, at most ten sweeps wait (each re-sends every pending row), and a queue that is
            # merely slow still gets its sweeps.
            "sweep-outbox": {"task": "palimpsest.sweep", "schedule": s.sweep_interval_s,
                             "options": {"expires": PERIODS_QUEUED * s.sweep_interval_s}},
            "refresh-heat": {"task": "palimpsest.heat_refresh", "schedule": s.heat_refresh_interval_s,
                             "options": {"expires": PERIODS_QUEUED * s.heat_refresh_interval_s}},
        },
    )
    return app


celery = make_celery()


def retry_policy() -> dict:
    """How every indexing task retries: late ack (app-wide), exponential backoff with jitter, then
    the outbox sweeper takes over once retries are exhausted."""
    return {
        "autoretry_for": (Exception,),
        "retry_backoff": 2,
        "retry_backoff_max": 300,
        "retry_jitter": True,
        "max_retries": get_settings().task_max_retries,
    }


@setup_logging.connect
def _logging(**_kwargs) -> None:  # keep Celery from replacing our structlog configuration
    from app.logging import configure_logging

    configure_logging()


@worker_process_init.connect
def _fresh_engine(**_kwargs) -> None:
    # A forked child must not reuse the parent's pooled connections.
    from app.storage.db import get_engine

    get_engine.cache_clear()


def serves_embedder(app: Celery) -> bool:
    """Whether this worker consumes the deployment's default queue, where the tasks that encode go
    (embed, gate): a graph-only worker (`--role graph`) never loads the model."""
    return app.conf.task_default_queue in app.amqp.queues.consume_from


@worker_process_init.connect
def _preload_embedder(**_kwargs) -> None:
    """Load the embedder as the worker process starts, in the background (the initializer must
    return within seconds): the first batch no longer waits for the load. Off with
    PALIMPSEST_WORKER_PRELOAD_EMBEDDER=false (the first task that encodes loads it)."""
    if not get_settings().worker_preload_embedder or not serves_embedder(celery):
        return
    from app.adapters.embedder import preload

    log = structlog.get_logger(__name__)
    preload(lambda seconds, err: log.info("embedder_preloaded", seconds=round(seconds, 2)) if err is None
            else log.warning("embedder_preload_failed", seconds=round(seconds, 2), error=repr(err)))


@task_prerun.connect
def _bind_request_id(task=None, **_kwargs) -> None:
    request_id = None
    if task is not None:  # custom message headers surface on the request (protocol 2) or in .headers
        request_id = getattr(task.request, "request_id", None) or (task.request.headers or {}).get("request_id")
    structlog.contextvars.clear_contextvars()
    if request_id:
        structlog.contextvars.bind_contextvars(request_id=request_id)
    if task is not None:
        structlog.contextvars.bind_contextvars(task=task.name, task_id=task.request.id)


@task_postrun.connect
def _unbind(**_kwargs) -> None:
    structlog.contextvars.clear_contextvars()
