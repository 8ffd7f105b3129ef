"""One benchmark run end to end: load the data, run the baselines, start (or reach) the service,
ingest, wait for indexing, ask every question at every budget, score, and write the results."""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.baselines import BASELINES, baseline_answers, run_baselines
from bench.datasets import Dataset, default_data_dir, subset
from bench.loaders import load
from bench.evaluate import summarize, unscored
from bench.provenance import check_overlap, embedder_info, model_info, reranker_path
from bench.report import SERVICE, write
from bench.splits import MANIFEST, select

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BUDGETS = (512, 1000, 2000)
DEFAULT_API_KEY = "pal_bench_local-benchmark-key"  # the embedded stack only; pal_<prefix>_<secret>


@dataclass
class RunOptions:
    benchmark: str
    data_dir: Path = field(default_factory=default_data_dir)
    url: str | None = None
    api_key: str | None = None
    limit: int | None = None
    conversations: int | None = None
    only: tuple[str, ...] = ()  # named conversations (e.g. the reranker's held-out ones)
    pipeline: dict[str, Any] = field(default_factory=dict)
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    top_k: int = 10
    out_dir: Path = REPO_ROOT / "bench" / "results"
    concurrency: int = 2
    baselines_only: bool = False
    var_dir: Path = REPO_ROOT / "var" / "bench"
    tag: str | None = None
    keep_running: bool = False
    fresh: bool = False
    latency_sample: int = 300
    wait_for: tuple[str, ...] | None = None  # index layers to wait for; None = all
    index_timeout: float = 3600.0
    split: str = "validation"  # bench/splits.json: train, validation or all
    allow_train_overlap: bool = False  # score a model on conversations it was trained on (marked in the report)
    reranker: Path | None = None  # the reranker the service uses: passed to an embedded one, recorded for --url


def _git() -> dict[str, Any]:
    def run(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], check=False, cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": run("rev-parse", "--short", "HEAD") or None, "dirty": bool(run("status", "--porcelain"))}


def use_trained_reranker() -> str | None:
    """Measure what `make run` serves: the reranker `palimpsest train-reranker` put under ./var/models
    (the bench's own var dir has none), unless PALIMPSEST_RERANKER_MODEL_PATH says otherwise."""
    path = REPO_ROOT / "var" / "models" / "reranker-minilm"
    if "PALIMPSEST_RERANKER_MODEL_PATH" not in os.environ and path.is_dir():
        os.environ["PALIMPSEST_RERANKER_MODEL_PATH"] = str(path)
    return os.environ.get("PALIMPSEST_RERANKER_MODEL_PATH")


@contextmanager
def exclusive(var_dir: Path) -> Iterator[None]:
    """One embedded benchmark per var dir at a time: the second would stop the first's PostgreSQL."""
    import fcntl

    var_dir.mkdir(parents=True, exist_ok=True)
    with open(var_dir / "bench.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"another benchmark is running on {var_dir}; wait, or pass another --var-dir") from None
        yield


def select_questions(opts: RunOptions, ds: Dataset) -> Dataset:
    """The split (bench/splits.json), then the quick subset (--only, --conversations, --limit).
    Naming a conversation outside the split is an error, not an empty run."""
    ds = select(ds, opts.split)
    outside = [c for c in opts.only if c not in {x.id for x in ds.conversations}]
    if outside:
        raise ValueError(f"not in the {opts.split} split of {opts.benchmark}: {', '.join(outside)} "
                         "(bench/splits.json; pass --split all or --split train)")
    if opts.limit or opts.conversations or opts.only:
        ds = subset(ds, opts.limit, opts.conversations, opts.only, per_conversation=opts.benchmark != "longmemeval")
    if not ds.questions:
        raise ValueError(f"no questions in the {opts.split} split of {opts.benchmark} under {opts.data_dir}")
    return ds


def measured_models(opts: RunOptions, evaluated: list[str]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The embedder (service and dense baseline) and, when the service is measured, its reranker, with
    their training manifests; and their overlap with the evaluated conversations (raises
    `TrainOverlapError` unless `opts.allow_train_overlap`). For a service the harness starts, the
    reranker is `opts.reranker`, else what `use_trained_reranker` picks, else the service's default."""
    models: dict[str, Any] = {"embedder": embedder_info()}
    if not opts.baselines_only:
        if opts.reranker and not opts.url:
            os.environ["PALIMPSEST_RERANKER_MODEL_PATH"] = str(opts.reranker)
        if not opts.url:
            use_trained_reranker()
        path, how = reranker_path(opts.reranker, None if opts.url else opts.var_dir)
        models["reranker"] = model_info(path, resolved_by=how)
    return models, check_overlap(models, opts.benchmark, evaluated, allow=opts.allow_train_overlap)


def run(opts: RunOptions, log: Callable[[str], None] = print) -> tuple[dict[str, Any], dict[str, Path]]:
    from bench.runner import Client, ingest, service_answers

    t_start = time.perf_counter()
    started = datetime.now(UTC)
    git = _git()  # the code the service starts with: a tree that moves during the run must not relabel it
    run_id = datetime.now().strftime("%Y%m%d-%H%M%S")
    budgets = tuple(sorted(set(opts.budgets)))
    timings: dict[str, float] = {}

    ds = select_questions(opts, load(opts.benchmark, opts.data_dir))
    log(f"{opts.benchmark} ({opts.split}): {len(ds.conversations)} conversations, {ds.n_turns} turns, "
        f"{len(ds.questions)} questions")

    # What is measured with, and refuse (before any work) to score a model on its training data.
    models, train_overlap = measured_models(opts, [c.id for c in ds.conversations])

    # Baselines first, so they never compete with the service for the CPU while it is measured.
    t = time.perf_counter()
    rankings = run_baselines(ds, cache_dir=opts.var_dir / "cache", log=log)
    systems: dict[str, Any] = {}
    for b in BASELINES:
        systems[b] = summarize(ds, baseline_answers(ds, rankings[b], budgets, opts.top_k), budgets, opts.top_k)
    timings["baselines_s"] = time.perf_counter() - t
    log(f"baselines done in {timings['baselines_s']:.0f}s")

    service_info: dict[str, Any] | None = None
    if not opts.baselines_only:
        stack = None
        url, key = opts.url, opts.api_key
        url_given = bool(opts.url)
        lock = ExitStack()
        try:
            if not url:
                from app.embedded import ServiceStack

                key = key or DEFAULT_API_KEY
                lock.enter_context(exclusive(opts.var_dir))
                t = time.perf_counter()
                log(f"starting the service on the embedded default under {opts.var_dir}")
                # beat runs the outbox sweeper, as in `palimpsest run`: it re-enqueues work that was never
                # queued, e.g. a layer added after these events were ingested by an earlier run.
                stack = ServiceStack(var_dir=opts.var_dir, api_key=key, beat=True, log_dir=opts.var_dir / "logs")
                stack.start()
                url = stack.base_url
                timings["service_start_s"] = time.perf_counter() - t
            client = Client(url, key, pool=max(4, opts.concurrency + 2))
            try:
                client.wait_ready()
                t = time.perf_counter()
                ing = ingest(client, ds, index_timeout=opts.index_timeout, fresh=opts.fresh,
                             wait_for=opts.wait_for, log=log, erase_others=stack is not None)
                timings["ingest_s"] = time.perf_counter() - t
                if stack is not None:
                    # A running service's autovacuum analyzes the new rows within a minute; the
                    # embedded server here may not live that long, so do it before anything is timed.
                    from app.storage.db import make_engine, refresh_statistics

                    engine = make_engine(stack.database_url, pool_size=1)
                    refresh_statistics(engine)
                    engine.dispose()
                t = time.perf_counter()
                answers, checks = service_answers(client, ds, budgets, opts.top_k, opts.pipeline,
                                                  concurrency=opts.concurrency,
                                                  latency_sample=opts.latency_sample, log=log)
                timings["queries_s"] = time.perf_counter() - t
            finally:
                client.close()
        finally:
            if stack is not None:
                stack.stop()
            if not url_given and not opts.keep_running:
                from app.embedded import stop_postgres, stop_redis

                stop_redis(opts.var_dir)
                stop_postgres(opts.var_dir)
            lock.close()
        systems = {SERVICE: summarize(ds, answers, budgets, opts.top_k), **systems}
        service_info = {"url": url, "embedded": stack is not None, "ingest": ing, "checks": checks}

    timings["total_s"] = time.perf_counter() - t_start
    subset_note = None
    if opts.limit or opts.conversations or opts.only:
        which = ", ".join(opts.only) if opts.only else None
        per = " per conversation" if opts.benchmark != "longmemeval" else " (one haystack each)"
        subset_note = (f"{which or ('first ' + str(opts.conversations) if opts.conversations else 'all')} conversations "
                       f"of the {opts.split} split; "
                       f"{str(opts.limit) + ' questions' + per + ', spread evenly' if opts.limit else 'all questions'}")
    result: dict[str, Any] = {
        "benchmark": opts.benchmark,
        "run_id": run_id,
        "started_at": started.isoformat(),
        "duration_s": timings["total_s"],
        "git": git,
        "data": {
            "dir": str(opts.data_dir), "conversations": len(ds.conversations), "turns": ds.n_turns,
            "questions": len(ds.questions), "scored": sum(1 for q in ds.questions if q.gold),
            "unscored": unscored(ds), "notes": ds.notes,
        },
        "subset": subset_note,
        "split": {"name": opts.split, "manifest": str(MANIFEST.relative_to(REPO_ROOT))},
        "models": models,
        "train_overlap": {"allowed": opts.allow_train_overlap, "conversations": train_overlap},
        "apart": list(ds.apart),
        "budgets": list(budgets),
        "top_k": opts.top_k,
        "pipeline": opts.pipeline,
        "concurrency": opts.concurrency,
        "latency_sample": opts.latency_sample,
        "tokenizer": "all-MiniLM-L6-v2 word pieces (app.adapters.embedder.count_tokens)",
        "service": service_info,
        "systems": systems,
        "timings": timings,
    }
    tag = opts.tag or ("baselines" if opts.baselines_only else None)
    stem = f"{opts.benchmark}-{tag + '-' if tag else ''}{run_id}"
    paths = write(result, opts.out_dir, stem)
    return result, paths
