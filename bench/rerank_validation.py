"""The cross-encoder on the VALIDATION split, in-process against the shared development database.

For every validation question of LoCoMo and BEAM (`bench.splits`), the default pipeline is queried
(`app.services.query.run_query`, top 50, budget 2,000, no LLM) once per system:

* `default, no cross-encoder` (reranker=None),
* `+ <model>` for each `--model` (rerank on, `rerank_top_n` from the recipe unless `--top-n`),

and scored by the harness's own functions (`bench.evaluate.summarize`: r@5, r@10, all@10, mrr, er@2000;
per category, "overall" without LoCoMo's adversarial / BEAM's abstention, "all" with them). Latency is
the whole query, in-process, per question (p50 / p95), and the rerank stage alone. A model is refused
on conversations its training manifest lists (`bench.provenance.check_overlap`).

    python -m bench.rerank_validation --model var/models/reranker-minilm --model var/models/ce-locomo \\
        [--threads 2] [--top-n 20] [--max-length 256] [--limit 0] [--out bench/results/rerank-validation]

Never writes to the database (read-only queries).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

BUDGET = 2000
TOP = 50
KEYS = ("r@5", "r@10", "all@10", "mrr", "er@2k")


def _systems(models: list[str], max_length: int) -> list[tuple[str, Any]]:
    from app.adapters.reranker import Reranker
    from app.settings import get_settings

    s = get_settings()
    out: list[tuple[str, Any]] = [("default, no cross-encoder", None)]
    for m in models:
        out.append((f"+ {Path(m).name}", Reranker(m, max_length=max_length, batch_size=s.reranker_batch_size,
                                                  quantize=s.reranker_quantize)))
    return out


def run(models: list[str], threads: int, top_n: int | None, max_length: int, limit: int,
        datasets: tuple[str, ...] = ("locomo", "beam"), baseline: bool = True) -> dict[str, Any]:
    import torch

    from app.adapters.embedder import get_embedder
    from app.domain.recipe import Recipe
    from app.services.query import QueryInput, run_query
    from app.settings import get_settings
    from app.storage.candidates import Scope
    from app.storage.db import get_engine
    from bench.datasets import default_data_dir, load_beam, load_locomo, subset
    from bench.evaldb import attach
    from bench.evaluate import SystemAnswer, summarize
    from bench.provenance import check_overlap, model_info
    from bench.splits import select

    tid = attach()
    torch.set_num_threads(threads)
    recipe = Recipe.from_settings(get_settings()).with_overrides({"rerank": True})  # runs only with a model
    if top_n:
        recipe = recipe.with_overrides({"rerank_top_n": top_n})
    embedder = get_embedder()
    engine = get_engine()
    data = default_data_dir()
    loaders = {"locomo": load_locomo, "beam": load_beam}
    sets = [select(loaders[name](data), "validation") for name in datasets]
    if limit:
        sets = [subset(ds, limit=limit) for ds in sets]
    for ds in sets:
        for m in models:
            check_overlap({"reranker": model_info(m)}, ds.name, [c.id for c in ds.conversations])
    systems = _systems(models, max_length)[(0 if baseline else 1):]
    result: dict[str, Any] = {"threads": threads, "rerank_top_n": recipe.rerank_top_n, "max_length": max_length,
                              "models": {name: model_info(ce.path) if ce else None for name, ce in systems},
                              "load_avg_1m_start": round(os.getloadavg()[0], 2), "datasets": {}}
    for ds in sets:
        per: dict[str, Any] = {}
        for name, ce in systems:
            answers: dict[str, SystemAnswer] = {}
            stage: list[float] = []
            t0 = time.perf_counter()
            for q in ds.questions:
                if not q.gold and not q.abstention:
                    continue
                started = time.perf_counter()
                with engine.connect() as conn:
                    out = run_query(conn, QueryInput(q.question, Scope(tenant_id=tid, conversation_id=f"{ds.name}/"
                                                                       f"{q.conversation_id}"), TOP, BUDGET),
                                    recipe, embedder, reranker=ce, llm=None)
                ms = (time.perf_counter() - started) * 1000.0
                if "rerank" in out.timings:
                    stage.append(out.timings["rerank"])
                answers[q.qid] = SystemAnswer(
                    [it.event.event_id for it in out.items], {BUDGET: [ev.event_id for ev, _ in out.context_items]},
                    {BUDGET: out.context_tokens}, abstain=bool(out.abstain), relevance=dict(out.relevance),
                    latency_ms={BUDGET: ms})
            s = summarize(ds, answers, [BUDGET])
            s["records"] = [{k: r[k] for k in ("qid", "category", *KEYS)} for r in s["records"]]
            s["rerank_stage_ms"] = {"p50": round(statistics.median(stage), 1),
                                    "p95": round(sorted(stage)[int(0.95 * (len(stage) - 1))], 1)} if stage else None
            s["seconds"] = round(time.perf_counter() - t0, 1)
            per[name] = s
            print(f"{ds.name} {name}: " + " ".join(f"{k} {s['table']['overall'][k]:.3f}" for k in KEYS)
                  + f"  p50 {s['latency']['p50_ms']:.0f} ms p95 {s['latency']['p95_ms']:.0f} ms"
                  + (f" (rerank p50 {s['rerank_stage_ms']['p50']} ms)" if stage else ""), flush=True)
        result["datasets"][ds.name] = per
    result["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    return result


def markdown(res: dict[str, Any]) -> str:
    lines = [f"threads {res['threads']}, rerank_top_n {res['rerank_top_n']}, max_length {res['max_length']}, "
             f"load avg {res['load_avg_1m_start']} -> {res['load_avg_1m_end']}", ""]
    for ds, per in res["datasets"].items():
        lines += [f"### {ds} (validation)", "",
                  "| system | rows | n | r@5 | r@10 | all@10 | mrr | er@2k | p50 ms | p95 ms | rerank p50 ms |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, s in per.items():
            t = s["table"]
            for row in ["overall", "all"] + [c for c in t if c not in ("overall", "all")]:
                if row not in t:
                    continue
                r = t[row]
                lat = s["latency"] if row == "overall" else {}
                rr = (s.get("rerank_stage_ms") or {}).get("p50", "") if row == "overall" else ""
                lines.append(f"| {name} | {row} | {r['n']} | " + " | ".join(f"{r[k]:.3f}" for k in KEYS)
                             + f" | {lat.get('p50_ms', float('nan')):.0f} | {lat.get('p95_ms', float('nan')):.0f}"
                             f" | {rr} |" if lat else
                             f"| {name} | {row} | {r['n']} | " + " | ".join(f"{r[k]:.3f}" for k in KEYS) + " | | | |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top-n", type=int, default=None)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--limit", type=int, default=0, help="questions per data set (0: all)")
    ap.add_argument("--datasets", default="locomo,beam")
    ap.add_argument("--no-baseline", action="store_true", help="only the models (the baseline is deterministic)")
    ap.add_argument("--out", default=None, help="write <out>.json and <out>.md")
    a = ap.parse_args(argv)
    res = run(a.model, a.threads, a.top_n, a.max_length, a.limit, tuple(a.datasets.split(",")), not a.no_baseline)
    md = markdown(res)
    print(md)
    if a.out:
        Path(a.out + ".json").write_text(json.dumps(res, indent=1, default=str) + "\n")
        Path(a.out + ".md").write_text(md + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
