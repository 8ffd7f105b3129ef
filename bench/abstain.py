"""The abstention study's rows: every question of `bench.abstain_data.questions` asked in-process of
the development database (`bench.evaldb`), with the service's default recipe (learned ranker on, no
reranker, no LLM), recording the abstention features the query computes
(`app.domain.retrieval.abstain.AbstainFeatures`), today's dense-floor decision, the intent and the
label. Written as JSON lines to `var/abstain-rows.jsonl` (what `python -m training.abstain` fits on).

    python -m bench.abstain [--var-dir var/eval] [--out var/abstain-rows.jsonl] [--append]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.golden import ROOT

ROWS = ROOT / "var" / "abstain-rows.jsonl"
TOP_K = 50
BUDGET = 2000


def recording_model():  # noqa: ANN201
    """A model that reads every feature and decides nothing (coefficients 0, threshold above 1): the
    query then puts every feature in `relevance`."""
    from app.domain.retrieval.abstain import AbstainFeatures, AbstainModel

    names = tuple(AbstainFeatures.__dataclass_fields__)
    zeros = (0.0,) * len(names)
    return AbstainModel(names, zeros, (1.0,) * len(names), zeros, 0.0, 2.0)


def collect(var_dir: Path, out: Path, append: bool = False) -> int:
    from sqlalchemy import text

    import app.services.query as query_service
    from app.adapters.embedder import get_embedder
    from app.domain.recipe import Recipe
    from app.services.query import QueryInput, run_query
    from app.settings import get_settings
    from app.storage.candidates import Scope
    from app.storage.db import connect, get_engine
    from bench.abstain_data import questions
    from bench.evaldb import attach

    tid = attach(var_dir)
    with connect() as conn:
        # conversations whose every layer is built (graph is built last): one still being added is left
        present = {r[0] for r in conn.execute(
            text("SELECT DISTINCT conversation_id FROM layer_runs WHERE tenant_id = :t AND layer = 'graph'"),
            {"t": tid})}
    qs = questions(present)
    if append and out.is_file():  # ask only what the file does not hold yet (haystacks added since)
        done = {json.loads(line)["qid"] for line in out.read_text().splitlines() if line.strip()}
        qs = [q for q in qs if q.qid not in done]
    print(f"{len(qs)} questions over {len(present)} conversations", file=sys.stderr)
    rec = recording_model()
    query_service.installed_abstain_model = lambda: rec  # every feature into `relevance`
    recipe = Recipe.from_settings(get_settings()).with_overrides({"learned": True, "abstain_learned": True})
    embedder, engine = get_embedder(), get_engine()
    t0 = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a" if append else "w") as fh:
        for i, q in enumerate(qs, start=1):
            scope = Scope(tenant_id=tid, conversation_id=q.conversation)
            with engine.connect() as conn:
                res = run_query(conn, QueryInput(q.question, scope, TOP_K, BUDGET, as_of=q.as_of), recipe, embedder,
                                reranker=None, llm=None)
            rel = dict(res.relevance)
            dense = rel.get("dense")
            fh.write(json.dumps({
                "qid": q.qid, "dataset": q.dataset, "conversation": q.conversation, "kind": q.kind,
                "label": q.label, "question": q.question, "intent": (res.intent or {}).get("label"),
                "found": bool(res.items), "features": {k: v for k, v in rel.items() if not k.startswith("abstain_")},
                "dense_floor_abstain": (not res.items) or (dense is not None and dense < recipe.abstain_dense_floor),
            }) + "\n")
            if i % 200 == 0:
                print(f"{i}/{len(qs)} questions, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return len(qs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "eval")
    p.add_argument("--out", type=Path, default=ROWS)
    p.add_argument("--append", action="store_true", help="keep the file's rows; ask only the questions it lacks")
    a = p.parse_args(argv)
    os.environ.setdefault("PALIMPSEST_LOG_LEVEL", "WARNING")
    collect(a.var_dir.resolve(), a.out, a.append)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
