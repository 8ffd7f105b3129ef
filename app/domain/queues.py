"""Which Celery queue a layer's task goes to (#18 item 4: graph tasks get affinity to one process).

The graph layer keeps a conversation's assembled graph in the worker process's memory between
batches (`app.services.graph_build`, `_WARM`); a batch is cheap only on the process that ran the
conversation's previous batch. So its tasks go to queues of their own, each consumed by one
single-process worker: `<queue>.graph`, or with `graph_shards` N > 1 `<queue>.graph.<i>`, where a
conversation's shard i is a stable hash of (tenant, conversation) (the same in every process and
every release: not Python's salted `hash`). Every other task stays on the deployment's queue.

Pure data and arithmetic; the Celery adapter (`app.adapters.dispatch`), the Celery app
(`workers.celery_app`), the worker command and the embedded stack read it.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

# Layers whose build keeps a conversation's state in the process's memory: routed by conversation.
AFFINE_LAYERS: frozenset[str] = frozenset({"graph"})

# What a worker consumes: everything (the default: one worker runs the whole service), the
# deployment's queue without the graph's, or the graph's queues (all shards, or one).
ROLES = ("all", "main", "graph")


def shard_of(tenant_id: int, conversation_id: str, shards: int) -> int:
    """The graph shard of a conversation: stable across processes, hosts and restarts."""
    if shards <= 1:
        return 0
    digest = hashlib.blake2b(f"{tenant_id}\x1f{conversation_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def graph_queue(base: str, shard: int, shards: int) -> str:
    """The queue of graph shard `shard` (of `shards`)."""
    if not 0 <= shard < max(1, shards):
        raise ValueError(f"graph shard {shard} out of range: there are {shards}")
    return f"{base}.graph" if shards <= 1 else f"{base}.graph.{shard}"


def graph_queues(base: str, shards: int) -> list[str]:
    return [graph_queue(base, i, shards) for i in range(max(1, shards))]


def queue_for(layer: str, base: str, shards: int, owner: tuple[int, str] | None = None) -> str:
    """The queue a task of `layer` goes to; `owner` is the (tenant, conversation) of its events.
    A graph task whose conversation is not known goes to shard 0 (any graph worker builds any
    conversation correctly; only that batch may miss the held assembly)."""
    if layer not in AFFINE_LAYERS:
        return base
    return graph_queue(base, shard_of(*owner, shards) if owner is not None else 0, shards)


def worker_queues(base: str, shards: int, role: str = "all", shard: int | None = None) -> list[str]:
    """The queues a worker of `role` consumes (`palimpsest worker --role/--graph-shard`)."""
    if role not in ROLES:
        raise ValueError(f"unknown worker role {role!r}: one of {', '.join(ROLES)}")
    if shard is not None:
        if role == "main":
            raise ValueError("--graph-shard is for a graph worker")
        return [graph_queue(base, shard, shards)]
    graph = graph_queues(base, shards)
    return {"all": [base, *graph], "main": [base], "graph": graph}[role]


def group_by_queue(layer: str, pks: Iterable[int], base: str, shards: int,
                   owners: dict[int, tuple[int, str]] | None = None) -> dict[str, list[int]]:
    """The events of one enqueue, per queue, in their order: one group for a layer that is not
    routed; per shard for the graph (`owners` maps an event pk to its (tenant, conversation))."""
    groups: dict[str, list[int]] = {}
    for pk in pks:
        owner = owners.get(pk) if owners and layer in AFFINE_LAYERS else None
        groups.setdefault(queue_for(layer, base, shards, owner), []).append(pk)
    return groups


def worker_node(role: str, shard: int | None = None) -> str:
    """The Celery node name of a worker of `role` (`-n`): graph workers are `graph@host` or
    `graph<i>@host`, so one beside the main worker on a host is told apart (and pinged) by name."""
    if role != "graph" and shard is None:
        return "celery@%h"
    return f"graph{'' if shard is None else shard}@%h"


def worker_args(base: str, shards: int, role: str = "all", concurrency: int = 1,
                shard: int | None = None) -> list[str]:
    """The `celery worker` arguments of a worker of `role` on the deployment whose queue is `base`."""
    queues = worker_queues(base, shards, role, shard)
    return ["worker", "--loglevel", "INFO", "--concurrency", str(concurrency), "-E", "-Q", ",".join(queues),
            "-n", worker_node(role, shard)]
