"""The benchmark's pure parts, metrics: recall@k and evidence recall, budget labels, a question's score
per budget, aggregation by category, abstention and summaries. No service and no model."""
from __future__ import annotations

import math

import pytest

from app.locomo import Conversation
from bench.datasets import Dataset
from bench.evaluate import SystemAnswer, score_question, summarize
from bench.metrics import (
    abstain_rate,
    aggregate,
    budget_label,
    er_key,
    evidence_recall,
    first_gold_rank,
    percentile,
    rank_metrics,
    recall_all,
    recall_any,
    reciprocal_rank,
)
from tests.unit.bench_support import _q


def test_single_gold_found_at_rank_3():
    m = rank_metrics(["a", "b", "g", "c"], ["g"])
    assert m == {"r@5": 1.0, "r@10": 1.0, "all@10": 1.0, "mrr": pytest.approx(1 / 3)}


def test_gold_at_rank_7_counts_for_r10_but_not_r5():
    ranked = [f"x{i}" for i in range(6)] + ["g"] + ["y"] * 3
    m = rank_metrics(ranked, ["g"])
    assert m["r@5"] == 0.0 and m["r@10"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 7)


def test_multi_evidence_any_versus_all():
    ranked = ["a", "g1", "b", "c", "d", "e", "f", "h", "i", "j", "g2"]  # g2 at rank 11
    gold = ["g1", "g2"]
    assert recall_any(ranked, gold, 10) == 1.0
    assert recall_all(ranked, gold, 10) == 0.0
    assert recall_all(ranked, gold, 11) == 1.0
    assert reciprocal_rank(ranked, gold) == pytest.approx(0.5)
    assert rank_metrics(ranked, gold)["all@10"] == 0.0


def test_duplicate_gold_ids_do_not_change_all_at_k():
    assert recall_all(["g", "x"], ["g", "g"], 10) == 1.0


def test_no_gold_found():
    m = rank_metrics(["a", "b", "c"], ["g"])
    assert m == {"r@5": 0.0, "r@10": 0.0, "all@10": 0.0, "mrr": 0.0}
    assert first_gold_rank(["a"], ["g"]) is None


def test_empty_gold_never_counts_as_found():
    assert rank_metrics(["a", "b"], []) == {"r@5": 0.0, "r@10": 0.0, "all@10": 0.0, "mrr": 0.0}
    assert evidence_recall(["a"], []) == 0.0


def test_empty_ranking():
    assert rank_metrics([], ["g"])["mrr"] == 0.0


def test_evidence_recall_is_a_fraction_of_distinct_gold():
    assert evidence_recall(["a", "g1", "g3"], ["g1", "g2", "g3", "g4"]) == 0.5
    assert evidence_recall(["g1", "g1"], ["g1", "g2"]) == 0.5
    assert evidence_recall(["g1", "g2"], ["g1", "g2"]) == 1.0


def test_budget_labels():
    assert [budget_label(b) for b in (512, 1000, 2000, 1500, 4000)] == ["512", "1k", "2k", "1500", "4k"]
    assert er_key(1000) == "er@1k"


def test_score_question_per_budget_cutoff():
    q = _q("q1", ["g1", "g2"])
    ans = SystemAnswer(ranked=["x", "g1", "y", "g2"],
                       in_context={512: ["g1"], 1000: ["g1", "x"], 2000: ["x", "g1", "g2"]},
                       ctx_tokens={512: 480, 1000: 990, 2000: 1500})
    rec = score_question(q, ans, [512, 1000, 2000])
    assert rec["r@5"] == 1.0 and rec["all@10"] == 1.0 and rec["mrr"] == 0.5
    assert (rec["er@512"], rec["er@1k"], rec["er@2k"]) == (0.5, 0.5, 1.0)
    assert rec["ctx@2k"] == 1500.0


def test_score_question_truncates_ranking_to_top_k():
    q = _q("q1", ["g"])
    ans = SystemAnswer(ranked=["a", "b", "g"], in_context={}, ctx_tokens={})
    assert score_question(q, ans, [], top_k=2)["mrr"] == 0.0
    assert score_question(q, ans, [], top_k=3)["mrr"] == pytest.approx(1 / 3)


def test_aggregate_sets_categories_apart():
    recs = [
        {"category": "single_hop", "r@10": 1.0},
        {"category": "single_hop", "r@10": 0.0},
        {"category": "temporal", "r@10": 1.0},
        {"category": "adversarial", "r@10": 0.0},
    ]
    t = aggregate(recs, ["r@10"], apart=["adversarial"])
    assert t["single_hop"] == {"n": 2, "r@10": 0.5}
    assert t["overall"]["n"] == 3 and t["overall"]["r@10"] == pytest.approx(2 / 3)
    assert t["all"]["n"] == 4 and t["all"]["r@10"] == 0.5
    assert "all" not in aggregate(recs, ["r@10"])


def test_abstention_rate():
    assert abstain_rate([{"abstain": True, "items": [1]}, {"items": []}, {"items": [1]}, {"abstain": False, "items": [1]}]) == 0.5
    assert abstain_rate([{"items": [1]}]) == 0.0  # a missing field counts as not abstaining
    assert math.isnan(abstain_rate([]))


def test_summarize_scores_gold_questions_and_abstention_apart():
    ds = Dataset("beam", [Conversation("c1", [])], [
        _q("q1", ["g"], cat="information_extraction"),
        _q("q2", ["g", "h"], cat="event_ordering"),
        _q("q3", [], cat="abstention"),
        _q("q4", [], cat="abstention"),
    ], apart=("abstention",))
    answers = {
        "q1": SystemAnswer(["g"], {2000: ["g"]}, {2000: 100}),
        "q2": SystemAnswer(["a", "h"], {2000: ["h"]}, {2000: 300}),
        "q3": SystemAnswer([], {2000: []}, {2000: 0}),  # nothing returned: counts as abstaining
        "q4": SystemAnswer(["a"], {2000: ["a"]}, {2000: 40}, abstain=False),
    }
    s = summarize(ds, answers, [2000])
    assert s["table"]["overall"]["n"] == 2
    assert s["table"]["overall"]["er@2k"] == pytest.approx((1.0 + 0.5) / 2)
    assert s["table"]["overall"]["mrr"] == pytest.approx((1.0 + 0.5) / 2)
    assert "abstention" not in s["table"]
    assert s["abstention"]["n"] == 2 and s["abstention"]["abstain_rate"] == 0.5
    assert s["abstention"]["false_abstain_rate"] == 0.0


def test_percentile():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10], 95) == 10
    assert percentile(list(range(101)), 95) == 95
    assert math.isnan(percentile([], 50))
