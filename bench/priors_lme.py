"""The assistant case of the priors (issue 17, item 5) on LongMemEval_S: a few TRAIN questions whose
answer the assistant said (`single-session-assistant`), each haystack ingested into this helper's
OWN embedded database (`--var-dir`, built on first use as `bench/evaldb.py` builds its own), then
asked with today's priors and the fitted ones, as_of = the question's date, beside BM25 / dense / RRF.

    python -m bench.priors_eval lme --var-dir var/eval-p --n 5 asker_beta=.. addressee_beta=.. speaker_beta=..
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.golden import ROOT

CATEGORY = "single-session-assistant"
TENANT = "eval"


def questions(n: int) -> Any:
    from bench.datasets import subset
    from bench.longmemeval import load_longmemeval
    from bench.splits import select

    lme = select(load_longmemeval(ROOT.parent / "shared" / "data"), "train")
    keep = tuple(q.conversation_id for q in lme.questions if q.category == CATEGORY and q.gold)[:n]
    return subset(lme, only=keep)


def run_lme(var_dir: Path, n: int, today: dict[str, float], fitted: dict[str, float], ask: Callable,
            answer_of: Callable, log: Callable[[str], None], recipe_with: Callable, budget: int,
            top: int) -> dict[str, Any]:
    """`ask`, `answer_of` and `recipe_with` are `bench.priors_eval`'s (passed in: no import back)."""
    from bench.evaldb import attach
    from bench.golden import _env, ingest

    ds = questions(n)
    if not var_dir.exists():
        var_dir.mkdir(parents=True)
        _env(var_dir)
        ingest([ds], tenant=TENANT)
    tid = attach(var_dir)

    from bench.baselines import baseline_answers, run_baselines
    from bench.evaluate import summarize

    systems: dict[str, Any] = {}
    per_question: dict[str, dict[str, Any]] = {q.qid: {"question": q.question} for q in ds.questions}
    for name, sizes in (("service, today's priors", today), ("service, fitted priors", fitted)):
        rec, answers = recipe_with(**sizes), {}
        for q in ds.questions:
            answers[q.qid] = answer_of(ask(tid, f"{ds.name}/{q.conversation_id}", q.question, rec, q.as_of))
            ranked = answers[q.qid].ranked
            per_question[q.qid][name] = next((i for i, e in enumerate(ranked, 1) if e in q.gold), None)
        systems[name] = summarize(ds, answers, [budget])
    for b, ranks in run_baselines(ds, log=log).items():
        systems[b] = summarize(ds, baseline_answers(ds, ranks, [budget], top), [budget])
        for q in ds.questions:
            per_question[q.qid][b] = next((i for i, e in enumerate(ranks[q.qid], 1) if e in q.gold), None)
    return {"split": "train", "category": CATEGORY, "questions": len(ds.questions), "today": today,
            "fitted": fitted, "first_gold_rank": per_question,
            "systems": {k: v["table"]["overall"] for k, v in systems.items()}}
