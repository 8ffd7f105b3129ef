"""The learned fusion: features of every candidate the query gathers, labelled by gold evidence,
fitted on the TRAIN split, chosen on VALIDATION, shipped as `app/adapters/fusion_model/fusion.json`.

    python -m training.fusion                 # collect train + validation features, fit, choose, write the model
    python -m training.fusion --evaluate      # the validation report (bench/fusion_eval.py)

It attaches to the shared development database (`bench.evaldb.attach()`, read only) and runs the
query service itself (`app.services.query.run_query`, default recipe with `learned` on) with a
recording model, so the features are exactly those the service computes at query time. Questions
with no gold among the candidates carry no signal for ranking and are left out of fitting.
Two models are fitted: LightGBM lambdarank (200 trees of depth 3; FUSION_CV=1 picks from a small
grid by group 3-fold by conversation on train)
and a logistic regression; the one with the better validation r@10 + mrr (LoCoMo and BEAM
averaged) is written.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# $PALIMPSEST_FUSION_CACHE / $PALIMPSEST_FUSION_OUT: another feature cache and model file (an ablation
# collected with a stage off, e.g. PALIMPSEST_FINDABLE_ENABLED=false, without touching the shipped one)
CACHE = Path(os.environ.get("PALIMPSEST_FUSION_CACHE") or ROOT / "var" / "fusion")
# the data sets fitted on; $PALIMPSEST_FUSION_DATASETS (comma list) adds LongMemEval_S, whose
# haystacks a database holds only when built with `bench.evaldb build --longmemeval N`
DATASETS = tuple((os.environ.get("PALIMPSEST_FUSION_DATASETS") or "locomo,beam").split(","))
POOL_TOP_K = 1000  # every fused candidate comes back


@dataclass
class QueryRows:
    dataset: str
    qid: str
    conversation: str
    category: str
    ids: list[str]  # candidate event ids, fused order
    x: np.ndarray
    y: np.ndarray  # 1 = gold evidence


class Recorder:
    """A fusion model that keeps the fused order (all scores 0) and records the feature rows."""

    def __init__(self) -> None:
        self.rows: np.ndarray | None = None

    def score(self, rows: np.ndarray) -> np.ndarray:
        self.rows = rows.copy()
        return np.zeros(len(rows))

    def contributions(self, rows: np.ndarray) -> np.ndarray:
        return np.zeros((len(rows), rows.shape[1] + 1))


def collect(split: str, dataset: str, tenant_id: int) -> list[QueryRows]:
    """Every question of the split with gold evidence: its candidates' features and labels."""
    from app.adapters.embedder import get_embedder
    from app.domain.recipe import Recipe
    from app.services.query import QueryInput, run_query
    from app.settings import get_settings
    from app.storage.candidates import Scope
    from app.storage.db import get_engine

    recipe = Recipe.from_settings(get_settings()).with_overrides({"learned": True})
    embedder = get_embedder()
    engine = get_engine()
    out: list[QueryRows] = []
    t0 = time.perf_counter()
    from bench.splits import load_split

    ds = load_split(split, names=(dataset,))[dataset]
    ready: set[str] = set()
    present = built_conversations(engine, tenant_id, dataset) if dataset == "longmemeval" else None
    for q in ds.questions:
        if not q.gold or (present is not None and q.conversation_id not in present):
            continue
        if q.conversation_id not in ready:
            wait_built(engine, tenant_id, f"{dataset}/{q.conversation_id}")
            ready.add(q.conversation_id)
        rec = Recorder()
        scope = Scope(tenant_id=tenant_id, conversation_id=f"{dataset}/{q.conversation_id}")
        with engine.connect() as conn:
            res = run_query(conn, QueryInput(q.question, scope, POOL_TOP_K, 2000), recipe, embedder,
                            reranker=None, llm=None, fusion_model=rec)
        ids = [str(it.event.event_id) for it in res.items]
        x = rec.rows if rec.rows is not None else np.zeros((0, 0))
        gold = set(q.gold)
        out.append(QueryRows(dataset, q.qid, q.conversation_id, q.category, ids, x,
                             np.array([1.0 if e in gold else 0.0 for e in ids])))
        if len(out) % 50 == 0:
            print(f"{split} {dataset}: {len(out)} questions, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return out


def built_conversations(engine: Any, tenant_id: int, dataset: str) -> set[str]:
    """The conversations of `dataset` the database holds (LongMemEval_S: the haystacks it was built
    with, a subset of the split)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        rows = conn.execute(text("SELECT DISTINCT conversation_id FROM layer_runs WHERE tenant_id = :t "
                                 "AND conversation_id LIKE :p"), {"t": tenant_id, "p": f"{dataset}/%"}).all()
    return {r[0].split("/", 1)[1] for r in rows}


def wait_built(engine: Any, tenant_id: int, conversation_id: str, timeout_s: float = 3600.0) -> None:
    """Wait until the conversation's last layer (graph) is built: a database still being built is
    read conversation by conversation as it completes."""
    from sqlalchemy import text

    started = time.perf_counter()
    while True:
        with engine.connect() as conn:
            done = conn.execute(text("SELECT 1 FROM layer_runs WHERE tenant_id = :t AND conversation_id = :c "
                                     "AND layer = 'graph' LIMIT 1"), {"t": tenant_id, "c": conversation_id}).first()
        if done or time.perf_counter() - started > timeout_s:
            return
        print(f"waiting for {conversation_id} to be built", file=sys.stderr)
        time.sleep(20)


def cached(split: str, tenant_id: int | None, datasets: tuple[str, ...] = DATASETS) -> list[QueryRows]:
    """The split's feature rows, collected once per data set into var/fusion/ (delete to collect again)."""
    rows: list[QueryRows] = []
    for dataset in datasets:
        path = CACHE / f"{split}-{dataset}.pkl"
        if path.exists():
            rows += [QueryRows(**d) for d in pickle.loads(path.read_bytes())]
            continue
        assert tenant_id is not None
        got = collect(split, dataset, tenant_id)
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps([vars(r) for r in got]))
        rows += got
    return rows


# ---------------------------------------------------------------- fitting


def _fit_set(rows: list[QueryRows]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    use = [r for r in rows if len(r.ids) and r.y.sum() > 0]
    return np.vstack([r.x for r in use]), np.concatenate([r.y for r in use]), [len(r.ids) for r in use]


def fit_lgbm(rows: list[QueryRows], params: dict[str, Any]) -> Any:
    import lightgbm as lgb

    x, y, groups = _fit_set(rows)
    p = {"objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [10], "learning_rate": 0.05,
         "min_data_in_leaf": 50, "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1,
         "lambdarank_truncation_level": 30, "num_threads": 2, "verbose": -1, "seed": 17,
         "deterministic": True} | {k: v for k, v in params.items() if k != "trees"}
    from app.domain.retrieval.features import FEATURES

    return lgb.train(p, lgb.Dataset(x, y, group=groups, feature_name=list(FEATURES)),
                     num_boost_round=params.get("trees", 200))


def fit_logistic(rows: list[QueryRows]) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    x, y, _ = _fit_set(rows)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    m = LogisticRegression(C=1.0, max_iter=2000).fit((x - mean) / scale, y)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "coef": m.coef_[0].tolist(),
            "intercept": float(m.intercept_[0])}


def rank_scores(rows: list[QueryRows], score) -> dict[str, dict[str, float]]:  # noqa: ANN001
    """r@5, r@10, mrr per dataset (categories apart excluded) of ordering each question's candidates
    by `score(x)` (None: the fused order as recorded)."""
    from bench.metrics import rank_metrics

    per: dict[str, list[dict[str, float]]] = {}
    for r in rows:
        if r.category in ("adversarial", "abstention"):
            continue
        if len(r.ids) == 0:
            order = []
        elif score is None:
            order = r.ids
        else:
            s = score(r.x)
            order = [r.ids[i] for i in sorted(range(len(r.ids)), key=lambda i: (-s[i], i))]
        gold = [e for e, g in zip(r.ids, r.y) if g] or ["<none>"]
        per.setdefault(r.dataset, []).append(rank_metrics(order[:10], gold, ks=(5, 10)))
    return {ds: {k: round(float(np.mean([m[k] for m in ms])), 4) for k in ("r@5", "r@10", "mrr")} | {"n": len(ms)}
            for ds, ms in per.items()}


def objective(m: dict[str, dict[str, float]]) -> float:
    return float(np.mean([m[ds]["r@10"] + m[ds]["mrr"] for ds in m]))


GRID = [{"trees": 200, "num_leaves": 7, "max_depth": 3}, {"trees": 150, "num_leaves": 15, "max_depth": 4},
        {"trees": 100, "num_leaves": 31, "max_depth": 6}]


def cross_validate(train: list[QueryRows], folds: int = 3) -> list[tuple[dict[str, Any], float]]:
    """Group k-fold by conversation on the train split, for each grid point: mean objective."""
    convs = sorted({(r.dataset, r.conversation) for r in train})
    fold_of = {c: i % folds for i, c in enumerate(convs)}
    out = []
    for params in GRID:
        vals = []
        for f in range(folds):
            fit = [r for r in train if fold_of[(r.dataset, r.conversation)] != f]
            held = [r for r in train if fold_of[(r.dataset, r.conversation)] == f]
            booster = fit_lgbm(fit, params)
            vals.append(objective(rank_scores(held, lambda x: booster.predict(x, num_threads=2))))
        out.append((params, float(np.mean(vals))))
        print(f"cv {params}: {out[-1][1]:.4f}", file=sys.stderr)
    return out


def model_doc(kind: str, model: Any, trained_on: dict[str, list[str]], validation: dict[str, Any],
              params: dict[str, Any]) -> dict[str, Any]:
    from app.domain.retrieval.features import FEATURES

    return {"format": "palimpsest-fusion/1", "kind": kind, "features": list(FEATURES),
            "trained_on": trained_on, "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "params": params, "validation": validation,
            "note": "Fitted by python -m training.fusion on the train split of bench/splits.json "
                    "(LoCoMo, BEAM 100K); chosen on the validation split.",
            "model": model.model_to_string() if kind == "lightgbm" else model}


def train_and_choose(tenant_id: int | None) -> dict[str, Any]:
    from app.adapters.fusion_ranker import MODEL_FILE
    from bench.splits import train_ids

    train = cached("train", tenant_id)
    n_fit = sum(1 for r in train if r.y.sum() > 0)
    print(f"train: {len(train)} questions, {n_fit} with gold among the candidates", file=sys.stderr)
    # FUSION_CV=1: choose the trees by group k-fold on train (slow on 2 shared cores; off by default)
    cv = cross_validate(train) if os.environ.get("FUSION_CV", "0") == "1" else [(GRID[0], 0.0)]
    params = max(cv, key=lambda pc: pc[1])[0]
    booster = fit_lgbm(train, params)
    logistic = fit_logistic(train)
    val = cached("validation", tenant_id)  # read only now: nothing above sees it
    mean, scale, coef = (np.array(logistic[k]) for k in ("mean", "scale", "coef"))

    def lin(x: np.ndarray) -> np.ndarray:
        return ((x - mean) / scale) @ coef

    results = {
        "fused (weighted RRF, no reweight)": rank_scores(val, None),
        "lightgbm": rank_scores(val, lambda x: booster.predict(x, num_threads=2)),
        "logistic": rank_scores(val, lin),
    }
    for k, v in results.items():
        print(f"validation {k}: {v}", file=sys.stderr)
    kind = "lightgbm" if objective(results["lightgbm"]) >= objective(results["logistic"]) else "logistic"
    trained_on = {ds: list(train_ids(ds)) for ds in DATASETS}
    doc = model_doc(kind, booster if kind == "lightgbm" else logistic, trained_on,
                    {"candidates_only": results, "cv": [[p, round(v, 4)] for p, v in cv]}, params)
    out = Path(os.environ.get("PALIMPSEST_FUSION_OUT") or MODEL_FILE)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out} ({kind})", file=sys.stderr)
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--evaluate", action="store_true", help="write the validation report (bench/results/)")
    p.add_argument("--datasets", default=None, help="with --evaluate: only these data sets (comma list)")
    p.add_argument("--prefetch", action="store_true", help="with --evaluate: only today's default and the baselines")
    p.add_argument("--recollect", action="store_true", help="drop the cached features (var/fusion/) first")
    p.add_argument("--collect-only", default=None, help="only collect the features of these data sets (comma list)")
    a = p.parse_args(argv)
    os.environ.setdefault("PALIMPSEST_TORCH_THREADS", "1")
    from bench.evaldb import attach

    tid = attach()
    if a.evaluate:
        from bench.fusion_eval import evaluate

        evaluate(tid, tuple(a.datasets.split(",")) if a.datasets else None, prefetch=a.prefetch)
        return 0
    if a.recollect:
        for f in CACHE.glob("*.pkl"):
            f.unlink()
    if a.collect_only:
        for split in ("train", "validation"):
            cached(split, tid, tuple(a.collect_only.split(",")))
        return 0
    train_and_choose(tid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
