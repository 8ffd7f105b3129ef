"""`palimpsest bench scale`: how the service's cost grows from 10 thousand to 1 million events in one tenant.

One run starts the service (embedded default under `var/bench-scale/`, on a fresh database), then
grows one tenant size by size (10k, then 90k more for 100k, ...) through the HTTP API, and measures
at each size: ingest throughput (committed; embedded), the embedding share of the embedder's raw
throughput (same texts, same machine, in this process, while the worker is idle), query latency and
recall@10 on the planted pairs (scoped to the tenant and to the conversation, with and without the
cross-encoder when one is installed), database bytes per event and peak memory of API and worker.
Results go to `bench/results/scale-<timestamp>.{json,md,png}`, rewritten after every size.
"""
from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from app.domain.event import turn_text
from app.embedded import ServiceStack
from bench.datasets import spread
from bench.datasets import default_data_dir
from bench.harness import REPO_ROOT, _git, exclusive
from bench.scale_data import Corpus, Event, Planted, SourcePool

Log = Callable[[str], None]
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)


@dataclass
class ScaleOptions:
    sizes: tuple[int, ...] = DEFAULT_SIZES
    queries: int = 200  # planted pairs asked per size and mode (spread over the tenant)
    seed: int = 7
    layers: str = "embed"  # "embed": conversation layers parked (bench/scale_worker.py); "all": the real worker
    batch: int = 1000  # events per POST (the API's maximum)
    clients: int = 3  # POSTs in flight
    raw_sample: int = 1000  # texts of the step encoded in-process for the raw embedder throughput
    token_budget: int = 1000
    top_k: int = 10
    assistant_share: float = 0.2
    out_dir: Path = REPO_ROOT / "bench" / "results"
    var_dir: Path = REPO_ROOT / "var" / "bench-scale"
    data_dir: Path = field(default_factory=default_data_dir)
    reranker: Path | None = None  # default: <var_dir>/models/reranker-minilm, else var/models/reranker-minilm
    stall_s: float = 600.0
    # for the tests: run on given services (no fresh database) and a private Celery queue
    database_url: str | None = None
    redis_url: str | None = None
    queue: str | None = None
    tag: str | None = None
    # PALIMPSEST_* settings for the service and the raw embedder alike (ablations: chunk size, threads, ...)
    service_env: dict[str, str] = field(default_factory=dict)
    # A bench.scale_vectors folder: each step's events below its last `api_events` are seeded from it
    # (bench/scale_seed.py) instead of posted, so 1M events fit in an hour on 2 cores. None: all posted.
    vectors: Path | None = None
    api_events: int = 10_000


@dataclass
class ScaleStack(ServiceStack):
    """The service stack, with the worker swapped for bench/scale_worker.py when only `embed` is measured."""

    embed_only: bool = True

    def _spawn(self, name: str, args: list[str]) -> None:
        if name == "worker" and self.embed_only:
            args = ["bench.scale_worker" if a == "workers.celery_app" else a for a in args]
        super()._spawn(name, args)


def _reranker_path(opts: ScaleOptions) -> Path | None:
    cands = [opts.reranker] if opts.reranker else [opts.var_dir / "models" / "reranker-minilm",
                                                   REPO_ROOT / "var" / "models" / "reranker-minilm"]
    return next((p.resolve() for p in cands if p and (p / "config.json").exists()), None)


def _fresh_embedded(var_dir: Path, log: Log) -> str:
    """Start the embedded PostgreSQL and Redis on an empty database and queue; return the database URL."""
    from app.embedded import APP_DB, drop_database, ensure_postgres, stop_redis

    url = ensure_postgres(var_dir)
    drop_database(url.replace(f"/{APP_DB}?", "/postgres?"), APP_DB)
    stop_redis(var_dir)
    shutil.rmtree(var_dir / "redis", ignore_errors=True)  # queued tasks of an earlier run
    log(f"fresh database and queue under {var_dir}")
    return ensure_postgres(var_dir)


def run(opts: ScaleOptions, log: Log = print) -> tuple[dict[str, Any], dict[str, Path]]:
    from app.storage import tenants
    from app.storage.db import make_engine
    from app.storage.migrate import upgrade
    from bench.runner import Client
    from bench.scale_report import write
    from bench.scale_seed import check as seed_check, seed
    from bench.scale_vectors import SeedVectors

    from app.settings import get_settings

    os.environ.update(opts.service_env)  # the in-process embedder must read the same settings
    get_settings.cache_clear()
    sizes = tuple(sorted(set(opts.sizes)))
    run_id = datetime.now().strftime("%Y%m%d-%H%M%S")
    stem = f"scale-{opts.tag + '-' if opts.tag else ''}{run_id}"
    corpus = Corpus(SourcePool.load(opts.data_dir), opts.seed, assistant_share=opts.assistant_share)
    result: dict[str, Any] = {
        "benchmark": "scale", "run_id": run_id, "git": _git(), "options": _jsonable(asdict(opts)),
        "machine": {"cpus": os.cpu_count()},
        "points": [],
    }
    paths: dict[str, Path] = {}
    with ExitStack() as stack_ctx:
        embedded = not opts.database_url
        if embedded:
            stack_ctx.enter_context(exclusive(opts.var_dir))
            db_url = _fresh_embedded(opts.var_dir, log)
            stack_ctx.callback(_stop_embedded, opts.var_dir)
        else:
            db_url = opts.database_url
        upgrade(db_url)
        engine = make_engine(db_url, pool_size=2)
        stack_ctx.callback(engine.dispose)
        with engine.begin() as conn:  # one tenant holds everything
            tenant_id = tenants.create_tenant(conn, f"scale-{run_id}")
            key = tenants.create_key(conn, tenant_id)
        rr = _reranker_path(opts)
        env = {"PALIMPSEST_RERANKER_MODEL_PATH": str(rr) if rr else str(opts.var_dir / "no-reranker"),
               **opts.service_env}
        stack = ScaleStack(var_dir=opts.var_dir, database_url=db_url, redis_url=opts.redis_url, queue=opts.queue,
                           beat=opts.layers == "all", embed_only=opts.layers == "embed",
                           log_dir=opts.var_dir / "logs", extra_env=env)
        t = time.perf_counter()
        stack.start()
        stack_ctx.callback(stack.stop)
        log(f"service up in {time.perf_counter() - t:.0f}s at {stack.base_url} (layers: {opts.layers}; "
            f"reranker: {rr or 'none'})")
        client = Client(stack.base_url, key, pool=opts.clients + 2)
        stack_ctx.callback(client.close)
        client.wait_ready()
        planted: list[Planted] = []
        done = 0
        seeds = SeedVectors(opts.vectors) if opts.vectors else None
        if seeds:
            seed_check(seeds, corpus, get_settings().embedding_model_name)
            result["vectors"] = {"folder": str(opts.vectors), **seeds.meta}
        for size in sizes:
            point: dict[str, Any] = {"events": size}
            seed_to = min(size - opts.api_events, seeds.events) if seeds else done
            if seed_to > done:
                log(f"--- {size:,} events: seeding {seed_to - done:,} from {opts.vectors}")
                point["seeded"] = seed(engine, db_url.replace("postgresql+psycopg://", "postgresql://"), corpus,
                                       tenant_id, done, seed_to, seeds, get_settings().embedding_model_name,
                                       planted, log)
                done = seed_to
            log(f"--- {size:,} events: ingesting {size - done:,} more through the API")
            sample: list[str] = []
            point.update(_grow(corpus, client, engine, tenant_id, done, size, planted, sample, opts, log))
            point["raw_embed"] = _raw_embed(sample[:opts.raw_sample], log)
            point["embed_share"] = _share(point, "indexed_eps")
            point["worker_embed_share"] = _share(point, "worker_embed_eps")
            point["queries"] = _queries(client, planted, opts, log)
            point["db"] = _db_size(engine)
            point["memory_mb"] = {name: peak_rss_mb(stack.procs[name].pid) for name in ("api", "worker")}
            point["load_avg_1m"] = round(os.getloadavg()[0], 2)  # other jobs on the machine skew every rate
            done = size
            result["points"].append(point)
            paths = write(result, opts.out_dir, stem)
            log(f"{size:,} events measured; results in {paths['markdown']}")
    return result, paths


def _stop_embedded(var_dir: Path) -> None:
    from app.embedded import stop_postgres, stop_redis

    stop_redis(var_dir)
    stop_postgres(var_dir)


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in d.items()
            if k not in ("database_url", "redis_url")}


def _share(point: dict[str, Any], key: str) -> float | None:
    raw = point["raw_embed"]["texts_per_s"]
    return round(point[key] / raw, 3) if point.get(key) and raw else None


# ---------------------------------------------------------------- ingest

def _batches(events: Iterator[tuple[Event, Planted | None]], size: int, planted: list[Planted],
             sample: list[str], stride: int) -> Iterator[list[Event]]:
    batch: list[Event] = []
    for k, (ev, p) in enumerate(events):
        if p is not None:
            planted.append(p)
        if k % stride == 0:
            sample.append(turn_text(ev["speaker"], ev["content"]))  # what the embed task encodes
        batch.append(ev)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _grow(corpus: Corpus, client, engine, tenant_id: int, start: int, stop: int, planted: list[Planted],
          sample: list[str], opts: ScaleOptions, log: Log) -> dict[str, Any]:
    """POST events [start, stop) with `clients` requests in flight, then wait for the index. `sample`
    receives about `opts.raw_sample` of the step's texts, evenly spread."""
    stride = max(1, (stop - start) // opts.raw_sample)
    with engine.connect() as conn:  # the step's vectors are those of events after this one
        last_pk = conn.execute(text("SELECT coalesce(max(id), 0) FROM events WHERE tenant_id = :t"),
                               {"t": tenant_id}).scalar_one()
    created = 0
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=opts.clients) as pool:
        inflight: set = set()
        for batch in _batches(corpus.events(start, stop), opts.batch, planted, sample, stride):
            if len(inflight) >= opts.clients:
                finished, inflight = wait(inflight, return_when=FIRST_COMPLETED)
                created += sum(f.result() for f in finished)
            inflight.add(pool.submit(lambda b: sum(r["status"] == "created" for r in client.post_events(b)), batch))
        created += sum(f.result() for f in inflight)
    committed_s = time.perf_counter() - t0
    log(f"committed {created:,} events in {committed_s:.1f}s ({created / committed_s:.0f} events/s)")
    out: dict[str, Any] = {"created": created, "committed_s": round(committed_s, 2),
                           "committed_eps": round(created / committed_s, 1)}
    embed_s = _wait_pending(engine, tenant_id, ("embed",), t0, opts.stall_s, log)
    out.update(indexed_s=round(embed_s, 2), indexed_eps=round(created / embed_s, 1),
               worker_embed_eps=_worker_embed_eps(engine, tenant_id, last_pk))
    log(f"embedded after {embed_s:.1f}s ({out['indexed_eps']:.0f} events/s from the first POST; "
        f"worker {out['worker_embed_eps']} events/s)")
    if opts.layers == "all":
        all_s = _wait_pending(engine, tenant_id, None, t0, opts.stall_s, log)
        out.update(all_layers_s=round(all_s, 2), all_layers_eps=round(created / all_s, 1))
        log(f"every layer done after {all_s:.1f}s ({out['all_layers_eps']:.0f} events/s)")
    return out


def _wait_pending(engine, tenant_id: int, layers: tuple[str, ...] | None, t0: float, stall_s: float,
                  log: Log) -> float:
    """Seconds since t0 until the tenant has no pending outbox rows (of `layers`). Read from the outbox
    in SQL: polling /status of thousands of conversations would itself load the API."""
    sql = "SELECT count(*) FROM indexing_state WHERE tenant_id = :t AND done_at IS NULL"
    if layers:
        sql += " AND layer = ANY(:layers)"
    last, last_change, last_log = -1, time.monotonic(), 0.0
    while True:
        with engine.connect() as conn:
            pending = conn.execute(text(sql), {"t": tenant_id, "layers": list(layers or ())}).scalar_one()
        if pending == 0:
            return time.perf_counter() - t0
        now = time.monotonic()
        if pending != last:
            last, last_change = pending, now
        if now - last_change > stall_s:
            raise RuntimeError(f"indexing stalled: {pending} pending rows, no progress for {stall_s:.0f}s "
                               "(see the worker log under the var dir)")
        if now - last_log > 30:
            log(f"  {pending:,} outbox rows pending ({','.join(layers) if layers else 'all layers'})")
            last_log = now
        time.sleep(0.5)


def _worker_embed_eps(engine, tenant_id: int, after_pk: int) -> float | None:
    """The worker's own rate: vectors of this step over the span of their commit times (one chunk's
    encode before the first commit is not in the span; ~1% at 10k)."""
    sql = text("SELECT count(*), extract(epoch FROM max(created_at) - min(created_at)) FROM embeddings "
               "WHERE tenant_id = :t AND event_pk > :pk")
    with engine.connect() as conn:
        n, span = conn.execute(sql, {"t": tenant_id, "pk": after_pk}).one()
    return round(n / float(span), 1) if n and span else None


def _raw_embed(texts: list[str], log: Log) -> dict[str, Any]:
    """The embedder's raw batch throughput in this process on a sample of the step's own texts, in one
    encode call at the configured batch size (the embed task encodes its 64-event chunks the same way)."""
    from app.adapters.embedder import get_embedder

    emb = get_embedder()
    emb.encode(texts[:32])  # warm-up
    t = time.perf_counter()
    emb.encode(texts)
    dt = time.perf_counter() - t
    tokens = emb.count_tokens_batch(texts)
    log(f"raw embedder: {len(texts) / dt:.1f} texts/s on {len(texts)} texts of the step")
    return {"texts": len(texts), "seconds": round(dt, 2), "texts_per_s": round(len(texts) / dt, 1),
            "mean_tokens": round(statistics.mean(tokens), 1), "batch_size": emb.batch_size}


# ---------------------------------------------------------------- queries

MODES = (("tenant", False), ("conversation", False), ("tenant", True), ("conversation", True))


def _queries(client, planted: list[Planted], opts: ScaleOptions, log: Log,
             modes: tuple[tuple[str, bool], ...] = MODES) -> dict[str, Any]:
    """Every mode on the same planted pairs (spread over the tenant), one request at a time."""
    pairs = spread(planted, opts.queries)
    out: dict[str, Any] = {"pairs": len(pairs), "planted": len(planted)}
    if not pairs:
        return out
    for scope, rerank in modes:
        name = f"{scope}{'+rerank' if rerank else ''}"

        def body(p: Planted, scope: str = scope, rerank: bool = rerank) -> dict[str, Any]:
            b = {"query": p.question, "top_k": opts.top_k, "token_budget": opts.token_budget,
                 "pipeline": {"rerank": rerank}}
            if scope == "conversation":
                b["conversation_id"] = p.conversation_id
            return b

        probe, _ = client.query(body(pairs[0]))
        if rerank and not probe.get("pipeline", {}).get("rerank"):
            out[name] = None  # no cross-encoder installed: reported as n/a
            continue
        for p in pairs[:3]:  # warm-up, untimed
            client.query(body(p))
        lat, hits, ranks = [], 0, []
        stages: dict[str, list[float]] = {}
        for p in pairs:
            resp, ms = client.query(body(p))
            lat.append(ms)
            for stage, sms in (resp.get("timings_ms") or {}).items():
                stages.setdefault(stage, []).append(sms)
            got = [(it["conversation_id"], it.get("event_id")) for it in resp["items"][:opts.top_k]]
            rank = got.index((p.conversation_id, p.gold)) + 1 if (p.conversation_id, p.gold) in got else None
            hits += rank is not None
            ranks.append(rank)
        out[name] = {"recall_at_10": round(hits / len(pairs), 4),
                     "mrr": round(sum(1 / r for r in ranks if r) / len(pairs), 4),
                     "p50_ms": round(_pct(lat, 50), 1), "p95_ms": round(_pct(lat, 95), 1),
                     "mean_ms": round(statistics.mean(lat), 1),
                     # where the time went: the service's own per-stage wall times (Server-Timing)
                     "stage_p50_ms": {k: round(_pct(v, 50), 1) for k, v in stages.items()}}
        log(f"  {name}: recall@10 {out[name]['recall_at_10']:.3f}, p50 {out[name]['p50_ms']} ms, "
            f"p95 {out[name]['p95_ms']} ms")
    return out


def _pct(values: list[float], p: float) -> float:
    import numpy as np

    return float(np.percentile(values, p))


# ---------------------------------------------------------------- size and memory

def _db_size(engine) -> dict[str, Any]:
    sql = text("SELECT (SELECT count(*) FROM events), pg_total_relation_size('events'), "
               "pg_total_relation_size('embeddings'), pg_total_relation_size('indexing_state'), "
               "pg_database_size(current_database())")
    with engine.connect() as conn:
        n, ev, emb, outbox, db = conn.execute(sql).one()
    per = (lambda b: round(b / n) if n else None)  # noqa: E731
    return {"events_in_db": n, "events_bytes": ev, "embeddings_bytes": emb, "outbox_bytes": outbox,
            "database_bytes": db, "bytes_per_event": per(ev + emb), "outbox_bytes_per_event": per(outbox),
            "database_bytes_per_event": per(db)}


def peak_rss_mb(pid: int) -> dict[str, float]:
    """High-water RSS (VmHWM) of a process and its children: the largest one and the sum (an upper
    bound on the tree's peak, since the processes need not peak together)."""
    pids = [pid]
    try:
        import psutil

        pids += [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except Exception:  # noqa: BLE001 - no psutil: children from /proc
        pids += _children(pid)
    hwm = [v for v in (_vmhwm_kb(p) for p in pids) if v is not None]
    return {"max_process": round(max(hwm, default=0) / 1024, 1), "sum": round(sum(hwm) / 1024, 1),
            "processes": len(hwm)}


def _vmhwm_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _children(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return kids + [g for k in kids for g in _children(k)]
