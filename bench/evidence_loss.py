"""Where the validation split's gold evidence is lost (issue #17), per data set and category:

    PALIMPSEST_EVAL_DIR=/tmp/eval-val python -m bench.evidence_loss [--datasets locomo,beam] [--pool 1000]

Each validation question with gold evidence is asked of the service as `training.fusion --evaluate`
asks it (default recipe, learned on, no reranker, no LLM, top 50, budget 2,000), once more with
every candidate returned (the full ranked pool), and once with `--pool` candidates per signal (what a
deeper pool would have found). Every gold turn that is not in the context then gets one reason:

- `not a candidate`: no signal found it at today's pool depth; `deeper: <signals>` when a signal
  finds it with `--pool` candidates (its rank there), `none` when no signal finds it at all;
- `rank 51+`: a candidate the ranker put below the top 50 (direct evidence is the top 50);
- `in top 50, over budget`: ranked within the top 50, but the direct evidence ranked above it (and
  what else the context took) spent the 2,000 tokens.

It also counts, per question, the first gold turn's place for r@10 misses (not a candidate / rank
11-50 / rank 51+). Prints markdown tables; writes nothing else. Reads the development database only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

TOP_K, BUDGET = 50, 2000


class Unexplained:
    """The shipped model without per-item explanations (the full pool's SHAP values cost more than
    the query): same scores, same order."""

    def __init__(self) -> None:
        from app.adapters.fusion_ranker import get_fusion_ranker

        self.model = get_fusion_ranker()

    def score(self, rows: Any) -> Any:
        return self.model.score(rows)

    def contributions(self, rows: Any) -> Any:
        import numpy as np

        return np.zeros((len(rows), rows.shape[1] + 1))


def ask(conn: Any, q: Any, scope: Any, recipe: Any, embedder: Any, top_k: int) -> Any:
    from app.services.query import QueryInput, run_query

    return run_query(conn, QueryInput(q.question, scope, top_k, BUDGET), recipe, embedder, reranker=None, llm=None,
                     fusion_model=Unexplained() if top_k > TOP_K else None)


def diagnose(name: str, ds: Any, tenant_id: int, pool: int, overrides: dict[str, Any]) -> list[dict[str, Any]]:
    from app.adapters.embedder import get_embedder
    from app.domain.recipe import Recipe
    from app.settings import get_settings
    from app.storage.candidates import Scope
    from app.storage.db import get_engine

    base = Recipe.from_settings(get_settings()).with_overrides({"learned": True} | overrides)
    deep = base.with_overrides({"candidate_pool": pool})
    embedder, engine = get_embedder(), get_engine()
    out = []
    for n, q in enumerate(ds.questions):
        if not q.gold:
            continue
        scope = Scope(tenant_id=tenant_id, conversation_id=f"{name}/{q.conversation_id}")
        with engine.connect() as conn:
            served = ask(conn, q, scope, base, embedder, TOP_K)
            full = ask(conn, q, scope, base, embedder, 1000)
            rank = {str(it.event.event_id): i for i, it in enumerate(full.items, 1)}
            deep_sig = {}
            if any(g not in rank for g in q.gold):  # only then: what a deeper pool finds
                deeper = ask(conn, q, scope, deep, embedder, 1000)
                deep_sig = {str(it.event.event_id): it.signals for it in deeper.items}
        ctx = {str(e.event_id) for e, _ in served.context_items}
        tokens = {str(e.event_id): embedder.count_tokens(e.content or "") for e, _ in served.context_items}
        reasons = Counter(why.split(" #")[0] for _, why in served.context_items)
        golds = []
        for g in q.gold:
            r = rank.get(g)
            if g in ctx:
                where = "in context"
            elif r is None:
                sig = deep_sig.get(g) or {}
                where = "not a candidate, " + ("deeper: " + ",".join(
                    f"{s}@{int(v['rank'])}" for s, v in sorted(sig.items()) if "rank" in v) if sig else "none")
            elif r > TOP_K:
                where = "rank 51+"
            else:
                where = "in top 50, over budget"
            golds.append({"id": g, "rank": r, "where": where})
        first = min((x["rank"] for x in golds if x["rank"] is not None), default=None)
        out.append({"dataset": name, "qid": q.qid, "category": q.category, "first_rank": first,
                    "golds": golds, "candidates": len(full.items), "ctx_tokens": served.context_tokens,
                    "ctx_reasons": dict(reasons), "ctx_token_sum": sum(tokens.values())})
        if len(out) % 50 == 0:
            print(f"{name}: {len(out)} questions", file=sys.stderr)
    return out


def bucket(where: str) -> str:
    if where.startswith("not a candidate, deeper"):
        return "not a candidate (deeper pool finds)"
    if where.startswith("not a candidate"):
        return "not a candidate (no signal)"
    return where


COLS = ("in context", "in top 50, over budget", "rank 51+", "not a candidate (deeper pool finds)",
        "not a candidate (no signal)")


def tables(recs: list[dict[str, Any]]) -> str:
    lines = []
    for name in sorted({r["dataset"] for r in recs}):
        rs = [r for r in recs if r["dataset"] == name]
        lines += [f"## {name}: gold turns by where they end up (top {TOP_K}, budget {BUDGET})", "",
                  "| category | gold turns | " + " | ".join(COLS) + " |", "| --- | ---: |" + " ---: |" * len(COLS)]
        cats = sorted({r["category"] for r in rs}) + ["all"]
        for c in cats:
            gs = [g for r in rs if c in ("all", r["category"]) for g in r["golds"]]
            cnt = Counter(bucket(g["where"]) for g in gs)
            lines.append(f"| {c} | {len(gs)} | " + " | ".join(str(cnt[k]) for k in COLS) + " |")
        lines += ["", f"{name}: r@10 misses by the first gold turn's rank", "",
                  "| category | questions | r@10 misses | rank 11-50 | rank 51+ | no gold a candidate |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for c in cats:
            qs = [r for r in rs if c in ("all", r["category"])]
            miss = [r for r in qs if r["first_rank"] is None or r["first_rank"] > 10]
            lines.append(f"| {c} | {len(qs)} | {len(miss)} | "
                         f"{sum(1 for r in miss if r['first_rank'] and r['first_rank'] <= 50)} | "
                         f"{sum(1 for r in miss if r['first_rank'] and r['first_rank'] > 50)} | "
                         f"{sum(1 for r in miss if r['first_rank'] is None)} |")
        deeper = Counter(s.split("@")[0] for r in rs for g in r["golds"] if "deeper:" in g["where"]
                         for s in g["where"].split("deeper: ")[1].split(","))
        lines += ["", f"{name}: signals that find a missed gold turn at the deeper pool: {dict(deeper)}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="locomo,beam")
    p.add_argument("--pool", type=int, default=1000, help="candidates per signal of the deeper run")
    p.add_argument("--overrides", default="{}", help="recipe overrides (JSON) for all three runs")
    p.add_argument("--dump", type=Path, default=None, help="write the per-question records here (JSON)")
    a = p.parse_args(argv)
    os.environ.setdefault("PALIMPSEST_TORCH_THREADS", "1")
    os.environ.setdefault("PALIMPSEST_LOG_LEVEL", "WARNING")
    from bench.evaldb import attach
    from bench.splits import load_split

    tid = attach()
    sets = load_split("validation")
    recs: list[dict[str, Any]] = []
    for name in a.datasets.split(","):
        recs += diagnose(name, sets[name], tid, a.pool, json.loads(a.overrides))
    if a.dump:
        a.dump.write_text(json.dumps(recs, indent=1))
    print(tables(recs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
