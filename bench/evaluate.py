"""Per-question scoring and per-system summaries (pure: no I/O, no service).

A system's answer to one question is a `SystemAnswer`: the ranked event ids it returned, and per
token budget the event ids in its context and the context's token count. Services and baselines
are scored by the same functions.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.datasets import Dataset, Question
from bench.metrics import (
    abstain_rate,
    calibrate_floor,
    aggregate,
    ctx_key,
    er_key,
    evidence_recall,
    mean,
    percentile,
    rank_metrics,
    session_metrics,
)

RANK_KEYS = ("r@5", "r@10", "all@10", "mrr")
SESSION_KEYS = ("sR@5", "sR@10", "sall@10", "dsR@5", "dsR@10")  # session level, where the data has session gold (LongMemEval)


@dataclass
class SystemAnswer:
    ranked: list[str]
    in_context: dict[int, list[str]]  # budget -> event ids in the context
    ctx_tokens: dict[int, int]  # budget -> tokens of the context (fixed tokenizer)
    abstain: bool = False
    relevance: dict[str, float] = field(default_factory=dict)  # the service's best dense / rerank relevance
    latency_ms: dict[int, float] = field(default_factory=dict)  # budget -> client-side latency
    error: str | None = None


def metric_keys(budgets: Sequence[int], sessions: bool = False) -> list[str]:
    return [*RANK_KEYS, *(SESSION_KEYS if sessions else ()), *(er_key(b) for b in budgets),
            *(ctx_key(b) for b in budgets)]


def score_question(q: Question, ans: SystemAnswer, budgets: Sequence[int], top_k: int = 10,
                   session_of: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One record: category, the rank metrics over the first `top_k` returned ids, er and ctx per budget;
    with `session_of` (event id -> session id) and session gold, the session-level metrics too."""
    rec: dict[str, Any] = {"qid": q.qid, "category": q.category}
    rec.update(rank_metrics(ans.ranked[:top_k], q.gold, ks=(5, 10), all_k=10))
    if session_of is not None and q.gold_sessions:
        rec.update(session_metrics(ans.ranked[:top_k], q.gold_sessions, session_of, ks=(5, 10), all_k=10,
                                   full=ans.ranked))
    for b in budgets:
        rec[er_key(b)] = evidence_recall(ans.in_context.get(b, []), q.gold)
        rec[ctx_key(b)] = float(ans.ctx_tokens.get(b, 0))
    return rec


def summarize(ds: Dataset, answers: Mapping[str, SystemAnswer], budgets: Sequence[int],
              top_k: int = 10) -> dict[str, Any]:
    """Everything the tables need for one system: per-category and overall means over the questions
    with gold evidence, the abstention rate on questions without it (and the false-abstention rate on
    those with it), latency percentiles when measured, and the per-question records."""
    scored = [q for q in ds.questions if q.gold and q.qid in answers]
    sessions = any(q.gold_sessions for q in scored)
    session_of = {t.event_id: str(t.metadata["session_id"]) for c in ds.conversations for t in c.turns
                  if "session_id" in t.metadata} if sessions else None
    records = [score_question(q, answers[q.qid], budgets, top_k, session_of) for q in scored]
    keys = metric_keys(budgets, sessions)
    table = aggregate(records, keys, apart=[c for c in ds.apart if c in {r["category"] for r in records}])

    abst_q = [q for q in ds.questions if q.abstention and q.qid in answers]
    abst = {
        "n": len(abst_q),
        "abstain_rate": abstain_rate([{"abstain": answers[q.qid].abstain, "items": answers[q.qid].ranked}
                                      for q in abst_q]) if abst_q else math.nan,
        "false_abstain_rate": abstain_rate([{"abstain": answers[q.qid].abstain, "items": answers[q.qid].ranked}
                                            for q in scored]) if scored else math.nan,
    }
    for b in budgets:
        abst[ctx_key(b)] = mean(answers[q.qid].ctx_tokens.get(b, 0) for q in abst_q) if abst_q else math.nan
    if abst_q and any(answers[q.qid].relevance for q in abst_q):
        # where an abstain floor would fall: per relevance signal, calibrated on these very questions
        abst["floors"] = {
            sig: calibrate_floor([answers[q.qid].relevance[sig] for q in abst_q if sig in answers[q.qid].relevance],
                                 [answers[q.qid].relevance[sig] for q in scored if sig in answers[q.qid].relevance])
            for sig in sorted({k for q in abst_q for k in answers[q.qid].relevance})
        }

    lat = [v for a in answers.values() for v in a.latency_ms.values()]
    latency = {"n": len(lat), "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95),
               "mean_ms": mean(lat)} if lat else {}
    errors = sum(1 for a in answers.values() if a.error)
    return {"table": table, "abstention": abst, "latency": latency, "errors": errors, "records": records}


def unscored(ds: Dataset) -> list[str]:
    """Questions that are neither scorable (no gold) nor abstention questions."""
    return [q.qid for q in ds.questions if not q.gold and not q.abstention]
