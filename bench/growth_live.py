"""The long-conversation benchmark on live workers (#18 item 4): what a 20-event batch costs the graph
layer, and POST to fully indexed, when the worker that runs it has two processes, with and without
the graph's own single-process worker.

    python -m bench.growth_live                                 # 1k, 5k, 10k
    python -m bench.growth_live --sizes 1000,5000 --batches 8 --var-dir /tmp/growth-live

One conversation of the scale corpus (seed 7) is grown in-process to each size exactly as
`bench.growth` grows it (same writer, layers and chunks). Then, at that size, two arms, one after the
other, each a fresh `app.embedded.ServiceStack` (API + Celery worker(s), the embedded PostgreSQL and
Redis) to which `--batches` batches of 20 are POSTed over HTTP, each waited for until fully indexed:

* routed: a main worker with `--concurrency 2` (every queue but the graph's) and a graph worker
  (`--role graph`, one process): what `palimpsest run --workers 2`, the compose file and the
  Kubernetes manifests run now;
* unrouted: one worker with `--concurrency 2` on every queue: the graph's tasks land on either
  process, as every task did before the graph had queues of its own (HEAD eb155dc's deployment).

Per batch: the graph run's seconds and whether its assembly was held or made again (the layer's
run record), and POST to fully indexed (wall clock, from the POST to `/status` showing nothing
pending). The first batch of an arm is always made again (a fresh process holds nothing) and is
reported apart. Results: bench/results/growth-live-<stamp>.{json,md}.
"""
from __future__ import annotations

import os
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bench.growth import AFTER_EMBED, BATCH, STATEFUL, Grower, _commit, _events, parser, run_cli

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("routed", "unrouted")


def _grow(g: Grower, size: int) -> None:
    """In-process, as `bench.growth.run` grows the conversation."""
    while g.pos + BATCH <= size:
        g.post()
        g.run(STATEFUL, None)
        if g.pos % 256 < BATCH:
            g.embed_pending()
            g.run(AFTER_EMBED, None)
    g.embed_pending()
    g.run(AFTER_EMBED, None)


def _graph_run(tid: int, cid: str) -> dict[str, Any]:
    from app.storage.db import connect
    from app.storage.layer_runs import runs_for

    with connect() as conn:
        r = next(iter(runs_for(conn, tid, cid, "graph")))
    return {"computed_at": r.computed_at.isoformat(), "seconds": r.seconds, "events": r.events,
            "run": r.stats.get("run"), "assembly": r.stats.get("assembly")}


def _wait_indexed(client, cid: str, expect: int, timeout: float = 900.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while True:
        st = client.get(f"/v1/conversations/{cid}/status").json()
        if st.get("events") == expect and not any(st.get("pending", {}).values()):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{cid}: not indexed in {timeout:.0f} s: {st}")
        time.sleep(0.1)


def arm(name: str, g: Grower, key: str, var_dir: Path, batches: int, warmup: int = 2,
        log=print) -> dict[str, Any]:  # noqa: ANN001
    """Start a stack of this arm, POST `warmup` + `batches` batches of 20 to the conversation (the
    first `warmup` not measured), stop it."""
    import httpx

    from app.embedded import ServiceStack, ensure_redis
    from app.runtime import database_url

    stack = ServiceStack(var_dir=var_dir, database_url=database_url(), redis_url=ensure_redis(var_dir),
                         worker_concurrency=2, graph_worker=(name == "routed"), queue=f"growth-{name}-{g.pos}",
                         log_dir=var_dir / "logs" / f"{name}-{g.pos}",
                         extra_env={"PALIMPSEST_RATE_LIMIT_PER_MINUTE": "0"})
    rows = []
    with stack, httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c:
        workers = sorted(stack.worker_commands())
        for i in range(warmup + batches):
            evs = g.events[g.pos : g.pos + BATCH]
            body = {"events": [{"conversation_id": g.cid, "event_id": e["event_id"], "speaker": e["speaker"],
                                "content": e["content"], "occurred_at": e["occurred_at"]} for e in evs]}
            t0 = time.perf_counter()
            r = c.post("/v1/events", json=body)
            r.raise_for_status()
            g.pos += len(evs)
            _wait_indexed(c, g.cid, g.pos)
            row = {"events": g.pos, "post_to_indexed_s": round(time.perf_counter() - t0, 4),
                   "graph": _graph_run(g.tid, g.cid), "warmup": i < warmup}
            rows.append(row)
            log(f"  {name}{' (warm-up)' if i < warmup else ''} at {g.pos}: graph {row['graph']['seconds']:.2f} s ({row['graph']['assembly']}), "
                f"POST to indexed {row['post_to_indexed_s']:.2f} s")
    return {"arm": name, "workers": workers, "batches": rows, **summary(rows)}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Over the measured batches: not the warm-up ones, where a fresh process holds no assembly and
    loads the embedder on its first task (each process of a 2-process worker does)."""
    rest = [r for r in rows if not r.get("warmup")] or rows
    graph = [r["graph"]["seconds"] for r in rest]
    return {"graph_s_mean": round(statistics.fmean(graph), 4), "graph_s_median": round(statistics.median(graph), 4),
            "post_to_indexed_s_mean": round(statistics.fmean(r["post_to_indexed_s"] for r in rest), 4),
            "held": sum(r["graph"]["assembly"] == "held" for r in rest),
            "rebuilt": sum(r["graph"]["assembly"] != "held" for r in rest),
            "first_graph_s": rows[0]["graph"]["seconds"] if rows else None}


def run(sizes: list[int], batches: int, data_dir: Path, var_dir: Path, log=print, on_point=None,  # noqa: ANN001
        warmup: int = 2) -> dict[str, Any]:
    events = _events(data_dir, max(sizes) + 2 * (warmup + batches) * BATCH * len(sizes) + BATCH)
    from app.storage import tenants
    from bench.golden import embedded_database, fresh_var_dir

    var_dir = fresh_var_dir(var_dir)
    engine = embedded_database()
    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, "growth-live")
        key = tenants.create_key(conn, tid, scopes=("read", "write"))
    g = Grower(tid, "growth-live-1", events)
    points, t_start = [], time.perf_counter()
    for i, size in enumerate(sorted(sizes)):
        t0 = time.perf_counter()
        _grow(g, size)
        log(f"grown to {g.pos} events in {time.perf_counter() - t0:.0f} s")
        order = ARMS if i % 2 == 0 else ARMS[::-1]  # alternate which arm runs on the longer log
        point = {"size": g.pos, "arms": {name: arm(name, g, key, var_dir, batches, warmup, log)
                                         for name in order}}
        points.append(point)
        if on_point is not None:
            on_point(_result(sizes, batches, warmup, points, t_start))
    from app.embedded import stop_postgres, stop_redis

    engine.dispose()
    stop_redis(var_dir)
    stop_postgres(var_dir)
    return _result(sizes, batches, warmup, points, t_start)


def _result(sizes: list[int], batches: int, warmup: int, points: list[dict], t_start: float) -> dict[str, Any]:
    return {"benchmark": "growth-live", "sizes": sorted(sizes), "batch": BATCH, "batches_per_arm": batches,
            "warmup_batches": warmup,
            "points": points, "seconds_total": round(time.perf_counter() - t_start, 1), "cpus": os.cpu_count(),
            "load_avg": os.getloadavg(), "commit": _commit(),
            "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def markdown(res: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.1f}" for x in res.get("load_avg", ()))
    n, w = res["batches_per_arm"], res.get("warmup_batches", 0)
    lines = [f"# Long-conversation growth on live workers, batches of {res['batch']} ({res['when']}, {res['commit']}, "
             f"{res['cpus']} CPUs, load average at the end {load}, {res['seconds_total']:.0f} s in all)", "",
             f"Per size and arm, {w} warm-up and {n} measured batches POSTed over HTTP, each waited for until fully "
             "indexed (a fresh process holds no assembly and loads the embedder on its first task: the warm-up "
             "batches are not in the means). "
             "routed: main worker --concurrency 2 + graph worker (one process); unrouted: one worker "
             "--concurrency 2 on every queue (the deployment before graph queues). "
             "Command: `python -m bench.growth_live --sizes "
             f"{','.join(map(str, res['sizes']))} --batches {n} --warmup {w}`. Sizes are the log at the arm's "
             "start (the second arm starts 20 x (warm-up + measured) events later; the arm that goes first "
             "alternates with the size).", "",
             "| events | arm | graph s/batch (mean) | median | held / made again | POST to indexed s (mean) | "
             "first warm-up batch graph s |", "| ---: | --- | ---: | ---: | --- | ---: | ---: |"]
    for p in res["points"]:
        for name in ARMS:
            a = p["arms"].get(name)
            if a is None:
                continue
            lines.append(f"| {p['size']:,} | {name} | {a['graph_s_mean']:.3f} | {a['graph_s_median']:.3f} | "
                         f"{a['held']} / {a['rebuilt']} | {a['post_to_indexed_s_mean']:.2f} | {a['first_graph_s']:.3f} |")
        if set(ARMS) <= set(p["arms"]):
            r, u = p["arms"]["routed"], p["arms"]["unrouted"]
            lines.append(f"| {p['size']:,} | unrouted / routed | **{u['graph_s_mean'] / max(r['graph_s_mean'], 1e-9):.1f}x** | | | "
                         f"**{u['post_to_indexed_s_mean'] / max(r['post_to_indexed_s_mean'], 1e-9):.2f}x** | |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, "1000,5000,10000", "bench-growth-live")
    ap.add_argument("--batches", type=int, default=8, help="measured batches of 20 per size and arm")
    ap.add_argument("--warmup", type=int, default=2, help="batches of 20 per size and arm before those")
    args = ap.parse_args(argv)
    return run_cli(args, "growth-live", markdown,
                   lambda sizes, log, on_point: run(sizes, args.batches, args.data_dir, args.var_dir, log=log,
                                                    on_point=on_point, warmup=args.warmup))


if __name__ == "__main__":
    raise SystemExit(main())
