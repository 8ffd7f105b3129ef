"""The background layers' work: embed events, run a conversation-level layer over the conversations
of a task's events, start the layers that waited on it, re-send stale outbox rows, rebuild a layer.

A conversation-level run, under an advisory lock for (layer, tenant, conversation):

1. snapshot the conversation's pending outbox rows for the layer; none -> nothing to do (the
   other chunk tasks of a 1,000-event post find none: one recompute, not one per chunk);
2. if a layer it depends on (`DEPENDS`) still has work pending there, stop: the layer that
   finishes last starts this one (`kick`), and the beat sweeper re-sends stale rows;
3. read the log (time order; gated-out events left out) and, for layers that use them, the stored
   vectors; compute; replace the layer's slice for (tenant, conversation, version);
4. mark exactly the snapshot rows done, in the same transaction. An event that arrived meanwhile
   stays pending and triggers its own run.

A crash anywhere rolls the whole conversation back; a re-run recomputes the same rows. Embedding is
idempotent too: only events whose `embed` row is pending are embedded, and a vector that exists
already is kept. Work is handed on through a `Dispatcher` (Celery in production); the Celery tasks
in `workers/` are thin shells over these functions and own the retry policy.
"""
from __future__ import annotations

import os
import time
from typing import Iterator

import structlog
from sqlalchemy import Engine

from app.adapters.embedder import get_embedder
from app.domain.event import embedding_text
from app.domain.layer_registry import DEPENDS, LAYERS, dependents_of
from app.ports import Dispatcher
from app.services.builds import ENGRAMS, GATE, SURPRISE
from app.services.consolidation_build import CONSOLIDATE
from app.services.graph_build import GRAPH
from app.services import language
from app.services.layer_job import Context, ConversationLayer, Outcome
from app.settings import get_settings
from app.storage import events as event_store
from app.storage import findable, layer_runs, outbox, vectors
from app.storage.db import get_engine

log = structlog.get_logger(__name__)

# The conversation-level layers' jobs, by layer name.
JOBS: dict[str, ConversationLayer] = {j.layer: j for j in (GATE, CONSOLIDATE, SURPRISE, ENGRAMS, GRAPH)}
EMBED = "embed"
# Layers with state extend it with a batch's events (O(batch)); off: every run recomputes (the
# behaviour before migration 0009, kept for comparison: `process_conversation(..., incremental=False)`, `bench.growth`).
INCREMENTAL = os.environ.get("PALIMPSEST_INCREMENTAL_LAYERS", "1") not in ("0", "false", "no")


def embed_pending(pks: list[int], engine: Engine | None = None) -> int:
    """Embed those of `pks` whose `embed` row is pending; returns how many `embed` rows this call
    marked done. 0: nothing was pending (a re-sent task), or a concurrent task embedding the same
    events committed first; then that task, not this one, starts the layers waiting on them."""
    engine = engine or get_engine()
    with engine.connect() as conn:
        todo = outbox.pending_among(conn, EMBED, pks)
        rows = event_store.conversation_events_for_embedding(conn, todo)
    if not rows:
        return 0
    embedder = get_embedder()
    vecs = embedder.encode([embedding_text(content) for _, _, _, _, content in rows])
    with engine.begin() as conn:
        vectors.upsert_embeddings(conn, embedder.name, [(pk, t, c) for pk, t, c, _, _ in rows], vecs)
        # its session's date (and, when set, the turn it answers): issue #17 item 6
        findable.write(conn, [r[0] for r in rows], previous=get_settings().findable_previous)
        return outbox.mark_done(conn, EMBED, [r[0] for r in rows])


def mark_failed(layer: str, pks: list[int], error: str, engine: Engine | None = None) -> None:
    """A task failed on these events: count the attempt and keep the error (they stay pending)."""
    with (engine or get_engine()).begin() as conn:
        outbox.mark_failed(conn, layer, pks, error)


def process_conversation(layer: str, tenant_id: int, conversation_id: str, *, force: bool = False,
                         version: str | None = None, engine: Engine | None = None,
                         incremental: bool | None = None) -> Outcome:
    """Bring one conversation's slice of `layer` up to date if it has pending rows (always, with
    `force`). A layer that keeps state extends it with the pending events alone when it can
    (`incremental`, default PALIMPSEST_INCREMENTAL_LAYERS); otherwise, and always with `force`, it
    recomputes from the whole log."""
    job = JOBS[layer]
    engine = engine or get_engine()
    version = version or job.version()
    use_state = INCREMENTAL if incremental is None else incremental
    t0 = time.perf_counter()
    with engine.begin() as conn:
        layer_runs.lock_conversation(conn, job.layer, tenant_id, conversation_id)
        pending = outbox.pending_in_conversation(conn, job.layer, tenant_id, conversation_id)
        if not pending and not force:
            return Outcome("nothing")
        if not force and outbox.pending_layers(conn, tenant_id, conversation_id, DEPENDS.get(job.layer, ())):
            return Outcome("waiting")
        # English-only rule layers do not run on other languages (app.services.language; #18 item 5)
        if (skipped := language.skip(conn, job.layer, tenant_id, conversation_id, version, pending, force)) is not None:
            return skipped
        model = get_settings().embedding_model_name
        ctx = Context(
            tenant_id, conversation_id, version, pending,
            load_log=lambda: event_store.conversation_log(conn, tenant_id, conversation_id, include_gated_out=True),
            load_vectors=(lambda: vectors.conversation_vectors(conn, tenant_id, conversation_id, model))
            if job.needs_vectors else None,
            force=force,
        )
        stats = None
        if job.extend is not None and use_state and not force:
            stats = job.extend(conn, ctx)
        if stats is None:
            stats = job.build(conn, ctx) or {}
        n_events = int(stats["log_events"]) if "log_events" in stats else len(ctx.rows)
        seconds = time.perf_counter() - t0
        layer_runs.record_run(conn, tenant_id, conversation_id, job.layer, version, n_events, seconds, stats)
        if force:
            outbox.mark_conversation_done(conn, job.layer, tenant_id, conversation_id)
        else:
            outbox.mark_done(conn, job.layer, pending)
    log.info("layer_built", layer=job.layer, tenant=tenant_id, conversation=conversation_id, events=n_events,
             marked=len(pending), seconds=round(seconds, 3), version=version, run=stats.get("run", "full"),
             **({"assembly": stats["assembly"]} if "assembly" in stats else {}))  # the graph's: held or rebuilt
    if (fell := (stats.get("llm_assertions") or {}).get("fallback_batches")):  # said, never hidden
        log.warning("llm_assertions_fell_back", layer=job.layer, tenant=tenant_id, conversation=conversation_id,
                    batches=fell, reasons=stats["llm_assertions"].get("fallback_reasons"))
    return Outcome("done", n_events, len(pending), seconds, stats)


def run_for_pks(layer: str, pks: list[int], dispatcher: Dispatcher | None = None) -> dict[str, int]:
    """A task's work: every conversation of the given events, one after the other. With a
    `dispatcher`, each conversation built starts the layers that waited on this one (`kick`)."""
    engine = get_engine()
    with engine.connect() as conn:
        convs = event_store.conversations_of(conn, pks)
    counts = {"done": 0, "nothing": 0, "waiting": 0}
    for tenant_id, conv in convs:
        out = process_conversation(layer, tenant_id, conv, engine=engine)
        counts[out.status] += 1
        if out.status == "done" and dispatcher is not None:
            kick(layer, [(tenant_id, conv)], dispatcher)
    return counts


def kick(finished_layer: str, convs: list[tuple[int, str]], dispatcher: Dispatcher) -> dict[str, int]:
    """`finished_layer` may have been the last thing some waiting layers waited for: send a task
    for each such layer and conversation whose dependencies are now clear."""
    waiting = dependents_of(finished_layer)
    if not waiting or not convs:
        return {}
    with get_engine().connect() as conn:
        ready: dict[str, dict[int, tuple[int, str]]] = {}  # layer -> {event pk: its (tenant, conversation)}
        for tenant_id, conv in convs:
            busy = outbox.pending_layers(conn, tenant_id, conv, list(LAYERS))
            for layer in waiting:
                if layer in busy and not (busy & set(DEPENDS.get(layer, ()))):
                    first = outbox.first_pending(conn, [(tenant_id, conv)], [layer]).get(layer, [])
                    ready.setdefault(layer, {}).update(dict.fromkeys(first, (tenant_id, conv)))
    sent = {}
    for layer, owners in ready.items():
        sent[layer] = dispatcher.enqueue(layer, list(owners), owners)
    if sent:
        log.info("layers_started", after=finished_layer, **{k: len(v) for k, v in ready.items()})
    return sent


def kick_after_embed(pks: list[int], dispatcher: Dispatcher) -> dict[str, int]:
    """The embed layer finished these events: start the layers waiting on it in their conversations.
    Called by the embed task that marked their rows done (`embed_pending` > 0), never by one that
    found them done: that one changed nothing any layer waits for."""
    with get_engine().connect() as conn:
        convs = event_store.conversations_of(conn, pks)
    return kick(EMBED, convs, dispatcher)


def sweep_once(dispatcher: Dispatcher) -> dict[str, int]:
    """Re-send outbox rows that stayed pending too long (never enqueued, or a task was lost: a
    crashed broker, a killed worker, exhausted retries); the work's idempotence makes repeats
    harmless. Returns how many rows per layer."""
    with get_engine().begin() as conn:
        stale = outbox.claim_stale(conn, get_settings().sweep_stale_after_s)
    for layer, owners in stale.items():
        dispatcher.enqueue(layer, list(owners), owners)
    counts = {layer: len(owners) for layer, owners in stale.items()}
    if counts:
        log.info("sweep_requeued", **counts)
    return counts


# ---------------------------------------------------------------- rebuild (the `palimpsest rebuild` command)

REBUILDABLE = (EMBED, *JOBS)
REBUILT_BY_ALL = ("consolidate", "surprise", "engrams", "graph")


def rebuild(layer: str, tenant_id: int, conversation_id: str, *, as_version: str | None = None,
            prune: bool = False) -> dict:
    """Recompute `layer` for one conversation from the verbatim log, synchronously (no worker).

    The conversation's rows are made pending first; layers that read vectors first embed what is
    not embedded yet. A conversation-level layer is rebuilt in one transaction (readers see the
    old rows until it commits), under `as_version` beside the current rows when given; `prune` then
    deletes the rows of every other version. Returns what the command prints."""
    model = get_settings().embedding_model_name
    engine = get_engine()
    with engine.begin() as conn:
        if layer == EMBED:
            vectors.delete_embeddings(conn, tenant_id, conversation_id, model)
        outbox.mark_conversations_pending(conn, tenant_id, [conversation_id], [layer])
    if layer == EMBED or JOBS[layer].needs_vectors:
        with engine.connect() as conn:
            todo = outbox.pending_in_conversation(conn, EMBED, tenant_id, conversation_id)
        for chunk in _chunks(todo, 256):
            embed_pending(chunk, engine)
        if layer == EMBED:
            return {"layer": layer, "embedded": len(todo)}
    out = process_conversation(layer, tenant_id, conversation_id, force=True, version=as_version, engine=engine)
    version = as_version or JOBS[layer].version()
    dropped = 0
    if prune:
        with engine.begin() as conn:
            dropped = layer_runs.drop_other_versions(conn, tenant_id, conversation_id, layer, version)
    return {"layer": layer, "version": version, "outcome": out, "pruned": dropped if prune else None}


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
