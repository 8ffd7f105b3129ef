"""Fit and choose the span-claim model (issue #19) on the hand-labelled layer set's DEV split:

    python -m training.span_claims                # the cross-validated table (bench/results/span-claims-*.md)
    python -m training.span_claims --write        # ... and the model, app/adapters/span_model/span_model.json

Rows: every capitalised span of every turn of a dev conversation
(`app.domain.layers.assertion_spans.candidate_spans`, the conversation's speakers as known names), with
its features (`span_features`, exactly as the service computes them) and its label: the attribute of a
gold assertion of that turn whose value (or one of its `alts`) is the span, or contains it, or is
contained in it (at least 3 characters), with `~neg` when the assertion is negated; `none` otherwise.
Only `ATTRIBUTES` (places and organisations: where one lives, works, moves, studies, comes from, the
groups one joins, the trips one plans, the team one works in) are labels: their values are names in the
turn. And every length of every role phrase (`role_spans`: an occupation or team word with up to two
words before it), with its features (`span_features`, of kind `role`) and the `ROLE_ATTRIBUTES` label (job_title,
works_in) of a gold assertion of that turn whose value is exactly the phrase. Everything else the rules
keep to themselves.

The model is a multinomial logistic regression (scikit-learn, L2). Every number this prints is
out-of-fold at the level the benchmark scores: the dev conversations are dealt into `FOLDS` groups
(sorted ids, round-robin: a conversation is never on both sides), each fold's conversations go through
the product's timeline (`consolidation.build_timeline(assertions.extract_all(events, spans=model))`)
with the model fitted on the others, and `bench.layers_score.score_assertions` scores them, the rules
alone in the same run. The (C, threshold) with the best mean of assertion F1 and supersession F1 is
chosen; the shipped model is that C refitted on every dev conversation, with that threshold. The test
split is never read.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "app" / "adapters" / "span_model" / "span_model.json"
OUT_DIR = ROOT / "bench" / "results"
FOLDS = 5
GRID_C = (0.3, 1.0, 3.0)
GRID_THRESHOLD = (0.4, 0.5, 0.6, 0.7)
MIN_WEIGHT = 0.05  # features weighing less than this in every class are left out of the file (the model stays small)
COMMAND = "python -m training.span_claims --write"


def label_of(conv: Any, turn_id: str, span: str, role: bool = False) -> str:
    """The attribute (with `~neg` when negated) of the gold assertion of the turn whose value is the span:
    a name's when the value is, contains or is contained in it (at least 3 characters); a role phrase's
    (`role`) when the value is exactly the phrase (of "product manager" and "manager", only the one the
    labeller wrote is a role)."""
    from app.domain.layers.assertion_spans import ATTRIBUTES, NEGATED, ROLE_ATTRIBUTES
    from app.domain.layers.text import norm_name

    key = norm_name(span)
    for a in conv.assertions:
        if a.turn != turn_id or a.attribute not in (ROLE_ATTRIBUTES if role else ATTRIBUTES):
            continue
        values = [norm_name(v) for v in (a.value, *a.alts)]
        if key in values or (not role and any(v and (v in key or key in v) and min(len(v), len(key)) >= 3
                                              for v in values)):
            return a.attribute + (NEGATED if a.negated else "")
    return "none"


def rows(convs: list[Any]) -> list[dict[str, Any]]:
    """A row per name (`candidate_spans`) and per role phrase (`role_spans`, every length) of every turn."""
    from app.domain.layers.assertion_spans import candidate_spans, role_spans, span_features
    from app.domain.layers.text import norm_name

    out = []
    for conv in convs:
        speakers = frozenset(norm_name(s) for s in conv.speakers)
        for t in conv.turns:
            for span, i, j in candidate_spans(t.text, speakers):
                out.append({"conv": conv.id, "features": span_features(t.text, span, i, j, speakers),
                            "label": label_of(conv, t.id, span)})
            for group in role_spans(t.text):
                for span, i, j in group:
                    out.append({"conv": conv.id, "features": span_features(t.text, span, i, j, speakers, kind="role"),
                                "label": label_of(conv, t.id, span, role=True)})
    return out


def fit(train: list[dict[str, Any]], c: float, threshold: float) -> Any:
    """A `SpanModel`: the logistic regression's weights, by feature name."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    from app.domain.layers.assertion_spans import SpanModel

    dv = DictVectorizer()
    x = dv.fit_transform([r["features"] for r in train])
    lr = LogisticRegression(C=c, max_iter=5000).fit(x, [r["label"] for r in train])
    coef = lr.coef_ if len(lr.classes_) > 2 else None
    if coef is None:
        raise ValueError("the labels hold fewer than three classes")
    weights = {name: tuple(round(float(w), 3) for w in coef[:, col])
               for name, col in dv.vocabulary_.items() if abs(coef[:, col]).max() >= MIN_WEIGHT}
    return SpanModel(tuple(str(k) for k in lr.classes_), tuple(round(float(b), 3) for b in lr.intercept_),
                     weights, threshold)


def score(convs: list[Any], models: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Assertion and supersession P/R/F1 of the product's timeline, each conversation read with
    `models[conv.id]` (None: the rules alone)."""
    from app.domain.layers import consolidation
    from app.domain.layers.assertions import extract_all
    from bench.layers import events_of
    from bench.layers_score import PredAssertion, prf, score_assertions

    tot: Counter[str] = Counter()
    sup: Counter[str] = Counter()
    for conv in convs:
        events = events_of(conv)
        timeline, _ = consolidation.build_timeline(extract_all(events, spans=models.get(conv.id)))
        preds = [PredAssertion(a.id, a.event_id, a.entity, a.attribute, a.value, a.effective_day, a.negated,
                               a.superseded_by) for a in timeline]
        a, s, _ = score_assertions(conv, preds)
        tot.update({k: a[k] for k in ("tp", "fp", "fn")})
        sup.update({k: s[k] for k in ("tp", "fp", "fn")})
    return {"assertions": prf(tot["tp"], tot["fp"], tot["fn"]), "supersessions": prf(sup["tp"], sup["fp"], sup["fn"])}


def choose(data_dir: Path | None = None) -> dict[str, Any]:
    """The cross-validated grid, the rules alone, the choice and the shipped model (refitted on all dev)."""
    from bench.layers_data import DATA_DIR, load_set

    convs = load_set("dev", data_dir or DATA_DIR)
    all_rows = rows(convs)
    ids = sorted(c.id for c in convs)
    fold = {cid: i % FOLDS for i, cid in enumerate(ids)}
    rules = score(convs, {})
    grid = []
    for c in GRID_C:
        fitted = {k: fit([r for r in all_rows if fold[r["conv"]] != k], c, 0.5) for k in range(FOLDS)}
        for threshold in GRID_THRESHOLD:
            models = {conv.id: _with_threshold(fitted[fold[conv.id]], threshold) for conv in convs}
            result = score(convs, models)
            objective = (result["assertions"]["f1"] + result["supersessions"]["f1"]) / 2
            grid.append({"C": c, "threshold": threshold, **result, "objective": round(objective, 4)})
            print(f"C {c} threshold {threshold}: assertions {result['assertions']}, supersessions "
                  f"{result['supersessions']}", file=sys.stderr)
    best = max(grid, key=lambda g: g["objective"])
    model = fit(all_rows, best["C"], best["threshold"])
    return {"command": COMMAND, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "trained_on": ids, "rows": len(all_rows), "labels": dict(Counter(r["label"] for r in all_rows)),
            "folds": FOLDS, "rules": rules, "grid": grid, "chosen": {"C": best["C"], "threshold": best["threshold"]},
            "model": model}


def _with_threshold(model: Any, threshold: float) -> Any:
    from dataclasses import replace

    return replace(model, threshold=threshold)


def markdown(result: dict[str, Any]) -> str:
    def cells(r: dict[str, Any]) -> str:
        a, s = r["assertions"], r["supersessions"]
        return (f"{a['precision']:.3f} / {a['recall']:.3f} / **{a['f1']:.3f}** | "
                f"{s['precision']:.3f} / {s['recall']:.3f} / **{s['f1']:.3f}**")

    lines = [f"# Span claims, cross-validated on the layer set's dev split ({result['date']})", "",
             f"Command: `{result['command']}`. {len(result['trained_on'])} dev conversations, {result['rows']} "
             f"candidate spans ({', '.join(f'{k} {v}' for k, v in sorted(result['labels'].items()))}); "
             f"{result['folds']} folds by conversation; every row out of fold; the test split is not read.", "",
             "| reader | assertions P / R / F1 | supersessions P / R / F1 |", "| --- | --- | --- |",
             f"| rules alone | {cells(result['rules'])} |"]
    for g in result["grid"]:
        mark = " (chosen)" if (g["C"], g["threshold"]) == (result["chosen"]["C"], result["chosen"]["threshold"]) else ""
        lines.append(f"| rules + span model, C {g['C']}, threshold {g['threshold']}{mark} | {cells(g)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.span_claims", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=None, help="the labelled set (default: bench/data/layers)")
    ap.add_argument("--write", action="store_true", help=f"write the model to {MODEL.relative_to(ROOT)}")
    ap.add_argument("--out", type=Path, default=MODEL, help="where --write puts the model")
    a = ap.parse_args(argv)
    result = choose(a.data_dir)
    model = result.pop("model")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    stem = OUT_DIR / f"span-claims-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    print(f"wrote {stem}.md / .json", file=sys.stderr)
    if a.write:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        meta = {"trained_on": result["trained_on"], "trained_at": result["date"], "chosen": result["chosen"],
                "command": COMMAND, "cross_validated": {k: result[k] for k in ("rules", "grid")}}
        a.out.write_text(json.dumps(model.to_dict() | {"meta": meta}, indent=None, separators=(",", ":")) + "\n")
        print(f"wrote {a.out} ({a.out.stat().st_size // 1024} KB, {len(model.weights)} features)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
