"""The dense signal alone, per embedder, on the validation split: each question's conversation
(LongMemEval_S: its haystack) encoded turn by turn as the service encodes events (the words alone,
`app.domain.event.embedding_text`), turns ranked by cosine to the question.

    python -m training.embedder_eval MODEL_DIR [MODEL_DIR ...] [--datasets locomo,beam,longmemeval]

writes `bench/results/embedder-validation-<date>.{md,json}`: r@5, r@10 and mrr (`bench.metrics`, as every
report here: r@k is 1 when any gold turn is in the first k) over the questions with gold evidence, per
data set and per category. A model whose training manifest lists a
validation conversation is refused (`bench.provenance.check_overlap`).
"""
from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def dense_scores(model_path: str, dataset: str, log=print) -> dict[str, Any]:  # noqa: ANN001 - a print-like
    """r@5 / r@10 / mrr of cosine ranking with the model at `model_path`, over `dataset`'s validation split."""
    from sentence_transformers import SentenceTransformer

    from app.domain.event import embedding_text
    from bench.baselines import rank_scores
    from bench.metrics import rank_metrics
    from bench.provenance import check_overlap, model_info
    from bench.splits import load_split

    ds = load_split("validation", names=(dataset,))[dataset]
    check_overlap({"embedder": model_info(model_path)}, dataset, [c.id for c in ds.conversations])
    model = SentenceTransformer(model_path, device="cpu", local_files_only=True)
    rows: list[tuple[str, dict[str, float]]] = []  # (category, bench.metrics.rank_metrics of its ranking)
    for conv in ds.conversations:
        qs = [q for q in ds.questions if q.conversation_id == conv.id and q.gold]
        if not qs:
            continue
        ids = [t.event_id for t in conv.turns]
        turns = model.encode([embedding_text(t.content) for t in conv.turns], batch_size=16,
                             normalize_embeddings=True)
        questions = model.encode([q.question for q in qs], batch_size=32, normalize_embeddings=True)
        for q, sims in zip(qs, questions @ turns.T):
            rows.append((q.category, rank_metrics(rank_scores(sims, ids), q.gold)))
    log(f"{Path(model_path).name} {dataset}: {len(rows)} questions")

    def summary(sel: list[tuple[str, dict[str, float]]]) -> dict[str, float]:
        return {k: round(float(np.mean([m[k] for _, m in sel])), 3) for k in ("r@5", "r@10", "mrr")} | {"n": len(sel)}

    return {"overall": summary(rows),
            "categories": {c: summary([r for r in rows if r[0] == c]) for c in sorted({r[0] for r in rows})}}


def markdown(result: dict[str, Any]) -> str:
    lines = [f"# The dense signal alone, per embedder, validation split ({result['date']})", "",
             f"Command: `{result['command']}`. Each turn encoded as the service encodes events (its words "
             "alone), ranked by cosine to the question; questions with gold evidence.", ""]
    for ds, by_model in result["datasets"].items():
        lines += [f"## {ds}", "", "| embedder | r@5 | r@10 | mrr | n |", "| --- | ---: | ---: | ---: | ---: |"]
        for name, r in by_model.items():
            o = r["overall"]
            lines.append(f"| {name} | {o['r@5']:.3f} | {o['r@10']:.3f} | {o['mrr']:.3f} | {o['n']} |")
        cats = sorted({c for r in by_model.values() for c in r["categories"]})
        names = list(by_model)
        lines += ["", "r@10 per category:", "", "| category | " + " | ".join(names) + " |",
                  "| --- |" + " ---: |" * len(names)]
        for c in cats:
            lines.append(f"| {c} | " + " | ".join(
                f"{by_model[n]['categories'].get(c, {}).get('r@10', float('nan')):.3f}" for n in names) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The dense signal alone, per embedder, on the validation split.")
    ap.add_argument("models", nargs="+", help="sentence-transformers directories ('packaged': all-MiniLM-L6-v2)")
    ap.add_argument("--datasets", default="locomo,beam,longmemeval")
    ap.add_argument("--tag", default="")
    a = ap.parse_args(argv)
    import sys

    from app.settings import packaged_minilm_path

    paths = {m: (packaged_minilm_path() if m == "packaged" else m) for m in a.models}
    result: dict[str, Any] = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                              "command": "python -m training.embedder_eval " + " ".join(sys.argv[1:] if argv is None else argv),
                              "datasets": {}}
    for ds in a.datasets.split(","):
        result["datasets"][ds] = {m: dense_scores(p, ds) for m, p in paths.items()}
    stamp = datetime.now(UTC).strftime("%Y%m%d") + (f"-{a.tag}" if a.tag else "")
    out = ROOT / "bench" / "results" / f"embedder-validation-{stamp}"
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(result) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
