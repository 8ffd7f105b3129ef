"""Fit and choose the abstention model on the VALIDATION split, with grouped cross-validation:

    python -m bench.evaldb build --split validation            # LoCoMo + BEAM validation conversations
    python -m bench.abstain_data add-longmemeval --answerable 8  # + LongMemEval haystacks (all 17 `_abs`)
    python -m bench.abstain                                    # the rows: var/abstain-rows.jsonl
    python -m training.abstain [--write]                       # this: the table, and with --write the model

Rows (`bench.abstain`): label 1 (should abstain) for BEAM's abstention questions, LongMemEval's
`_abs` questions and the hand-written off-topic probes; label 0 for the answerable questions of
LoCoMo (not adversarial), BEAM and LongMemEval. LoCoMo's adversarial questions are reported, never
fitted on.

Each candidate feature set is a logistic regression (standardised features, balanced class weights)
whose threshold is set, on the rows it is fitted on, to the highest probability cut whose false
abstention rate on answerable questions stays under `MAX_FALSE` (1%). Every number reported is
out-of-fold: conversations are dealt into `FOLDS` groups (a conversation never on both sides; a
probe question is also dealt to a fold by its number, and scored only where the two folds agree, so
no probe is asked in training and in testing), each fold's rows scored by the model fitted on the
others. Of the candidates with the covered rule (`AbstainModel.covered`; the ones without it are
scored beside them, for its cost), the one with the best out-of-fold score is chosen: the mean recall
over the three kinds of positive (BEAM, LongMemEval, probes) less the mean false-abstention rate over
the three data sets, among those whose coefficients each weigh their feature the way it means
(`SIGNS`: a stronger match never argues for abstaining); of those within `PARSIMONY` (0.02) of the
best, the one with the fewest features. The shipped model is that set refitted on every row. Today's dense floor (0.31) is scored on the same rows. Writes
`bench/results/abstain-validation-<date>.{md,json}` and, with `--write`,
`app/adapters/abstain_model/abstain.json`.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "var" / "abstain-rows.jsonl"
MODEL = ROOT / "app" / "adapters" / "abstain_model" / "abstain.json"
OUT_DIR = ROOT / "bench" / "results"
FOLDS = 5
PARSIMONY = 0.02
MAX_FALSE = 0.01  # a false abstention hides an answer that was there: today's floor made none on these rows
COMMAND = "python -m training.abstain --write"
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "dense": ("dense",),
    "coverage": ("coverage", "coverage_top"),
    "coverage+dense": ("coverage", "coverage_top", "dense"),
    "coverage+dense+lexical": ("coverage", "coverage_top", "dense", "lexical", "names_missing"),
    "all": ("coverage", "coverage_top", "dense", "lexical", "names_missing", "top_score", "margin", "terms"),
}
# each set with and without the covered rule (`AbstainModel.covered`): a question every word of which
# is in the first ten items is answered, and the model is fitted on the other questions only
CANDIDATES: dict[str, tuple[tuple[str, ...], bool]] = {
    **{name: (feats, False) for name, feats in FEATURE_SETS.items()},
    **{f"{name}, covered rule": (feats, True) for name, feats in FEATURE_SETS.items() if name != "dense"},
}


def covered(row: dict[str, Any]) -> bool:
    f = row["features"]
    return f.get("terms", 0) > 0 and f.get("coverage_top", 0.0) >= 1.0


def load(path: Path = ROWS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def matrix(rows: list[dict[str, Any]], feats: tuple[str, ...]) -> np.ndarray:
    return np.array([[float(r["features"].get(f, 0.0)) for f in feats] for r in rows], dtype=np.float64)


def fit(rows: list[dict[str, Any]], feats: tuple[str, ...], max_false: float | None = None,
        rule: bool = False) -> dict[str, Any]:
    """The logistic model and its threshold. With the covered rule it is fitted on the uncovered rows,
    and its threshold counts the covered answerable questions too (never abstained on)."""
    from sklearn.linear_model import LogisticRegression

    max_false = MAX_FALSE if max_false is None else max_false
    n_neg_all = sum(1 for r in rows if r["label"] == 0)
    if rule:
        rows = [r for r in rows if not covered(r)]
    x, y = matrix(rows, feats), np.array([r["label"] for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    m = LogisticRegression(C=1.0, class_weight="balanced", max_iter=5000).fit((x - mean) / scale, y)
    model = {"mean": mean.tolist(), "scale": scale.tolist(), "coef": m.coef_[0].tolist(),
             "intercept": float(m.intercept_[0])}
    p = predict(model, x)
    neg = np.sort(p[y == 0])[::-1]
    # the lowest cut with at most max_false of the answerable questions at or above it
    k = int(np.floor(max_false * n_neg_all))
    threshold = float(neg[k]) + 1e-9 if k < len(neg) else 0.5
    return {"features": list(feats), "model": model, "threshold": min(max(threshold, 1e-6), 1.0), "covered": rule}


def predict(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    z = model["intercept"] + ((x - np.array(model["mean"])) / np.array(model["scale"])) @ np.array(model["coef"])
    return 1.0 / (1.0 + np.exp(-z))


def folds(rows: list[dict[str, Any]], k: int = FOLDS) -> list[int]:
    """Fold per row: conversations dealt round-robin (sorted by id) so each fold holds every data set."""
    convs = sorted({r["conversation"] for r in rows})
    by_ds: dict[str, list[str]] = defaultdict(list)
    for c in convs:
        by_ds[c.split("/")[0]].append(c)
    fold_of: dict[str, int] = {}
    i = 0
    for ds in sorted(by_ds):
        for c in by_ds[ds]:
            fold_of[c] = i % k
            i += 1
    return [fold_of[r["conversation"]] for r in rows]


def probe_fold(row: dict[str, Any], k: int = FOLDS) -> int | None:
    """A probe's own fold (by its number), so a probe question is never on both sides either."""
    if row["dataset"] != "probe":
        return None
    return int(row["qid"].rsplit(":p", 1)[1]) % k


def tested(rows: list[dict[str, Any]], k: int = FOLDS) -> list[bool]:
    """The rows the cross-validation scores: every question, and a probe only in the fold where its
    conversation's fold and its own agree (a fifth of the probe pairs, every probe and conversation once)."""
    fold = folds(rows, k)
    return [probe_fold(r, k) in (None, fold[i]) for i, r in enumerate(rows)]


def out_of_fold(rows: list[dict[str, Any]], feats: tuple[str, ...], k: int = FOLDS, rule: bool = False) -> list[bool]:
    """Each tested row's decision by the model fitted on the other folds' conversations (and, for the
    probes, on the other folds' probe questions)."""
    fold = folds(rows, k)
    decision = [False] * len(rows)
    for f in range(k):
        train = [r for i, r in enumerate(rows) if fold[i] != f and r["kind"] != "adversarial"
                 and probe_fold(r, k) != f]
        m = fit(train, feats, rule=rule)
        idx = [i for i, r in enumerate(rows) if fold[i] == f]
        if idx:
            p = predict(m["model"], matrix([rows[i] for i in idx], feats))
            for i, pi in zip(idx, p, strict=True):
                decision[i] = bool(pi >= m["threshold"]) and not (rule and covered(rows[i]))
    return decision


def table(rows: list[dict[str, Any]], decision: list[bool]) -> dict[str, Any]:
    """Precision and recall of abstaining, and false-abstention rates, overall and per data set, over
    the rows the cross-validation scores (`tested`)."""
    keep = tested(rows)
    def pr(sel: list[int]) -> dict[str, Any]:
        tp = sum(1 for i in sel if rows[i]["label"] == 1 and decision[i])
        fp = sum(1 for i in sel if rows[i]["label"] == 0 and decision[i])
        pos = sum(1 for i in sel if rows[i]["label"] == 1)
        neg = sum(1 for i in sel if rows[i]["label"] == 0)
        return {"precision": round(tp / (tp + fp), 4) if tp + fp and pos else None,
                "recall": round(tp / pos, 4) if pos else None,
                "false_abstain": round(fp / neg, 4) if neg else None, "positives": pos, "negatives": neg}

    fitted = [i for i, r in enumerate(rows) if r["kind"] != "adversarial" and keep[i]]
    out: dict[str, Any] = {"all (probes included)": pr(fitted)}
    for ds in ("locomo", "beam", "longmemeval"):
        # one data set's own questions: its abstention questions against its answerable ones
        out[ds] = pr([i for i in fitted if rows[i]["dataset"] == ds])
    out["probes"] = pr([i for i in fitted if rows[i]["dataset"] == "probe"])
    for ds in ("locomo", "beam", "longmemeval"):
        out[f"probes in {ds}"] = pr([i for i in fitted if rows[i]["dataset"] == "probe"
                                     and rows[i]["conversation"].startswith(ds + "/")])
    for ds in ("locomo", "beam", "longmemeval"):
        # one data set's conversations with everything asked of them: its questions and the probes
        out[f"{ds} with its probes"] = pr([i for i in fitted if rows[i]["conversation"].startswith(ds + "/")])
    adv = [i for i, r in enumerate(rows) if r["kind"] == "adversarial"]
    out["locomo adversarial (not fitted)"] = {"abstain_rate": round(sum(decision[i] for i in adv) / len(adv), 4)
                                              if adv else None, "questions": len(adv)}
    return out


# what each feature means for abstaining: more evidence (words found, a closer cosine, a stronger BM25
# match, a surer ranker) argues against it; a name said nowhere argues for it; length says nothing
SIGNS = {"coverage": -1, "coverage_top": -1, "dense": -1, "lexical": -1, "names_missing": +1, "top_score": -1,
         "margin": -1, "terms": 0}


def signs_agree(rows: list[dict[str, Any]], feats: tuple[str, ...], rule: bool) -> bool:
    """Whether the model fitted on every row weighs each feature the way it means (`SIGNS`): one whose
    coefficient says the opposite (a stronger match -> abstain) cannot be shown to a user as a reason."""
    m = fit([r for r in rows if r["kind"] != "adversarial"], feats, rule=rule)
    return all(SIGNS[f] == 0 or c * SIGNS[f] >= 0 for f, c in zip(feats, m["model"]["coef"], strict=True))


def study(rows: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {"rows": len(rows), "conversations": len({r["conversation"] for r in rows}),
                              "folds": FOLDS, "max_false": MAX_FALSE, "sets": {}}
    result["sets"]["dense floor 0.31 (today)"] = table(rows, [bool(r["dense_floor_abstain"]) for r in rows])
    scores: dict[str, float] = {}
    for name, (feats, rule) in CANDIDATES.items():
        t = table(rows, out_of_fold(rows, feats, rule=rule))
        result["sets"][f"logistic: {name}"] = t
        real = [t[k]["recall"] for k in ("beam", "longmemeval", "probes") if t[k]["recall"] is not None]
        false = [t[k]["false_abstain"] for k in ("locomo", "beam", "longmemeval") if t[k]["false_abstain"] is not None]
        score = float(np.mean(real) - np.mean(false))  # recall of each kind of positive, less false abstentions
        print(f"{name}: score {score:.3f}: recall {real} false {false}", file=sys.stderr)
        # only the covered rule's candidates may ship: without it a short question whose evidence ranked
        # first with every word, at cosine 0.24 (seen by hand, issue #17 item 9), abstains; the fitting data
        # has no answerable question under cosine 0.32 to teach a model otherwise. The tables show its cost.
        if rule and signs_agree(rows, feats, rule):
            scores[name] = score
        elif rule:
            print(f"{name}: a coefficient's sign contradicts its feature; not a candidate", file=sys.stderr)
    # the fewest features within PARSIMONY of the best score: a question's length or the ranker's margin
    # must earn more than noise to be shown to a user as a reason
    top = max(scores.values())
    best = min((n for n, sc in scores.items() if sc >= top - PARSIMONY),
               key=lambda n: (len(CANDIDATES[n][0]), -scores[n]))
    result["chosen"] = best
    result["scores"] = {n: round(sc, 4) for n, sc in scores.items()}
    return result


def markdown(result: dict[str, Any], model: dict[str, Any]) -> str:
    lines = [f"# Abstention on the validation split ({datetime.now(UTC):%Y-%m-%d})", "",
             f"`{COMMAND}` over `var/abstain-rows.jsonl` ({result['rows']} questions, "
             f"{result['conversations']} conversations; `python -m bench.abstain`). Out-of-fold: "
             f"{result['folds']} folds by conversation; each fold's threshold keeps the false-abstention "
             f"rate of its training folds' answerable questions under {result['max_false']:.0%}. "
             "Precision and recall are of abstaining; false_abstain is the share of answerable questions "
             "abstained on. A data set's row pits its own abstention questions against its own answerable "
             "ones (LoCoMo has none of the first); the probes' rows are the off-topic probes alone.", ""]
    for name, t in result["sets"].items():
        lines += [f"## {name}" + (" — chosen" if name == f"logistic: {result['chosen']}" else ""), "",
                  "| rows | precision | recall | false_abstain | positives | negatives |", "|---|---|---|---|---|---|"]
        for k, v in t.items():
            if "abstain_rate" in v:
                lines.append(f"| {k} | | abstains on {v['abstain_rate']} | | {v['questions']} | |")
            else:
                cells = ["—" if v[c] is None else v[c] for c in ("precision", "recall", "false_abstain")]
                lines.append(f"| {k} | {cells[0]} | {cells[1]} | {cells[2]} | {v['positives']} | {v['negatives']} |")
        lines.append("")
    lines += ["## Shipped model (refitted on every row)", "", "| feature | mean | scale | coefficient |",
              "|---|---|---|---|"]
    m = model["model"]
    for f, mu, sd, c in zip(model["features"], m["mean"], m["scale"], m["coef"], strict=True):
        lines.append(f"| {f} | {mu:.4f} | {sd:.4f} | {c:+.4f} |")
    lines += [f"| (intercept) | | | {m['intercept']:+.4f} |", "",
              f"Abstain when the probability is at least {model['threshold']:.4f}"
              + (", unless every content word of the question is in the first ten items (covered rule)."
                 if model.get("covered") else "."), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=Path, default=ROWS)
    p.add_argument("--write", action="store_true", help="write the chosen model to the product")
    p.add_argument("--dry", action="store_true", help="print the table only (no results file)")
    a = p.parse_args(argv)
    rows = load(a.rows)
    result = study(rows)
    feats, rule = CANDIDATES[result["chosen"]]
    chosen = fit([r for r in rows if r["kind"] != "adversarial"], feats, rule=rule)
    doc = {"format": "palimpsest-abstain/1", "kind": "logistic", "features": chosen["features"],
           "threshold": round(chosen["threshold"], 6), "covered": rule, "model": chosen["model"],
           "fitted_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "fitted_on": "validation split (LoCoMo, BEAM 100K), LongMemEval_S haystacks of the 17 `_abs` questions "
                        "and of answerable validation ones, off-topic probes (bench/data/probes)",
           "note": f"Fitted by {COMMAND}; out-of-fold table in bench/results/abstain-validation-*.md.",
           "validation": {"chosen": result["chosen"], "max_false": MAX_FALSE,
                          "out_of_fold": result["sets"][f"logistic: {result['chosen']}"],
                          "dense_floor": result["sets"]["dense floor 0.31 (today)"]}}
    md = markdown(result, chosen)
    print(md)
    if a.write:
        MODEL.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {MODEL}", file=sys.stderr)
    if not a.dry:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        (OUT_DIR / f"abstain-validation-{stamp}.md").write_text(md)
        (OUT_DIR / f"abstain-validation-{stamp}.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
