"""Cross-encoder batching: one padded batch of a query's candidates against length-sorted batches.

    .venv/bin/python -m bench.rerank_batching                         # LoCoMo and BEAM, the trained reranker
    .venv/bin/python -m bench.rerank_batching --datasets locomo --questions 10 --batches 64,8

Writes bench/results/rerank-batching-<ts>.json and .md. What it measures:

- **pairs**: per question, `--pairs` turns of its own conversation (random, seeded) as the reranker
  reads them (`speaker: content`): the shape of the rerank stage's top 20, with LoCoMo's short chat
  turns and BEAM's long ones;
- **latency**: `Reranker.score` per question, at each batch size, configurations interleaved per
  question and repeated, p50/p95 over all; batch size ≥ the pair count is the old single batch;
- **fidelity**: every configuration against the same model in fp32 scoring each pair alone (no
  padding at all): mean |logit difference| and Spearman ρ of the ranking. The int8 model's dynamic
  quantisation scales activations per batch, so the batch's make-up moves scores a little either way.
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def question_sets(data_dir: Path, dataset: str, questions: int, pairs: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    """(question, passages) per question, from the first conversations of the data set."""
    from app.domain.event import turn_text
    from bench.datasets import load_beam, load_locomo, subset

    ds = load_locomo(data_dir) if dataset == "locomo" else subset(load_beam(data_dir), conversations=2)
    rng = random.Random(seed)
    turns = {c.id: [turn_text(t.speaker, t.content) for t in c.turns] for c in ds.conversations}
    out = []
    for q in ds.questions:
        pool = turns.get(q.conversation_id) or []
        if len(pool) >= pairs:
            out.append((q.question, rng.sample(pool, pairs)))
        if len(out) >= questions:
            break
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 1 else 1.0


def run(model_path: str, sets: list[tuple[str, list[str]]], batches: list[int], repeats: int) -> dict[str, Any]:
    from app.adapters.reranker import Reranker

    models = {b: Reranker(model_path, batch_size=b, quantize=True) for b in batches}
    exact = Reranker(model_path, batch_size=1, quantize=False)
    ms: dict[int, list[float]] = {b: [] for b in batches}
    err: dict[int, list[float]] = {b: [] for b in batches}
    rho: dict[int, list[float]] = {b: [] for b in batches}
    for q, ps in sets[:2]:  # warm-up
        for m in models.values():
            m.score(q, ps)
    for rep in range(repeats):
        for q, ps in sets:
            ref = exact.score(q, ps) if rep == 0 else None
            for b, m in models.items():
                t0 = time.perf_counter()
                s = m.score(q, ps)
                ms[b].append((time.perf_counter() - t0) * 1000.0)
                if ref is not None:
                    err[b].append(float(np.abs(ref - s).mean()))
                    rho[b].append(_spearman(ref, s))
    rows = []
    for b in batches:
        v = sorted(ms[b])
        rows.append({"batch_size": b, "p50_ms": statistics.median(v), "p95_ms": v[max(0, int(0.95 * len(v)) - 1)],
                     "mean_abs_logit_diff": statistics.fmean(err[b]), "spearman": statistics.fmean(rho[b])})
    return {"rows": rows, "questions": len(sets), "pairs": len(sets[0][1]) if sets else 0}


def markdown(res: dict[str, Any]) -> str:
    lines = [f"# Cross-encoder batching ({res['when']})", "",
             f"Model `{res['model']}`, int8, {res['threads']} torch thread(s); `python -m bench.rerank_batching "
             f"{' '.join(res['argv'])}`. Batch size ≥ pairs is the single padded batch; the others are "
             "shortest first. Fidelity: against the fp32 model scoring each pair alone.", ""]
    for ds, r in res["datasets"].items():
        base = r["rows"][0]["p50_ms"]
        lines += [f"## {ds}: {r['questions']} questions × {r['pairs']} pairs", "",
                  "| batch size | p50 ms | p95 ms | p50 / first row | mean abs logit diff | Spearman ρ |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for row in r["rows"]:
            lines.append(f"| {row['batch_size']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
                         f"{row['p50_ms'] / base:.2f} | {row['mean_abs_logit_diff']:.3f} | {row['spearman']:.3f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import torch

    from app.adapters.reranker import default_reranker_path
    from app.settings import get_settings

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    p.add_argument("--model", default=None, help="a cross-encoder directory (default: the configured reranker)")
    p.add_argument("--datasets", default="locomo,beam")
    p.add_argument("--questions", type=int, default=25)
    p.add_argument("--pairs", type=int, default=20, help="candidates per question (the stage's rerank_top_n)")
    p.add_argument("--batches", default="64,10,8,5,2")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out-dir", type=Path, default=REPO_ROOT / "bench" / "results")
    args = p.parse_args(argv)
    threads = get_settings().torch_threads
    if threads:
        torch.set_num_threads(threads)
    model = args.model or default_reranker_path()
    batches = [int(b) for b in args.batches.split(",")]
    when = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    res: dict[str, Any] = {"when": when, "model": model, "threads": torch.get_num_threads(), "argv": list(sys.argv[1:] if argv is None else argv),
                           "machine": platform.machine(), "datasets": {}}
    for ds in args.datasets.split(","):
        sets = question_sets(args.data_dir, ds, args.questions, args.pairs)
        _log(f"{ds}: {len(sets)} questions × {args.pairs} pairs, batch sizes {batches}")
        res["datasets"][ds] = run(model, sets, batches, args.repeats)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = args.out_dir / f"rerank-batching-{when}"
    stem.with_suffix(".json").write_text(json.dumps(res, indent=2))
    stem.with_suffix(".md").write_text(markdown(res))
    _log(f"wrote {stem}.md")
    print(markdown(res))
    return res


if __name__ == "__main__":
    main()
