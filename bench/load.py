"""`palimpsest bench load`: concurrent writers and readers against a running stack, bounded in time.

Reports sustained ingest (events/s committed), query latency p50/p95/p99, errors (anything not 2xx
except deliberate 429s), and after the load stops, the time until every event is indexed and the
proof that none is missing (each conversation's event count equals what was acknowledged).
Traffic goes only to the service under test on loopback.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import httpx
import numpy as np
import typer

WORDS = ("garden trip sister guitar Denver recipe puppy marathon novel museum promotion bakery hiking "
         "concert wedding camera painting yoga budget flight").split()


@dataclass
class LoadOptions:
    duration_s: float = 120.0
    writers: int = 4
    readers: int = 4
    batch: int = 50
    conversations_per_writer: int = 5
    seed: int = 7
    rate: float = 0.0  # events/s over all writers; 0 = as fast as the service takes them


@dataclass
class LoadResult:
    options: dict[str, Any]
    acknowledged_events: int = 0
    ingest_events_per_s: float = 0.0
    queries: int = 0
    query_p50_ms: float = 0.0
    query_p95_ms: float = 0.0
    query_p99_ms: float = 0.0
    write_p50_ms: float = 0.0
    write_p95_ms: float = 0.0
    errors: int = 0
    rate_limited: int = 0
    time_to_indexed_s: float | None = None
    missing_events: int = 0
    unindexed_events: int = 0
    error_samples: list[str] = field(default_factory=list)


def sentence(rng: random.Random, i: int) -> str:
    picks = rng.sample(WORDS, 5)
    return f"Message {i}: we talked about the {picks[0]} and the {picks[1]}; next week {picks[2]}, {picks[3]} and {picks[4]}."


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(values, p)) if values else 0.0


async def _writer(c: httpx.AsyncClient, wid: int, opts: LoadOptions, deadline: float, acked: dict[str, int],
                  lat: list[float], res: LoadResult) -> None:
    rng = random.Random(opts.seed * 1000 + wid)
    n = 0
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    while time.monotonic() < deadline:
        conv = f"load-w{wid}-c{n // opts.batch % opts.conversations_per_writer}"
        events = [{"conversation_id": conv, "event_id": f"w{wid}-{n + k}", "speaker": f"user{wid}",
                   "content": sentence(rng, n + k), "occurred_at": (t0 + timedelta(seconds=n + k)).isoformat()}
                  for k in range(opts.batch)]
        start = time.perf_counter()
        try:
            r = await c.post("/v1/events", json={"events": events})
        except httpx.HTTPError as exc:
            res.errors += 1
            res.error_samples.append(f"write: {type(exc).__name__}")
            continue
        lat.append(time.perf_counter() - start)
        if opts.rate > 0:  # pace this writer to its share of the target rate
            await asyncio.sleep(max(0.0, opts.batch * opts.writers / opts.rate - (time.perf_counter() - start)))
        if r.status_code == 200:
            acked[conv] = acked.get(conv, 0) + sum(x["status"] == "created" for x in r.json()["results"])
            n += opts.batch
        elif r.status_code == 429:
            res.rate_limited += 1
            await asyncio.sleep(float(r.headers.get("Retry-After", "1")))
        else:
            res.errors += 1
            res.error_samples.append(f"write {r.status_code}: {r.text[:200]}")


async def _reader(c: httpx.AsyncClient, rid: int, opts: LoadOptions, deadline: float, lat: list[float],
                  res: LoadResult) -> None:
    rng = random.Random(opts.seed * 7919 + rid)
    while time.monotonic() < deadline:
        body = {"query": f"what about the {rng.choice(WORDS)} and {rng.choice(WORDS)}?",
                "conversation_id": f"load-w{rng.randrange(opts.writers)}-c{rng.randrange(opts.conversations_per_writer)}",
                "token_budget": 1000}
        start = time.perf_counter()
        try:
            r = await c.post("/v1/query", json=body)
        except httpx.HTTPError as exc:
            res.errors += 1
            res.error_samples.append(f"query: {type(exc).__name__}")
            continue
        if r.status_code == 200:
            lat.append(time.perf_counter() - start)
            res.queries += 1
        elif r.status_code == 429:
            res.rate_limited += 1
            await asyncio.sleep(float(r.headers.get("Retry-After", "1")))
        else:
            res.errors += 1
            res.error_samples.append(f"query {r.status_code}: {r.text[:200]}")


async def run_load(base_url: str, api_key: str, opts: LoadOptions, log: Callable[[str], None] = print,
                   index_timeout_s: float = 1800) -> LoadResult:
    res = LoadResult(options=asdict(opts))
    acked: dict[str, int] = {}
    wlat: list[float] = []
    qlat: list[float] = []
    limits = httpx.Limits(max_connections=opts.writers + opts.readers + 2)
    async with httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {api_key}"},
                                 timeout=120, limits=limits) as c:
        start = time.monotonic()
        deadline = start + opts.duration_s
        log(f"load: {opts.writers} writers x {opts.batch}-event batches, {opts.readers} readers, {opts.duration_s:.0f}s")
        await asyncio.gather(*[_writer(c, i, opts, deadline, acked, wlat, res) for i in range(opts.writers)],
                             *[_reader(c, i, opts, deadline, qlat, res) for i in range(opts.readers)])
        elapsed = time.monotonic() - start
        res.acknowledged_events = sum(acked.values())
        res.ingest_events_per_s = res.acknowledged_events / elapsed
        log(f"load stopped: {res.acknowledged_events} events acknowledged; waiting for indexing")
        t_stop = time.monotonic()
        while True:
            statuses = {conv: (await c.get(f"/v1/conversations/{conv}/status")).json() for conv in acked}
            pending = sum(sum(s["pending"].values()) for s in statuses.values())
            if pending == 0 or time.monotonic() - t_stop > index_timeout_s:
                break
            await asyncio.sleep(1.0)
        if pending == 0:
            res.time_to_indexed_s = round(time.monotonic() - t_stop, 1)
        res.unindexed_events = pending
        res.missing_events = sum(max(0, acked[conv] - statuses[conv]["events"]) for conv in acked)
    res.query_p50_ms, res.query_p95_ms, res.query_p99_ms = (round(percentile(qlat, p) * 1000, 1) for p in (50, 95, 99))
    res.write_p50_ms, res.write_p95_ms = (round(percentile(wlat, p) * 1000, 1) for p in (50, 95))
    res.error_samples = res.error_samples[:10]
    return res


def markdown(res: LoadResult) -> str:
    o = res.options
    rows = [
        ("load", f"{o['writers']} writers ({o['batch']}-event batches"
                 + (f", paced to {o['rate']:.0f} events/s" if o.get("rate") else "")
                 + f"), {o['readers']} readers, {o['duration_s']:.0f} s"),
        ("events acknowledged", f"{res.acknowledged_events}"),
        ("sustained ingest", f"{res.ingest_events_per_s:.0f} events/s"),
        ("write p50 / p95", f"{res.write_p50_ms} / {res.write_p95_ms} ms"),
        ("queries", f"{res.queries}"),
        ("query p50 / p95 / p99", f"{res.query_p50_ms} / {res.query_p95_ms} / {res.query_p99_ms} ms"),
        ("errors (not 2xx, not 429)", f"{res.errors}"),
        ("429 answers", f"{res.rate_limited}"),
        ("time until all indexed after the load", f"{res.time_to_indexed_s} s"),
        ("events missing (acknowledged but not stored)", f"{res.missing_events}"),
        ("events not indexed", f"{res.unindexed_events}"),
    ]
    return "| measure | value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows) + "\n"


def write_results(res: LoadResult, out_dir: Path, tag: str | None = None) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    name = f"load-{stamp}" + (f"-{tag}" if tag else "")
    jp, mp = out_dir / f"{name}.json", out_dir / f"{name}.md"
    jp.write_text(json.dumps(asdict(res), indent=2))
    mp.write_text(f"# Load benchmark {stamp}\n\n" + markdown(res))
    return {"json": jp, "markdown": mp}


def load_command(
    url: str = typer.Option(None, help="a running service; without it the stack starts on the embedded default"),
    api_key: str = typer.Option(None, envvar="PALIMPSEST_API_KEY"),
    duration: float = typer.Option(120.0, help="seconds of load"),
    writers: int = typer.Option(4),
    readers: int = typer.Option(4),
    batch: int = typer.Option(50, help="events per write request"),
    rate: float = typer.Option(0.0, help="target events/s over all writers (0 = unlimited)"),
    var_dir: Path = typer.Option(Path("var/bench-load"), help="embedded stack's data (when --url is not given)"),
    out_dir: Path = typer.Option(Path("bench/results"), help="where the JSON and Markdown go"),
    tag: str = typer.Option(None),
) -> None:
    """Concurrent writers and readers for a bounded time on loopback; then proof that nothing is missing."""
    opts = LoadOptions(duration_s=duration, writers=writers, readers=readers, batch=batch, rate=rate)
    log = lambda m: typer.echo(m, err=True)  # noqa: E731
    if url:
        if not api_key:
            raise typer.BadParameter("--url needs --api-key")
        res = asyncio.run(run_load(url, api_key, opts, log))
    else:
        from app.embedded import ServiceStack
        from app.storage.tenants import new_key

        key = new_key()
        with ServiceStack(var_dir=var_dir, api_key=key, beat=True, log_dir=var_dir / "logs") as stack:
            res = asyncio.run(run_load(stack.base_url, key, opts, log))
    typer.echo(markdown(res))
    for kind, p in write_results(res, out_dir, tag).items():
        typer.echo(f"{kind}: {p}")
    if res.errors or res.missing_events or res.unindexed_events:
        raise typer.Exit(1)
