"""The learned fusion: features of every candidate the query gathers, labelled by gold evidence,
fitted on the TRAIN split, chosen on VALIDATION, shipped as `app/adapters/fusion_model/fusion.json`.

    python -m training.fusion                 # collect train + validation features, fit, choose, write the model
    python -m training.fusion --evaluate      # the validation report (bench/fusion_eval.py)

It attaches to the shared development database (`bench.evaldb.attach()`, read only) and runs the
query service itself (`app.services.query.run_query`, default recipe with `learned` on) with a
recording model, so the features are exactly those the service computes at query time. Questions
with no gold among the candidates carry no signal for ranking and are left out of fitting.
Three models are fitted on train: LightGBM lambdarank at the two sizes of `GRID` and a logistic
regression; the one with the best validation `objective` (r@10 + mrr + er, averaged over the data
sets, each model scored as the product ranks: with `prior_boost` on top when the default recipe adds
it) is written.
The candidates' rows are recorded under `collection_recipe`: nothing may re-order them after the model.

Rows are never collected for a conversation the configured embedder was trained on (`embedder_saw`):
its dense scores there are better than on any user's conversation, and a ranker fitted on them trusts
the dense signal too much (stacking leakage). Cross-fitting collects them anyway, honestly: an embedder
trained without fold k (`palimpsest train-embedder --leave-out-fold k`) stores its vectors beside the
others (`--embed-unseen`) and collects fold k's rows into a cache folder of its own;
$PALIMPSEST_FUSION_CACHE then lists every folder (docs/models.md, "Stop 32").
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
# collected with a stage off, e.g. PALIMPSEST_FINDABLE_ENABLED=false, without touching the shipped one).
# The cache may be several folders (os.pathsep-separated): a split's rows are those of every folder that
# holds them (cross-fitted rows, each fold collected with its own embedder); new rows go to the first.
CACHES = [Path(p) for p in (os.environ.get("PALIMPSEST_FUSION_CACHE") or str(ROOT / "var" / "fusion")).split(os.pathsep)
          if p]
CACHE = CACHES[0]
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


def collection_recipe() -> Any:
    """The recipe the feature rows are recorded under: the configured one with the learned stage on
    (`Recorder` in place of the model). current_first re-orders (and may add to) the list after the
    model, and the priors on top would re-order it by themselves while the model scores 0: the rows
    are the model's input, so the ids must stay the candidates in the order the rows were recorded."""
    from app.domain.recipe import Recipe
    from app.settings import get_settings

    return Recipe.from_settings(get_settings()).with_overrides(
        {"learned": True, "learned_priors": False, "current_first": False})


def collect(split: str, dataset: str, tenant_id: int) -> list[QueryRows]:
    """Every question of the split with gold evidence: its candidates' features and labels."""
    from app.adapters.embedder import get_embedder
    from app.services.query import QueryInput, run_query
    from app.storage.candidates import Scope
    from app.storage.db import get_engine

    recipe = collection_recipe()
    embedder = get_embedder()
    engine = get_engine()
    out: list[QueryRows] = []
    t0 = time.perf_counter()
    from bench.evaldb import built_conversations
    from bench.splits import load_split

    ds = load_split(split, names=(dataset,))[dataset]
    ready: set[str] = set()
    present = built_conversations(engine, tenant_id, dataset) if dataset == "longmemeval" else None
    seen = embedder_saw(dataset)
    skipped = sorted({q.conversation_id for q in ds.questions if q.conversation_id in seen})
    if skipped:
        print(f"{split} {dataset}: {len(skipped)} conversations left out, the embedder was trained on them "
              "(collect their rows with an embedder that was not: train-embedder --leave-out-fold)", file=sys.stderr)
    for q in ds.questions:
        if not q.gold or (present is not None and q.conversation_id not in present) or q.conversation_id in seen:
            continue
        if q.conversation_id not in ready:
            wait_built(engine, tenant_id, f"{dataset}/{q.conversation_id}")
            ready.add(q.conversation_id)
        rec = Recorder()
        scope = Scope(tenant_id=tenant_id, conversation_id=f"{dataset}/{q.conversation_id}")
        with engine.connect() as conn:
            res = run_query(conn, QueryInput(q.question, scope, POOL_TOP_K, 2000, as_of=q.as_of), recipe, embedder,
                            reranker=None, llm=None, fusion_model=rec)
        ids = [str(it.event.event_id) for it in res.items]
        x = rec.rows if rec.rows is not None else np.zeros((0, 0))
        assert len(ids) == len(x), f"{q.qid}: {len(ids)} candidates, {len(x)} feature rows"
        assert all(it.stages.get("learned", {}).get("rank_before") == i for i, it in enumerate(res.items, 1)), \
            f"{q.qid}: the candidates came back re-ordered; their ids would not match the rows"
        gold = set(q.gold)
        out.append(QueryRows(dataset, q.qid, q.conversation_id, q.category, ids, x,
                             np.array([1.0 if e in gold else 0.0 for e in ids])))
        if len(out) % 50 == 0:
            print(f"{split} {dataset}: {len(out)} questions, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return out


def embedder_saw(dataset: str) -> set[str]:
    """The conversations of `dataset` the configured embedder was trained on (its training manifest).
    Their dense scores are better than any unseen conversation's, so a ranker fitted on their rows
    would trust the dense signal more than it deserves on a user's data: they are not collected."""
    from app.settings import get_settings
    from bench.provenance import training_manifest

    doc = training_manifest(get_settings().embedding_model_path) or {}
    return set((doc.get("datasets") or {}).get(dataset) or [])


def embed_unseen(tenant_id: int, datasets: tuple[str, ...]) -> dict[str, int]:
    """Store the configured embedder's vectors for every train conversation of `datasets` in the
    database that it was not trained on (a cross-fitting embedder's fold), beside the vectors already
    there; the events embedded per data set. The other layers keep what the build made of them."""
    from app.services.layers import EMBED, rebuild
    from app.storage.db import connect
    from app.storage.events import conversations_named
    from bench.splits import train_ids

    done: dict[str, int] = {}
    with connect() as conn:
        held = [c for _, c in conversations_named(conn, None, tenant_id)]
    for dataset in datasets:
        seen, train = embedder_saw(dataset), set(train_ids(dataset))
        todo = [c for c in held if c.startswith(dataset + "/") and c.split("/", 1)[1] in train - seen]
        done[dataset] = sum(rebuild(EMBED, tenant_id, c)["embedded"] for c in todo)
        print(f"{dataset}: {len(todo)} conversations, {done[dataset]} events embedded", file=sys.stderr)
    return done


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


def cached(split: str, tenant_id: int | None, datasets: tuple[str, ...] | None = None) -> list[QueryRows]:
    """The split's feature rows (`DATASETS` unless named), collected once per data set into var/fusion/
    (delete to collect again); with several cache folders, the rows of each that holds them (a
    question in two is an error: two folds' rows of one conversation)."""
    rows: list[QueryRows] = []
    for dataset in datasets or DATASETS:
        paths = [c / f"{split}-{dataset}.pkl" for c in CACHES if (c / f"{split}-{dataset}.pkl").exists()]
        if paths:
            got = [QueryRows(**d) for p in paths for d in pickle.loads(p.read_bytes())]
            dup = len(got) - len({r.qid for r in got})
            if dup:
                raise ValueError(f"{split} {dataset}: {dup} questions in more than one of {', '.join(map(str, paths))}")
            rows += got
            continue
        assert tenant_id is not None
        got = collect(split, dataset, tenant_id)
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / f"{split}-{dataset}.pkl").write_bytes(pickle.dumps([vars(r) for r in got]))
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


def packed(order: list[int], words: np.ndarray, budget: int = 2000) -> list[int]:
    """The first items of `order` a `budget`-token context holds, estimated from each turn's word
    count (`len_words`: ~1.3 word pieces a word plus ~8 for its date stamp and speaker); a stand-in
    for the assembled context when all the rows know is the candidates' features."""
    from bench.metrics import pack_by_budget

    return pack_by_budget(order, {i: 1.3 * float(words[i]) + 8.0 for i in order}, budget)[0]


def rank_scores(rows: list[QueryRows], score) -> dict[str, dict[str, float]]:  # noqa: ANN001
    """r@5, r@10, mrr and er (the share of the gold a 2,000-token context would hold, `packed`) per
    dataset (categories apart excluded) of ordering each question's candidates by `score(x)` (None:
    the fused order as recorded)."""
    from app.domain.retrieval.features import FEATURES
    from bench.metrics import evidence_recall, rank_metrics

    words_col = FEATURES.index("len_words")
    per: dict[str, list[dict[str, float]]] = {}
    for r in rows:
        if r.category in ("adversarial", "abstention"):
            continue
        if len(r.ids) == 0:
            idx: list[int] = []
        elif score is None:
            idx = list(range(len(r.ids)))
        else:
            s = score(r.x)
            idx = sorted(range(len(r.ids)), key=lambda i: (-s[i], i))
        order = [r.ids[i] for i in idx]
        gold = [e for e, g in zip(r.ids, r.y) if g] or ["<none>"]
        m = rank_metrics(order[:10], gold, ks=(5, 10))
        m["er"] = evidence_recall([r.ids[i] for i in packed(idx, r.x[:, words_col])], gold) if len(r.ids) else 0.0
        per.setdefault(r.dataset, []).append(m)
    return {ds: {k: round(float(np.mean([m[k] for m in ms])), 4) for k in ("r@5", "r@10", "mrr", "er")}
            | {"n": len(ms)} for ds, ms in per.items()}


def objective(m: dict[str, dict[str, float]]) -> float:
    """What the targets ask for, per data set alike: r@10, mrr and the evidence a 2,000-token context holds."""
    return float(np.mean([m[ds]["r@10"] + m[ds]["mrr"] + m[ds]["er"] for ds in m]))


# Deeper trees are not on the grid: each response explains its items (LightGBM's pred_contrib, whose
# cost grows with leaves x depth^2), and 100 trees of depth 6 took the stage from ~10 to ~30 ms per
# query (BEAM, warm) for +0.0003 on the validation objective (stop 27).
GRID = [{"trees": 200, "num_leaves": 7, "max_depth": 3}, {"trees": 150, "num_leaves": 15, "max_depth": 4}]


def model_doc(kind: str, model: Any, trained_on: dict[str, list[str]], validation: dict[str, Any],
              params: dict[str, Any]) -> dict[str, Any]:
    from app.domain.retrieval.features import FEATURES

    return {"format": "palimpsest-fusion/1", "kind": kind, "features": list(FEATURES),
            "trained_on": trained_on, "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "params": params, "validation": validation,
            "note": "Fitted by python -m training.fusion on the train split of bench/splits.json "
                    "(the data sets in trained_on); chosen on the validation split, scored as the product "
                    "ranks (with the reweight's factors on top when the default recipe adds them).",
            "model": model.model_to_string() if kind == "lightgbm" else model}


def train_and_choose(tenant_id: int | None) -> dict[str, Any]:
    from app.adapters.fusion_ranker import MODEL_FILE
    from bench.splits import train_ids

    train = cached("train", tenant_id)
    n_fit = sum(1 for r in train if r.y.sum() > 0)
    print(f"train: {len(train)} questions, {n_fit} with gold among the candidates", file=sys.stderr)
    from app.domain.recipe import DEFAULT
    from app.domain.retrieval.features import prior_boost
    from app.domain.retrieval.ranking import reweight_config

    # chosen as it ranks in the product: with the reweight's factors on top, at the default recipe's strengths,
    # where the default recipe adds them
    strengths = reweight_config(DEFAULT)
    on_top = (lambda x: prior_boost(x, strengths)) if DEFAULT.learned_priors else (lambda x: 0.0)
    fitted: dict[str, tuple[str, Any, dict[str, Any], Any]] = {}  # label -> (kind, model, params, scorer)
    for params in GRID:
        booster = fit_lgbm(train, params)
        fitted[f"lightgbm {params['trees']} trees, {params['num_leaves']} leaves, depth {params['max_depth']}"] = (
            "lightgbm", booster, params, lambda x, b=booster: b.predict(x, num_threads=2) + on_top(x))
    logistic = fit_logistic(train)
    mean, scale, coef = (np.array(logistic[k]) for k in ("mean", "scale", "coef"))
    fitted["logistic"] = ("logistic", logistic, {}, lambda x: ((x - mean) / scale) @ coef + on_top(x))
    val = cached("validation", tenant_id)  # read only now: nothing above sees it
    results = {"fused (weighted RRF, no reweight)": rank_scores(val, None)}
    results |= {label: rank_scores(val, f[3]) for label, f in fitted.items()}
    for k, v in results.items():
        print(f"validation {k}: {v} (objective {objective(v):.4f})", file=sys.stderr)
    chosen = max(fitted, key=lambda label: objective(results[label]))
    kind, model, params, _ = fitted[chosen]
    # the conversations whose questions were fitted on (a data set only validated on is not listed)
    trained_on = {ds: [c for c in train_ids(ds) if any(r.dataset == ds and r.conversation == c for r in train)]
                  for ds in DATASETS}
    trained_on = {ds: ids for ds, ids in trained_on.items() if ids}
    doc = model_doc(kind, model, trained_on, {"candidates_only": results, "chosen": chosen}, params)
    out = Path(os.environ.get("PALIMPSEST_FUSION_OUT") or MODEL_FILE)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out} ({chosen})", file=sys.stderr)
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--evaluate", action="store_true", help="write the validation report (bench/results/)")
    p.add_argument("--datasets", default=None, help="with --evaluate: only these data sets (comma list)")
    p.add_argument("--prefetch", action="store_true", help="with --evaluate: only today's default and the baselines")
    p.add_argument("--recollect", action="store_true", help="drop the cached features (var/fusion/) first")
    p.add_argument("--collect-only", default=None, help="only collect the features of these data sets (comma list)")
    p.add_argument("--splits", default="train,validation", help="with --collect-only: these splits (comma list)")
    p.add_argument("--embed-unseen", default=None,
                   help="first store the configured embedder's vectors for the train conversations of these data "
                        "sets (comma list) it was not trained on (cross-fitting; docs/models.md)")
    a = p.parse_args(argv)
    os.environ.setdefault("PALIMPSEST_TORCH_THREADS", "1")
    from bench.evaldb import attach

    tid = attach()
    if a.evaluate:
        from bench.fusion_eval import evaluate

        evaluate(tid, tuple(a.datasets.split(",")) if a.datasets else None, prefetch=a.prefetch)
        return 0
    if a.embed_unseen:
        embed_unseen(tid, tuple(a.embed_unseen.split(",")))
        if not a.collect_only:
            return 0
    if a.recollect:
        for f in CACHE.glob("*.pkl"):
            f.unlink()
    if a.collect_only:
        for split in a.splits.split(","):
            cached(split, tid, tuple(a.collect_only.split(",")))
        return 0
    train_and_choose(tid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
