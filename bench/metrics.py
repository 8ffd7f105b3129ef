"""Retrieval metrics: pure functions over ranked event ids, gold ids and context membership.

Per question: `rank_metrics` (r@k, all@k, mrr) and `evidence_recall` (er@budget). Then
`aggregate` averages per-question records per category and over groups of categories.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any


def budget_label(budget: int) -> str:
    """512 -> "512", 1000 -> "1k", 2000 -> "2k", 1500 -> "1500"."""
    return f"{budget // 1000}k" if budget >= 1000 and budget % 1000 == 0 else str(budget)


def er_key(budget: int) -> str:
    return f"er@{budget_label(budget)}"


def ctx_key(budget: int) -> str:
    return f"ctx@{budget_label(budget)}"


def first_gold_rank(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """1-based rank of the first gold id in `ranked`, or None."""
    g = set(gold)
    for i, eid in enumerate(ranked, 1):
        if eid in g:
            return i
    return None


def recall_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when at least one gold id is among the first k, else 0.0 (0.0 when there is no gold)."""
    g = set(gold)
    return 1.0 if g and any(eid in g for eid in ranked[:k]) else 0.0


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold id is among the first k, else 0.0 (0.0 when there is no gold)."""
    g = set(gold)
    return 1.0 if g and g.issubset(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    r = first_gold_rank(ranked, gold)
    return 1.0 / r if r else 0.0


def rank_metrics(ranked: Sequence[str], gold: Iterable[str], ks: Sequence[int] = (5, 10),
                 all_k: int = 10) -> dict[str, float]:
    """r@k for each k, all@all_k and mrr for one question. `ranked` is what the system returned."""
    gold = list(gold)
    ranked = list(ranked)
    out = {f"r@{k}": recall_any(ranked, gold, k) for k in ks}
    out[f"all@{all_k}"] = recall_all(ranked, gold, all_k)
    out["mrr"] = reciprocal_rank(ranked, gold)
    return out


def session_recall(ranked: Sequence[str], gold_sessions: Iterable[str], session_of: Mapping[str, str], k: int,
                   every: bool = False) -> float:
    """Session-level recall at k over a ranking of TURNS (the service and the baselines rank turns):
    the sessions retrieved at k are the sessions of the first k ranked turns, so a session counts as
    retrieved at k when any one of its turns is among the first k items (k counts turns, not sessions;
    fewer than k distinct sessions may be retrieved). 1.0 when at least one gold session is retrieved
    (`every`: when all of them are), else 0.0; 0.0 when there is no gold session. Turns missing from
    `session_of` belong to no session."""
    g = set(gold_sessions)
    if not g:
        return 0.0
    got = {session_of[e] for e in ranked[:k] if e in session_of}
    return 1.0 if (g.issubset(got) if every else bool(g & got)) else 0.0


def ranked_sessions(ranked: Sequence[str], session_of: Mapping[str, str]) -> list[str]:
    """The sessions of a turn ranking, each once, in the order of its first (best) turn: the ranking of
    sessions by their best turn. Turns missing from `session_of` are skipped."""
    return list(dict.fromkeys(session_of[e] for e in ranked if e in session_of))


def session_metrics(ranked: Sequence[str], gold_sessions: Iterable[str], session_of: Mapping[str, str],
                    ks: Sequence[int] = (5, 10), all_k: int = 10,
                    full: Sequence[str] | None = None) -> dict[str, float]:
    """sR@k for each k (any gold session retrieved) and sall@all_k (every one), per `session_recall`;
    with `full` (the whole turn ranking, not cut at k turns), dsR@k too: a gold session among the first
    k DISTINCT sessions of it (`ranked_sessions`), the unit of systems that rank sessions."""
    gold = list(gold_sessions)
    out = {f"sR@{k}": session_recall(ranked, gold, session_of, k) for k in ks}
    out[f"sall@{all_k}"] = session_recall(ranked, gold, session_of, all_k, every=True)
    if full is not None:
        order = ranked_sessions(full, session_of)
        out.update({f"dsR@{k}": float(bool(set(gold) & set(order[:k]))) for k in ks})
    return out


def evidence_recall(in_context: Iterable[str], gold: Iterable[str]) -> float:
    """Fraction of the (distinct) gold ids present in the context; 0.0 when there is no gold."""
    g = set(gold)
    if not g:
        return 0.0
    return len(g & set(in_context)) / len(g)


def pack_by_budget(ranked: Sequence[Hashable], tokens: Mapping[Hashable, float], budget: int,
                   separator_tokens: int = 0) -> tuple[list[Any], float]:
    """A plain baseline's context: take ids in rank order while the running token total stays within
    `budget`; stop at the first one that does not fit. Returns (ids included, tokens used).

    `separator_tokens` is what joining two rendered turns costs (0 for a newline with a word-piece
    tokenizer, which treats it as whitespace)."""
    chosen: list[str] = []
    used = 0
    for eid in ranked:
        cost = tokens[eid] + (separator_tokens if chosen else 0)
        if used + cost > budget:
            break
        chosen.append(eid)
        used += cost
    return chosen, used


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (p in 0..100), like numpy's default; nan for no values."""
    xs = sorted(values)
    if not xs:
        return math.nan
    if len(xs) == 1:
        return float(xs[0])
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


def mean(values: Iterable[float]) -> float:
    xs = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(xs) / len(xs) if xs else math.nan


def aggregate(records: Sequence[Mapping[str, Any]], metric_keys: Sequence[str],
              apart: Sequence[str] = (), category_key: str = "category") -> dict[str, dict[str, float]]:
    """Mean of each metric per category, then `overall` (every category not in `apart`) and, when
    some categories are set apart, `all` (every record). Each row also has `n`.

    Records are one per scored question: dicts with the category and the metric values."""
    cats: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        cats.setdefault(str(r[category_key]), []).append(r)

    def row(rs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        out: dict[str, float] = {"n": len(rs)}
        for k in metric_keys:
            out[k] = mean(r[k] for r in rs if k in r)
        return out

    result = {c: row(rs) for c, rs in sorted(cats.items())}
    result["overall"] = row([r for r in records if str(r[category_key]) not in apart])
    if apart:
        result["all"] = row(list(records))
    return result


def abstain_rate(responses: Iterable[Mapping[str, Any]]) -> float:
    """How often a query response abstained: `"abstain": true`, or no items at all."""
    flags = [bool(r.get("abstain", False)) or not r.get("items") for r in responses]
    return sum(flags) / len(flags) if flags else math.nan


def calibrate_floor(no_answer: Sequence[float], answerable: Sequence[float],
                    max_false_abstain: float = 0.10) -> dict[str, float]:
    """The relevance floor that best separates questions without evidence (`no_answer`, should abstain)
    from answerable ones: the largest Youden J (abstain rate − false-abstain rate) among floors whose
    false-abstain rate stays within `max_false_abstain`. Candidate floors are the observed values."""
    best = {"floor": 0.0, "abstain_rate": 0.0, "false_abstain_rate": 0.0, "j": 0.0}
    if not no_answer or not answerable:
        return best
    for f in sorted(set(no_answer) | set(answerable)):
        ab = sum(v < f for v in no_answer) / len(no_answer)
        fa = sum(v < f for v in answerable) / len(answerable)
        if fa <= max_false_abstain and ab - fa > best["j"]:
            best = {"floor": float(f), "abstain_rate": ab, "false_abstain_rate": fa, "j": ab - fa}
    return best
