"""Ask the planted questions again on the tenant a scale run left behind, with and without one index.

    .venv/bin/python -m bench.scale_requery --index ix_events_tenant_time --rounds 2

`palimpsest bench scale` leaves its database under its var dir (`var/bench-scale`). Building a 1M-event
tenant takes most of an hour; measuring what one index changes at that size should not. This starts
the service on that database (migrated to head first), creates a key for the run's tenant,
regenerates the planted pairs from the corpus (same seed), and asks them in rounds that alternate the
index absent and present (dropped and rebuilt between rounds, ANALYZEd after), each round asking the
same questions in the same order. Reported per variant and round: p50/p95 ms and recall@10 per
mode, and the median per pipeline stage. Output: `bench/results/scale-requery-<ts>.{json,md}`.
"""
from __future__ import annotations

import argparse
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from sqlalchemy import text

from bench.datasets import default_data_dir
from bench.harness import REPO_ROOT, _git


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def set_index(engine, name: str, present: bool) -> float:
    """Drop or (re)create a schema index by its name in the models; returns the seconds it took."""
    from app.storage.models import schema_index

    index = schema_index(name)
    t0 = time.perf_counter()
    with engine.begin() as conn:
        if present:
            index.create(conn, checkfirst=True)
        else:
            conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(f"ANALYZE {index.table.name}")
    return time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    from app.embedded import ensure_postgres
    from app.storage import tenants
    from app.storage.db import make_engine
    from app.storage.migrate import upgrade
    from bench.datasets import spread
    from bench.runner import Client
    from bench.scale import MODES, ScaleOptions, ScaleStack, _queries, _reranker_path, _stop_embedded
    from bench.scale_data import Corpus, SourcePool
    from bench.scale_seed import WRITE_BATCH, write_events

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", required=True, help="the index to toggle (a name in app/storage/models.py)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds per variant, alternating absent/present")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rerank", action="store_true", help="also the modes with the cross-encoder")
    ap.add_argument("--write-batches", type=int, default=0, help="per round and variant, also time this many "
                    "1,000-event batches of the corpus' next events through the service's writer (in-process)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--var-dir", type=Path, default=REPO_ROOT / "var" / "bench-scale")
    ap.add_argument("--out-dir", type=Path, default=REPO_ROOT / "bench" / "results")
    ap.add_argument("--data-dir", type=Path, default=None)
    a = ap.parse_args(argv)

    opts = ScaleOptions(queries=a.queries, seed=a.seed, var_dir=a.var_dir, out_dir=a.out_dir,
                        data_dir=a.data_dir or default_data_dir())
    db_url = ensure_postgres(a.var_dir)
    upgrade(db_url)
    engine = make_engine(db_url, pool_size=2)
    with engine.begin() as conn:
        tid, name = conn.execute(text("SELECT id, name FROM tenants WHERE name LIKE 'scale-%' "
                                      "ORDER BY id DESC LIMIT 1")).one()
        events = conn.execute(text("SELECT count(*) FROM events WHERE tenant_id = :t"), {"t": tid}).scalar_one()
        key = tenants.create_key(conn, tid)
    _log(f"tenant {name}: {events:,} events; regenerating its planted pairs")
    corpus = Corpus(SourcePool.load(opts.data_dir), a.seed, assistant_share=opts.assistant_share)
    planted = [p for _, p in corpus.events(0, events) if p is not None]
    modes = MODES if a.rerank else tuple(m for m in MODES if not m[1])
    rr = _reranker_path(opts)
    stack = ScaleStack(var_dir=a.var_dir, database_url=db_url, log_dir=a.var_dir / "logs",
                       extra_env={"PALIMPSEST_RERANKER_MODEL_PATH": str(rr) if rr else str(a.var_dir / "none")})
    run_id = datetime.now().strftime("%Y%m%d-%H%M%S")
    result: dict[str, Any] = {"benchmark": "scale-requery", "run_id": run_id, "git": _git(), "tenant": name,
                              "events": events, "index": a.index, "queries": a.queries, "rounds": []}
    stack.start()
    try:
        client = Client(stack.base_url, key, pool=2)
        client.wait_ready()
        for r in range(a.rounds):
            for present in (False, True):
                secs = set_index(engine, a.index, present)
                variant = "with" if present else "without"
                _log(f"round {r + 1}: {variant} {a.index} ({secs:.1f}s to set)")
                out = _queries(client, planted, opts, _log, modes=modes)
                if a.write_batches:
                    stop = events + WRITE_BATCH * a.write_batches
                    out["writer_eps"] = round((stop - events) / write_events(engine, tid, corpus, events, stop), 1)
                    events = stop
                    _log(f"  writer: {out['writer_eps']:.0f} events/s")
                result["rounds"].append({"round": r + 1, "variant": variant, "set_s": round(secs, 1), **out})
    finally:
        set_index(engine, a.index, True)  # leave the schema as migrated
        stack.stop()
        engine.dispose()
        _stop_embedded(a.var_dir)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    base = a.out_dir / f"scale-requery-{run_id}"
    base.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    base.with_suffix(".md").write_text(report(result, [f"{s}{'+rerank' if rr_ else ''}" for s, rr_ in modes]))
    _log(f"wrote {base}.md")
    return 0


def report(result: dict[str, Any], modes: list[str]) -> str:
    g = result["git"]
    lines = [f"# Scale re-query {result['run_id']}: {result['index']} absent / present", "",
             f"`python -m bench.scale_requery --index {result['index']} --queries {result['queries']}`; git "
             f"{g.get('commit')}{' (dirty)' if g.get('dirty') else ''}; tenant {result['tenant']} "
             f"({result['events']:,} events); {result['rounds'][0]['pairs']} planted questions per mode, one at a "
             "time, the same order every round.", "",
             "| round | index | mode | p50 ms | p95 ms | recall@10 | median ms per stage |",
             "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    writes = [(r["round"], r["variant"], r["writer_eps"]) for r in result["rounds"] if r.get("writer_eps")]
    for rnd in result["rounds"]:
        for mode in modes:
            m = rnd.get(mode)
            if not m:
                continue
            stages = ", ".join(f"{k} {v:.1f}" for k, v in m.get("stage_p50_ms", {}).items())
            lines.append(f"| {rnd['round']} | {rnd['variant']} | {mode} | {m['p50_ms']:.0f} | {m['p95_ms']:.0f} "
                         f"| {m['recall_at_10']:.3f} | {stages} |")
    if writes:
        lines += ["", "Writer, 1,000-event batches of the corpus' next events (in-process, one transaction each):", "",
                  "| round | index | events/s |", "| --- | --- | ---: |"]
        lines += [f"| {r} | {v} | {eps:,.0f} |" for r, v, eps in writes]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
