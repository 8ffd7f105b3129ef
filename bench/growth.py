"""The long-conversation benchmark (#18 item 4): one conversation grown in batches of 20 events, and
what each conversation-level layer costs per batch as the conversation grows, with its state
(incremental) and without (every batch recomputes the layer from the whole log, as before
migration 0009).

    python -m bench.growth                                  # 1k, 5k, 10k, 20k (the full curve)
    python -m bench.growth --sizes 1000,5000 --out bench/results

In-process, like `bench/golden.py`: the service's writer, embedder and layer functions on an
embedded PostgreSQL under --var-dir (started fresh, stopped at the end), one process, the layers
one after the other (a worker runs them as separate tasks). The conversation is the scale corpus
(`bench/scale_data.py`, seed 7) with one conversation as long as the largest size.

How it grows: every batch is written (20 events) and the layers with state (gate, surprise, engrams)
run on it, batch by batch, so their state is the one a live conversation would have. The events are
embedded in chunks of 256 (cheaper; a checkpoint's own batches are embedded as posted), and the
consolidation and graph layers (consolidation's state needs the vectors; the graph reads
consolidation's episodes and assertions) extend their state with each chunk.
At each checkpoint size S, two more batches of 20:

* before: every layer recomputes from the whole log (`incremental=False`: the code path before
  migration 0009, which today also writes the state a later batch extends);
* after: every layer as it runs now (state where a layer has it);
* after, cold: the same once more, with the graph's assembly dropped from the process first (as in a
  worker that did not run the conversation's last batch: it is made again from the stored state).

For each: seconds per layer, and POST-to-fully-indexed (the writer's transaction, embedding the
20 events, every layer done), in-process and sequential. Results: bench/results/growth-<stamp>.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
LAYER_ORDER = ("gate", "consolidate", "surprise", "engrams", "graph")
STATEFUL = ("gate", "surprise", "engrams")
AFTER_EMBED = ("gate", "consolidate", "graph")  # the stateful layers that wait for the vectors
BATCH = 20


def _events(data_dir: Path, n: int, seed: int = 7) -> list[dict[str, Any]]:
    from bench.scale_data import Corpus, SourcePool

    corpus = Corpus(SourcePool.load(data_dir), seed=seed, conv_len=(n, n))
    return [ev for ev, _ in corpus.events(0, n)]


class Grower:
    def __init__(self, tenant_id: int, conversation_id: str, events: list[dict[str, Any]]):
        self.tid, self.cid, self.events, self.pos = tenant_id, conversation_id, events, 0

    def post(self, n: int = BATCH) -> tuple[list[int], float]:
        from app.domain.event import Event
        from app.domain.layer_registry import LAYERS
        from app.services.ingest import write_batch
        from app.storage.db import get_engine

        batch = [Event(conversation_id=self.cid, event_id=e["event_id"], speaker=e["speaker"], content=e["content"],
                       occurred_at=e["occurred_at"]) for e in self.events[self.pos : self.pos + n]]
        t0 = time.perf_counter()
        with get_engine().begin() as conn:
            res = write_batch(conn, self.tid, batch, list(LAYERS))
        self.pos += n
        return [r.id for r in res], time.perf_counter() - t0

    def embed_pending(self) -> float:
        from app.services.layers import embed_pending
        from app.storage import outbox
        from app.storage.db import connect

        t0 = time.perf_counter()
        with connect() as conn:
            todo = outbox.pending_in_conversation(conn, "embed", self.tid, self.cid)
        for i in range(0, len(todo), 256):
            embed_pending(todo[i : i + 256])
        return time.perf_counter() - t0

    def run(self, layers: tuple[str, ...], incremental: bool | None) -> dict[str, dict[str, Any]]:
        from app.services.layers import process_conversation

        out = {}
        for layer in layers:
            t0 = time.perf_counter()
            o = process_conversation(layer, self.tid, self.cid, incremental=incremental)
            out[layer] = {"seconds": round(time.perf_counter() - t0, 4), "status": o.status,
                          "run": o.stats.get("run", "full") if o.status == "done" else None,
                          "events": o.events, "state_bytes": o.stats.get("state_bytes"),
                          "assembly": o.stats.get("assembly")}
        return out

    def measured_batch(self, incremental: bool) -> dict[str, Any]:
        """One batch of 20, POST to fully indexed, every layer timed."""
        t0 = time.perf_counter()
        _, post_s = self.post()
        embed_s = self.embed_pending()
        layers = self.run(LAYER_ORDER, incremental)
        total = time.perf_counter() - t0
        return {"events": self.pos, "post_s": round(post_s, 4), "embed_s": round(embed_s, 4), "layers": layers,
                "layers_s": round(sum(v["seconds"] for v in layers.values()), 4), "post_to_indexed_s": round(total, 4)}


def run(sizes: list[int], data_dir: Path, var_dir: Path, log=print, on_point=None) -> dict[str, Any]:  # noqa: ANN001
    top = max(sizes)
    events = _events(data_dir, top + 4 * BATCH * len(sizes))
    from app.storage import tenants
    from bench.golden import embedded_database, fresh_var_dir

    var_dir = fresh_var_dir(var_dir)
    engine = embedded_database()
    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, "growth")
    g = Grower(tid, "growth-1", events)
    points, grow_s, t_start = [], 0.0, time.perf_counter()
    stateful_batches: list[float] = []
    for size in sorted(sizes):
        t0 = time.perf_counter()
        while g.pos + BATCH <= size:
            g.post()
            res = g.run(STATEFUL, None)
            stateful_batches.append(sum(v["seconds"] for v in res.values()))
            if g.pos % 256 < BATCH:
                g.embed_pending()
                g.run(AFTER_EMBED, None)
        g.embed_pending()
        g.run(AFTER_EMBED, None)
        grow_s += time.perf_counter() - t0
        log(f"grown to {g.pos} events in {time.perf_counter() - t0:.0f} s; measuring")
        before = g.measured_batch(incremental=False)
        log(f"  before: {before['layers_s']:.2f} s of layers, POST to indexed {before['post_to_indexed_s']:.2f} s")
        after = g.measured_batch(incremental=True)
        log(f"  after:  {after['layers_s']:.2f} s of layers, POST to indexed {after['post_to_indexed_s']:.2f} s")
        from app.services import graph_build

        graph_build._WARM.clear()
        cold = g.measured_batch(incremental=True)
        log(f"  after, graph assembly not held: graph {cold['layers']['graph']['seconds']:.2f} s")
        recent = stateful_batches[-50:]
        points.append({"size": size, "before": before, "after": after, "after_cold": cold,
                       "stateful_batch_s_mean_last_50": round(sum(recent) / max(1, len(recent)), 4)})
        if on_point is not None:  # the curve so far, written as it goes (a long run can be stopped)
            on_point(_result(sizes, points, t_start, grow_s))
    from app.embedded import stop_postgres

    engine.dispose()
    stop_postgres(var_dir)
    return _result(sizes, points, t_start, grow_s)


def _result(sizes: list[int], points: list[dict], t_start: float, grow_s: float) -> dict[str, Any]:
    return {"benchmark": "growth", "sizes": sorted(sizes), "measured": [p["size"] for p in points], "batch": BATCH,
            "points": points, "seconds_total": round(time.perf_counter() - t_start, 1), "grow_seconds": round(grow_s, 1),
            "cpus": os.cpu_count(), "load_avg": os.getloadavg(), "commit": _commit(),
            "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _commit() -> str:
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
        return out.stdout.strip() + ("+uncommitted" if dirty.strip() else "")
    except OSError:
        return "unknown"


def markdown(res: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.1f}" for x in res.get("load_avg", ()))
    lines = [f"# Long-conversation growth, batches of {res['batch']} ({res['when']}, {res['commit']}, "
             f"{res['cpus']} CPUs, load average at the end {load}, {res['seconds_total']:.0f} s in all)", "",
             f"Sizes asked: {', '.join(map(str, res['sizes']))}; measured: {', '.join(map(str, res['measured']))}.", "",
             "Seconds per 20-event batch, per layer: before = recompute from the whole log (no state); after = "
             "as the layers run now. POST to indexed = the writer, embedding the 20 events and every layer, "
             "in one process, one after the other.", "",
             "| events | layer | before s | after s | after run |", "| ---: | --- | ---: | ---: | --- |"]
    for p in res["points"]:
        b, a = p["before"]["layers"], p["after"]["layers"]
        for layer in LAYER_ORDER:
            lines.append(f"| {p['size']:,} | {layer} | {b[layer]['seconds']:.3f} | {a[layer]['seconds']:.3f} | "
                         f"{a[layer]['run'] or a[layer]['status']} |")
        lines.append(f"| {p['size']:,} | **all layers** | **{p['before']['layers_s']:.2f}** | "
                     f"**{p['after']['layers_s']:.2f}** | |")
        lines.append(f"| {p['size']:,} | POST to fully indexed | {p['before']['post_to_indexed_s']:.2f} | "
                     f"{p['after']['post_to_indexed_s']:.2f} | |")
        if "after_cold" in p:
            c = p["after_cold"]["layers"]["graph"]
            lines.append(f"| {p['size']:,} | graph, its assembly not held (next batch) | | {c['seconds']:.3f} | "
                         f"{c['run'] or c['status']}, assembly {c.get('assembly') or '?'} |")
    lines += ["", "| events | stateful layers per batch while growing, mean of last 50 batches, s | surprise state bytes | "
              "engrams state bytes | consolidate state bytes | graph state bytes |",
              "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for p in res["points"]:
        a = p["after"]["layers"]
        lines.append(f"| {p['size']:,} | {p['stateful_batch_s_mean_last_50']:.3f} | {a['surprise']['state_bytes']} | "
                     f"{a['engrams']['state_bytes']} | {a['consolidate'].get('state_bytes')} | "
                     f"{a['graph'].get('state_bytes')} |")
    return "\n".join(lines) + "\n"


def parser(doc: str, sizes: str, var_name: str) -> argparse.ArgumentParser:
    """The options every growth benchmark takes (`bench.growth`, `bench.growth_live`); `doc`: its module's."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--sizes", default=sizes)
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("PALIMPSEST_BENCH_DATA", "/work/shared/data")))
    ap.add_argument("--var-dir", type=Path, default=ROOT / "var" / var_name)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--report", type=Path, help="only rewrite the markdown of this results JSON (no run)")
    return ap


def run_cli(args: argparse.Namespace, prefix: str, render: Callable[[dict[str, Any]], str],
            go: Callable[[list[int], Callable[[str], None], Callable[[dict[str, Any]], None]], dict[str, Any]]) -> int:
    """`--report`: rewrite a result's markdown; else `go(sizes, log, on_point)`, its result (and each
    point on the way) written as `<out>/<prefix>-<stamp>.{json,md}`, the markdown printed."""
    if args.report is not None:
        args.report.with_suffix(".md").write_text(render(json.loads(args.report.read_text())))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    args.out.mkdir(parents=True, exist_ok=True)

    def write(res: dict[str, Any]) -> None:
        (args.out / f"{prefix}-{stamp}.json").write_text(json.dumps(res, indent=1) + "\n")
        (args.out / f"{prefix}-{stamp}.md").write_text(render(res))

    res = go(sizes, lambda m: print(m, file=sys.stderr, flush=True), write)
    write(res)
    print(render(res))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser(__doc__, "1000,5000,10000,20000", "bench-growth").parse_args(argv)
    return run_cli(args, "growth", markdown,
                   lambda sizes, log, on_point: run(sizes, args.data_dir, args.var_dir, log=log, on_point=on_point))


if __name__ == "__main__":
    raise SystemExit(main())
