"""Offline evaluation of a reranker on held-out LoCoMo conversations, in-process (no service).

For every question of the held-out conversations (all categories with usable gold evidence):

* `dense`: the top-`pool` turns of the conversation by the embedder's cosine ("Speaker: content", as the
  embed worker indexes them);
* `hybrid`: weighted RRF (k = 60) of the dense and BM25 top-100, cut to `pool`;
* `+rerank`: each list through `app.domain.retrieval.rerank.rerank` (the stage itself) with the cross-encoder,
  at α = 0.55 (the blend) and α = 1 (the cross-encoder alone).

Reports r@5, r@10, all@10 and mrr (over the candidate list), overall and per category, and the
cross-encoder latency for `pool` pairs (p50 / p95 over the questions). Refuses to run on conversations
the model was trained on (its `training_report.json`).

    python -m training.eval_reranker --model var/models/reranker-minilm
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Sequence

import numpy as np

from app.domain.event import turn_text
from app.domain.retrieval.fusion import weighted_rrf
from app.domain.retrieval.rerank import ALPHA, RerankCandidate, rerank
from training.locomo import DEFAULT_LOCOMO, ConversationIndex, load_locomo
from bench.splits import validation_ids
from training.reranker import trained_on

HELDOUT_CONVERSATIONS = validation_ids("locomo")


def _metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    g = set(gold)
    first = next((i for i, t in enumerate(ranked, 1) if t in g), None)
    return {
        "r@5": float(any(t in g for t in ranked[:5])),
        "r@10": float(any(t in g for t in ranked[:10])),
        "all@10": float(g.issubset(ranked[:10])),
        "mrr": 1.0 / first if first else 0.0,
    }


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} if rows else {}


def _encode_cached(texts: list[str], encode, cache_dir: Path | None, tag: str) -> np.ndarray:
    if cache_dir is None:
        return encode(texts)
    h = hashlib.sha1(("\n".join(texts) + tag).encode()).hexdigest()[:16]
    p = cache_dir / f"emb-{h}.npy"
    if p.exists():
        return np.load(p)
    arr = encode(texts)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(p, arr)
    return arr


def evaluate(model_path: str, conversations: Sequence[str] = HELDOUT_CONVERSATIONS, *,
             data_path: str = str(DEFAULT_LOCOMO), pool: int = 50, alpha: float = ALPHA, hybrid: bool = True,
             cache_dir: str | None = "var/cache/reranker", allow_trained: bool = False, quantize: bool = True,
             log=print) -> dict:
    from app.adapters.embedder import get_embedder
    from app.adapters.reranker import Reranker

    leak = trained_on(model_path) & set(conversations)
    if leak and not allow_trained:
        raise ValueError(f"{model_path} was trained on {sorted(leak)}; evaluate on other conversations")
    convs = load_locomo(data_path, only=conversations)
    emb = get_embedder()
    ce = Reranker(model_path, quantize=quantize)
    cdir = Path(cache_dir) if cache_dir else None

    systems = ["dense", "dense+rerank", "dense+ce_only"]
    if hybrid:
        systems += ["hybrid", "hybrid+rerank", "hybrid+ce_only"]
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    by_cat: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    n_q = 0
    t_start = time.perf_counter()
    for conv in convs:
        texts = [turn_text(t.speaker, t.content) for t in conv.turns]
        tvecs = _encode_cached(texts, emb.encode, cdir, emb.name)
        qvecs = _encode_cached([q.question for q in conv.questions], emb.encode, cdir, emb.name + "/q")
        idx = ConversationIndex(conv, tvecs)
        text_of = dict(zip(idx.ids, texts))
        for qa, qv in zip(conv.questions, qvecs):
            lists: dict[str, list[tuple[str, float]]] = {"dense": idx.dense(qv, pool)}
            if hybrid:
                d100, b100 = idx.dense(qv, 100), idx.bm25(qa.question, 100)
                fused = weighted_rrf({"dense": [t for t, _ in d100], "lexical": [t for t, _ in b100]}, None, 60)
                lists["hybrid"] = fused[:pool]
            # score every distinct candidate once; time exactly one `pool`-pair call (the dense list)
            scored: dict[str, float] = {}
            dense_ids = [t for t, _ in lists["dense"]]
            t0 = time.perf_counter()
            for tid, s in zip(dense_ids, ce.score(qa.question, [text_of[t] for t in dense_ids])):
                scored[tid] = float(s)
            latencies.append((time.perf_counter() - t0) * 1000)
            missing = [t for name in lists for t, _ in lists[name] if t not in scored]
            missing = list(dict.fromkeys(missing))
            if missing:
                for tid, s in zip(missing, ce.score(qa.question, [text_of[t] for t in missing])):
                    scored[tid] = float(s)

            for name, lst in lists.items():
                ids = [t for t, _ in lst]
                cands = [RerankCandidate(t, text_of[t], s) for t, s in lst]
                res = {name: ids}
                for suffix, a in (("+rerank", alpha), ("+ce_only", 1.0)):
                    out = rerank(qa.question, cands, lambda _q, b, _ids=ids, _s=scored: [_s[t] for t in _ids[: len(b)]],
                                 top_n=pool, alpha=a)
                    res[name + suffix] = [r.id for r in out]
                for sys_name, ranked in res.items():
                    m = _metrics(ranked, qa.gold)
                    rows[sys_name].append(m)
                    by_cat[(sys_name, qa.category)].append(m)
            n_q += 1
            if n_q % 100 == 0:
                log(f"{n_q} questions ({time.perf_counter() - t_start:.0f}s)")
    lat = sorted(latencies)
    report = {
        "model": model_path,
        "trained_on": sorted(trained_on(model_path)),
        "evaluated_on": list(conversations),
        "questions": n_q,
        "pool": pool,
        "alpha": alpha,
        "quantized": ce.quantized,
        "overall": {s: _mean(rows[s]) for s in systems},
        "per_category": {
            cat: {s: _mean(by_cat[(s, cat)]) for s in systems}
            for cat in sorted({c for _, c in by_cat})
        },
        "ce_latency_ms": {
            "pairs": pool,
            "p50": round(statistics.median(lat), 1) if lat else None,
            "p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1) if lat else None,
        },
        "seconds": round(time.perf_counter() - t_start, 1),
    }
    return report


def latency_probe(model_path: str, pairs: int = 50, runs: int = 15, max_length: int = 256,
                  quantize: bool = True) -> dict[str, float]:
    """p50/p95 of one `pairs`-pair scoring call on realistic LoCoMo turns (after one warm-up)."""
    from app.adapters.reranker import Reranker

    conv = load_locomo(only=[HELDOUT_CONVERSATIONS[0]])[0]
    texts = [turn_text(t.speaker, t.content) for t in conv.turns[:pairs]]
    ce = Reranker(model_path, max_length=max_length, quantize=quantize)
    ce.score("warm up", texts[:4])
    ts = []
    for i in range(runs):
        q = conv.questions[i % len(conv.questions)].question
        t0 = time.perf_counter()
        ce.score(q, texts)
        ts.append((time.perf_counter() - t0) * 1000)
    ts.sort()
    import os

    return {"pairs": pairs, "runs": runs, "quantized": ce.quantized, "load_avg_1m": round(os.getloadavg()[0], 2),
            "p50_ms": round(statistics.median(ts), 1),
            "p95_ms": round(ts[min(len(ts) - 1, int(0.95 * len(ts)))], 1), "min_ms": round(ts[0], 1)}


def _table(report: dict) -> str:
    lines = ["| system | r@5 | r@10 | all@10 | mrr |", "| --- | --- | --- | --- | --- |"]
    for s, m in report["overall"].items():
        lines.append(f"| {s} | {m['r@5']:.3f} | {m['r@10']:.3f} | {m['all@10']:.3f} | {m['mrr']:.3f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Held-out evaluation of a cross-encoder reranker on LoCoMo.")
    ap.add_argument("--model", default="var/models/reranker-minilm")
    ap.add_argument("--data", default=str(DEFAULT_LOCOMO))
    ap.add_argument("--conversations", default=",".join(HELDOUT_CONVERSATIONS))
    ap.add_argument("--pool", type=int, default=50)
    ap.add_argument("--alpha", type=float, default=ALPHA)
    ap.add_argument("--no-hybrid", action="store_true")
    ap.add_argument("--latency-runs", type=int, default=15)
    ap.add_argument("--fp32", action="store_true", help="do not quantise the cross-encoder to int8")
    ap.add_argument("--out", default=None, help="write the JSON report here")
    a = ap.parse_args(argv)
    report = evaluate(a.model, [c for c in a.conversations.split(",") if c], data_path=a.data, pool=a.pool,
                      alpha=a.alpha, hybrid=not a.no_hybrid, quantize=not a.fp32, log=lambda m: print(m, flush=True))
    if a.latency_runs:
        report["latency_probe"] = latency_probe(a.model, a.pool, a.latency_runs, quantize=not a.fp32)
    print(_table(report))
    print(json.dumps(report, indent=2))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
