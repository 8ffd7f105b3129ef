"""POST to fully indexed vs. the same work in one process: events/s for the same conversations.

    python -m bench.ingest_speed                                  # 2 LongMemEval_S haystacks, both arms
    python -m bench.ingest_speed --conversations 2 --arms http,inproc,http,inproc --profile

The same conversations (the first `--conversations` LongMemEval_S haystacks after `--skip`, about
500 long turns each) are indexed in each arm, under a tenant of the arm's own, on one embedded
PostgreSQL (fresh conversation ids per run, so nothing is a duplicate):

* inproc: what `bench.golden.ingest` (and so `python -m bench.evaldb build`) does: `write_batch`,
  `embed_pending` in chunks of 256, then every conversation-level layer built once (`force`). The
  embedder is loaded before the clock starts (a long-lived process holds it).
* first: as http, one POST of the first `--first` events (20) of one conversation: how long a
  freshly started worker takes over its first batch.
* http: a fresh `app.embedded.ServiceStack` (the API, one Celery worker on every queue, beat: what
  the benchmark harness starts), the conversation POSTed in batches of `--batch` events, the clock
  running from the first POST until `/v1/conversations/{id}/status` shows every event and nothing
  pending for every conversation. The stack is started (API ready) before the clock starts; the
  worker's own start (its embedder load) is inside the measurement, as a user sees it.

With `--profile`, `py-spy record --format raw` samples the worker (its children included) during
each http run: `<out>/ingest-speed-<stamp>-<run>.pyspy.txt`, folded stacks, and its heaviest frames
are summarised in the result. Results: bench/results/ingest-speed-<stamp>.{json,md}.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY_SPY = Path(sys.executable).with_name("py-spy")


def conversations(data_dir: Path, n: int, skip: int) -> list[tuple[str, list[dict[str, Any]]]]:
    from bench.longmemeval import load_longmemeval

    ds = load_longmemeval(data_dir)
    return [(c.id, [t.to_event(c.id) for t in c.turns]) for c in ds.conversations[skip : skip + n]]


def _renamed(convs, tag: str):  # noqa: ANN001, ANN202
    return [(f"{tag}-{cid}", [{**e, "conversation_id": f"{tag}-{cid}"} for e in evs]) for cid, evs in convs]


def inproc(convs, tag: str) -> dict[str, Any]:  # noqa: ANN001
    """As `bench.golden.ingest`: the writer, embed in chunks of 256, each layer built once."""
    from app.adapters.embedder import get_embedder
    from app.domain.event import Event
    from app.domain.layer_registry import LAYERS
    from app.services.ingest import write_batch
    from app.services.layers import embed_pending, process_conversation
    from app.storage import outbox, tenants
    from app.storage.db import connect, get_engine

    get_embedder().encode(["warm"])
    engine = get_engine()
    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, tag)
    t0, phases = time.perf_counter(), collections.Counter()
    n = 0
    for cid, evs in _renamed(convs, tag):
        t = time.perf_counter()
        with engine.begin() as conn:
            write_batch(conn, tid, [Event(**{**e, "occurred_at": datetime.fromisoformat(e["occurred_at"])})
                                    for e in evs], list(LAYERS))
        with connect() as conn:
            todo = outbox.pending_in_conversation(conn, "embed", tid, cid)
        phases["write"] += time.perf_counter() - t
        t = time.perf_counter()
        for i in range(0, len(todo), 256):
            embed_pending(todo[i : i + 256])
        phases["embed"] += time.perf_counter() - t
        for layer in ("consolidate", "surprise", "engrams", "graph"):
            t = time.perf_counter()
            process_conversation(layer, tid, cid, force=True)
            phases[layer] += time.perf_counter() - t
        n += len(evs)
    s = time.perf_counter() - t0
    return {"arm": "inproc", "events": n, "seconds": round(s, 2), "events_per_s": round(n / s, 2),
            "phases_s": {k: round(v, 2) for k, v in phases.items()}}


def http(convs, tag: str, var_dir: Path, batch: int, profile: Path | None, log=print) -> dict[str, Any]:  # noqa: ANN001
    import httpx

    from app.embedded import ServiceStack, ensure_redis
    from app.runtime import database_url
    from app.storage import tenants
    from app.storage.db import get_engine

    with get_engine().begin() as conn:
        tid = tenants.create_tenant(conn, tag)
        key = tenants.create_key(conn, tid, scopes=("read", "write"))
    stack = ServiceStack(var_dir=var_dir, database_url=database_url(), redis_url=ensure_redis(var_dir), beat=True,
                         queue=f"speed-{tag}", log_dir=var_dir / "logs" / tag,
                         extra_env={"PALIMPSEST_RATE_LIMIT_PER_MINUTE": "0", "PALIMPSEST_LOG_LEVEL": "INFO"})
    convs = _renamed(convs, tag)
    spy = None
    with stack, httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=300) as c:
        if profile is not None:
            spy = subprocess.Popen([str(PY_SPY), "record", "--format", "raw", "--subprocesses", "--rate", "50",
                                    "--nonblocking", "-o", str(profile), "--pid", str(stack.procs["worker"].pid)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.perf_counter()
        for _, evs in convs:
            for i in range(0, len(evs), batch):
                c.post("/v1/events", json={"events": evs[i : i + batch]}).raise_for_status()
        post_s = time.perf_counter() - t0
        left = {cid: len(evs) for cid, evs in convs}
        marks: dict[str, float] = {}
        while left:
            for cid in list(left):
                st = c.get(f"/v1/conversations/{cid}/status").json()
                if st.get("events") == left[cid] and not any(st.get("pending", {}).values()):
                    marks[cid] = round(time.perf_counter() - t0, 2)
                    del left[cid]
            if time.perf_counter() - t0 > 3600:
                raise TimeoutError(f"not indexed in an hour: {sorted(left)}")
            time.sleep(0.25)
        s = time.perf_counter() - t0
        if spy is not None:
            spy.send_signal(2)
            spy.wait(60)
    n = sum(len(evs) for _, evs in convs)
    out = {"arm": "http", "events": n, "seconds": round(s, 2), "events_per_s": round(n / s, 2),
           "post_s": round(post_s, 2), "indexed_at_s": marks, "tasks": task_counts(var_dir / "logs" / tag)}
    if profile is not None and profile.exists():
        out["profile"] = {"file": profile.name, "top": top_frames(profile)}
    return out


def task_counts(log_dir: Path) -> dict[str, int]:
    """How many tasks the worker ran, by name and outcome (its log: `Task ... succeeded`)."""
    counts: collections.Counter = collections.Counter()
    for f in log_dir.glob("*worker*.log"):
        for line in f.read_text(errors="replace").splitlines():
            if " succeeded in " in line and "Task palimpsest." in line:
                counts[line.split("Task ", 1)[1].split("[", 1)[0]] += 1
    return dict(sorted(counts.items()))


def top_frames(path: Path, n: int = 25) -> list[tuple[str, float]]:
    """py-spy raw (folded) stacks -> the frames with the largest inclusive share of the samples."""
    incl: collections.Counter = collections.Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        for frame in set(stack.split(";")):
            incl[frame] += int(count)
    return [(f, round(c / max(total, 1), 3)) for f, c in incl.most_common(n)]


def markdown(res: dict[str, Any]) -> str:
    lines = [f"# POST to fully indexed vs. in-process ({res['when']}, {res['commit']}, {res['cpus']} CPUs)", "",
             f"{res['events']} events ({res['conversations']} LongMemEval_S haystacks); command: "
             f"`python -m bench.ingest_speed {res['argv']}`", "",
             "| run | arm | events/s | seconds | detail |", "| ---: | --- | ---: | ---: | --- |"]
    for i, r in enumerate(res["runs"]):
        detail = r.get("phases_s") or {"post_s": r.get("post_s"), "tasks": r.get("tasks")}
        lines.append(f"| {i + 1} | {r['arm']} | {r['events_per_s']:.2f} | {r['seconds']:.1f} | `{json.dumps(detail)}` |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--arms", default="inproc,http", help="comma-separated runs, in order (inproc|http|first)")
    ap.add_argument("--first", type=int, default=20, help="events of the `first` arm's one POST")
    ap.add_argument("--batch", type=int, default=1000, help="events per POST")
    ap.add_argument("--profile", action="store_true", help="py-spy the worker of each http run")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("PALIMPSEST_BENCH_DATA", "/work/shared/data")))
    ap.add_argument("--var-dir", type=Path, default=ROOT / "var" / "bench-ingest-speed")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args(argv)
    from bench.golden import embedded_database, fresh_var_dir
    from bench.growth import _commit

    var_dir = fresh_var_dir(args.var_dir)
    os.environ.pop("PALIMPSEST_REDIS_URL", None)  # the stack's embedded Redis, not golden's default
    convs = conversations(args.data_dir, args.conversations, args.skip)
    from app.embedded import ensure_redis, stop_postgres, stop_redis

    engine = embedded_database()
    ensure_redis(var_dir)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    args.out.mkdir(parents=True, exist_ok=True)
    res = {"benchmark": "ingest-speed", "argv": " ".join(argv if argv is not None else sys.argv[1:]),
           "conversations": len(convs), "events": sum(len(e) for _, e in convs), "runs": [],
           "cpus": os.cpu_count(), "commit": _commit(), "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    try:
        for i, arm in enumerate(a.strip() for a in args.arms.split(",") if a.strip()):
            tag = f"r{i + 1}-{arm}"
            prof = args.out / f"ingest-speed-{stamp}-{tag}.pyspy.txt" if args.profile and arm != "inproc" else None
            if arm == "inproc":
                r = inproc(convs, tag)
            elif arm == "first":  # a fresh worker's first batch: the first --first events of one conversation
                r = {**http([(convs[0][0], convs[0][1][: args.first])], tag, var_dir, args.batch, prof), "arm": "first"}
            else:
                r = http(convs, tag, var_dir, args.batch, prof)
            r["load_avg"] = os.getloadavg()
            res["runs"].append(r)
            print(f"{tag}: {r['events_per_s']:.2f} events/s ({r['seconds']:.1f} s)", file=sys.stderr, flush=True)
            (args.out / f"ingest-speed-{stamp}.json").write_text(json.dumps(res, indent=1) + "\n")
    finally:
        engine.dispose()
        stop_redis(var_dir)
        stop_postgres(var_dir)
    (args.out / f"ingest-speed-{stamp}.md").write_text(markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
