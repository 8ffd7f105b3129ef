"""What every conversation-level job shares: resolve the conversations of a task's events, and
per conversation recompute the layer from the whole verbatim log in one transaction.

Per conversation, under an advisory lock for (layer, tenant, conversation):

1. snapshot the conversation's pending outbox rows for the layer; none -> nothing to do (the
   other chunk tasks of a 1,000-event post find none: one recompute, not one per chunk);
2. if a layer it depends on (`workers.registry.DEPENDS`) still has work pending there, stop: the
   layer that finishes last starts this one (`kick`), and the beat sweeper re-sends stale rows;
3. read the log (time order; gated-out events left out) and, for layers that use them, the stored
   vectors; compute; replace the layer's slice for (tenant, conversation, version);
4. mark exactly the snapshot rows done, in the same transaction. An event that arrived meanwhile
   stays pending and triggers its own run.

A crash anywhere rolls the whole conversation back; a re-run recomputes the same rows.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np
import structlog
from celery.signals import task_postrun
from sqlalchemy import Connection, Engine

from app.layers.events import LayerEvent
from app.settings import get_settings
from app.storage import indexing
from app.storage import layers as store
from app.storage.db import get_engine
from app.storage.events import EventRow
from workers.registry import DEPENDS, LAYERS, dependents_of

log = structlog.get_logger(__name__)


@dataclass
class Context:
    """One conversation's input to a layer."""

    tenant_id: int
    conversation_id: str
    version: str
    rows: list[EventRow]  # admitted events, time order
    pending: list[int]  # outbox rows this run will mark done
    vectors: dict[int, np.ndarray] | None = None
    all_rows: list[EventRow] = field(default_factory=list)  # gated-out events included

    @cached_property
    def events(self) -> list[LayerEvent]:
        return [LayerEvent.of(r, seq=i) for i, r in enumerate(self.rows)]

    def matrix(self) -> np.ndarray | None:
        """Vectors aligned with `rows` (None unless every admitted event has one)."""
        if not self.vectors or not self.rows or any(r.id not in self.vectors for r in self.rows):
            return None
        return np.vstack([self.vectors[r.id] for r in self.rows])


@dataclass(frozen=True)
class ConversationLayer:
    layer: str
    version: Callable[[], str]  # the current version (the graph's depends on the extractor)
    build: Callable[[Connection, Context], dict]  # writes the slice, returns stats
    needs_vectors: bool = False


@dataclass(frozen=True)
class Outcome:
    status: str  # done | nothing | waiting
    events: int = 0
    marked: int = 0
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)


def process_conversation(job: ConversationLayer, tenant_id: int, conversation_id: str, *, force: bool = False,
                         version: str | None = None, engine: Engine | None = None) -> Outcome:
    """Recompute one conversation's slice if it has pending rows (always, with `force`)."""
    engine = engine or get_engine()
    version = version or job.version()
    t0 = time.perf_counter()
    with engine.begin() as conn:
        store.lock_conversation(conn, job.layer, tenant_id, conversation_id)
        pending = store.pending_in_conversation(conn, job.layer, tenant_id, conversation_id)
        if not pending and not force:
            return Outcome("nothing")
        if not force and store.pending_layers(conn, tenant_id, conversation_id, DEPENDS.get(job.layer, ())):
            return Outcome("waiting")
        all_rows = store.conversation_log(conn, tenant_id, conversation_id, include_gated_out=True)
        rows = [r for r in all_rows if r.gate_status != "gated_out"]
        vectors = None
        if job.needs_vectors:
            vectors = store.conversation_vectors(conn, tenant_id, conversation_id, get_settings().embedding_model_name)
        ctx = Context(tenant_id, conversation_id, version, rows, pending, vectors, all_rows)
        stats = job.build(conn, ctx) or {}
        seconds = time.perf_counter() - t0
        store.record_run(conn, tenant_id, conversation_id, job.layer, version, len(rows), seconds, stats)
        if force:
            store.mark_conversation_done(conn, job.layer, tenant_id, conversation_id)
        else:
            indexing.mark_done(conn, job.layer, pending)
    log.info("layer_built", layer=job.layer, tenant=tenant_id, conversation=conversation_id, events=len(rows),
             marked=len(pending), seconds=round(seconds, 3), version=version)
    return Outcome("done", len(rows), len(pending), seconds, stats)


def run_for_pks(job: ConversationLayer, pks: list[int]) -> dict[str, int]:
    """A task's work: every conversation of the given events, one after the other."""
    engine = get_engine()
    with engine.connect() as conn:
        convs = store.conversations_of(conn, pks)
    counts = {"done": 0, "nothing": 0, "waiting": 0}
    for tenant_id, conv in convs:
        out = process_conversation(job, tenant_id, conv, engine=engine)
        counts[out.status] += 1
        if out.status == "done":
            kick(job.layer, [(tenant_id, conv)])
    return counts


def kick(finished_layer: str, convs: list[tuple[int, str]]) -> dict[str, int]:
    """`finished_layer` may have been the last thing some waiting layers waited for: send a task
    for each such layer and conversation whose dependencies are now clear."""
    waiting = dependents_of(finished_layer)
    if not waiting or not convs:
        return {}
    from workers.dispatch import enqueue

    with get_engine().connect() as conn:
        ready: dict[str, list[int]] = {}
        for tenant_id, conv in convs:
            busy = store.pending_layers(conn, tenant_id, conv, list(LAYERS))
            for layer in waiting:
                if layer in busy and not (busy & set(DEPENDS.get(layer, ()))):
                    first = store.first_pending(conn, [(tenant_id, conv)], [layer]).get(layer, [])
                    ready.setdefault(layer, []).extend(first)
    sent = {}
    for layer, pks in ready.items():
        sent[layer] = enqueue(layer, pks, get_settings().index_chunk_size)
    if sent:
        log.info("layers_started", after=finished_layer, **{k: len(v) for k, v in ready.items()})
    return sent


@task_postrun.connect
def _after_embed(task=None, args=None, state=None, **_kwargs) -> None:  # noqa: ANN001
    """The embed task lives in workers/embed.py; when it succeeds, start the layers waiting on it."""
    if task is None or getattr(task, "name", None) != LAYERS["embed"] or state != "SUCCESS":
        return
    try:
        pks = list(args[0]) if args else []
        with get_engine().connect() as conn:
            convs = store.conversations_of(conn, pks)
        kick("embed", convs)
    except Exception as exc:  # noqa: BLE001 - the sweeper starts them later anyway
        log.warning("kick_failed", after="embed", error=str(exc))


def make_task(celery, job: ConversationLayer):  # noqa: ANN001, ANN201
    """The Celery task of a conversation-level layer (late ack, retried with backoff)."""

    from workers.celery_app import retry_policy

    @celery.task(name=LAYERS[job.layer], bind=True, **retry_policy())
    def task(self, pks: list[int]) -> dict[str, int]:
        try:
            counts = run_for_pks(job, pks)
        except Exception as exc:
            with get_engine().begin() as conn:
                indexing.mark_failed(conn, job.layer, pks, repr(exc))
            raise
        log.info("layer_task", layer=job.layer, requested=len(pks), attempt=self.request.retries, **counts)
        return counts

    return task
