"""The benchmark runner's pure helpers: subsets, pipeline overrides, pending counts, the result JSON
and markdown tables, one embedded run per var dir, the abstention floor's calibration, the ablation table."""
from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.locomo import Conversation, Turn
from bench.datasets import Dataset, spread, subset
from bench.runner import parse_overrides, pending_total
from tests.unit.bench_support import _q


def test_spread_and_subset():
    assert spread(list(range(10)), 3) == [0, 3, 6]
    assert spread([1, 2], 5) == [1, 2]
    convs = [Conversation(f"c{i}", [Turn("1", "a", "x", datetime(2024, 1, 1, tzinfo=UTC))]) for i in range(3)]
    qs = [_q(f"c{i}:{j}", ["1"], conv=f"c{i}") for i in range(3) for j in range(10)]
    small = subset(Dataset("t", convs, qs), limit=2, conversations=2)
    assert [c.id for c in small.conversations] == ["c0", "c1"]
    assert [q.qid for q in small.questions] == ["c0:0", "c0:5", "c1:0", "c1:5"]
    named = subset(Dataset("t", convs, qs), only=("c2", "c0"))
    assert [c.id for c in named.conversations] == ["c0", "c2"] and len(named.questions) == 20
    with pytest.raises(ValueError, match="c9"):
        subset(Dataset("t", convs, qs), only=("c9",))


def test_parse_pipeline_overrides():
    assert parse_overrides(["rerank=false", "fusion.k=30", "intent=temporal", "weights={\"dense\": 2}"]) == {
        "rerank": False, "fusion": {"k": 30}, "intent": "temporal", "weights": {"dense": 2}}
    with pytest.raises(ValueError):
        parse_overrides(["novalue"])


def test_pending_total():
    assert pending_total({"events": 5, "pending": {"embed": 2, "graph": 1}}) == 3
    assert pending_total({"events": 5, "pending": {}}) == 0
    assert pending_total({"events": 5, "pending": {"embed": 0, "graph": 7}}, ["embed"]) == 0


def test_result_json_is_strict_and_columnar():
    from bench.report import to_json

    result = {"benchmark": "locomo", "systems": {"bm25": {
        "table": {"overall": {"n": 2, "r@10": float("nan")}},
        "records": [{"qid": "a", "r@10": 1.0, "mrr": 1 / 3}, {"qid": "b", "r@10": 0.0, "mrr": 0.0}]}}}
    back = json.loads(to_json(result))
    assert back["systems"]["bm25"]["table"]["overall"]["r@10"] is None
    assert back["systems"]["bm25"]["records"] == {"columns": ["qid", "r@10", "mrr"],
                                                  "rows": [["a", 1, 0.3333], ["b", 0, 0]]}


def test_markdown_tables_show_service_beside_baselines_with_ratios():
    from bench.report import category_table, metric_table

    def summ(v):
        return {"table": {"single_hop": {"n": 3, "r@10": v}, "overall": {"n": 3, "r@10": v}}}

    result = {"budgets": [], "systems": {"service": summ(0.9), "bm25": summ(0.6), "dense": summ(0.0)}}
    lines = category_table(result, "r@10")
    assert lines[0] == "| category (n) | service | bm25 | dense | service/bm25 | service/dense |"
    assert lines[2] == "| single_hop (3) | 0.900 | 0.600 | 0.000 | 1.50× | — |"
    assert any(line.startswith("| r@10 | 0.900 | 0.600 |") for line in metric_table(result, "overall"))


def test_one_embedded_run_per_var_dir(tmp_path):
    from bench.harness import exclusive

    with exclusive(tmp_path), pytest.raises(RuntimeError, match="another benchmark"), exclusive(tmp_path):
        pass
    with exclusive(tmp_path):  # released
        pass


def test_calibrate_floor_separates_and_respects_the_false_abstain_cap():
    from bench.metrics import calibrate_floor

    no_answer = [0.1, 0.2, 0.3, 0.6]
    answerable = [0.25, 0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.99]
    f = calibrate_floor(no_answer, answerable, max_false_abstain=0.10)
    assert f["floor"] == 0.5 and f["abstain_rate"] == 0.75 and f["false_abstain_rate"] == 0.1
    assert calibrate_floor(no_answer, answerable, max_false_abstain=0.0)["floor"] == 0.25
    assert calibrate_floor([], answerable)["floor"] == 0.0


def test_ablation_table_shows_each_stage_change_per_category():
    from bench.ablate import markdown as ablation_md, variants

    assert variants(["rerank", "neighbours"]) == [("all on", {}), ("-rerank", {"rerank": False}),
                                                   ("-neighbours", {"neighbours": 0})]
    assert variants(["derived"], default_off=["derived"]) == [("all on", {}), ("+derived", {"derived": True})]

    def svc(r10: float, er: float) -> dict:
        row = {"r@5": 0.5, "r@10": r10, "all@10": 0.4, "mrr": 0.3, "er@2k": er}
        return {"service": {"table": {"overall": row, "temporal": row}, "latency": {"p50_ms": 80.0, "p95_ms": 120.0}}}

    md = ablation_md({"benchmark": "locomo", "budgets": [2000], "only": ["conv-43"], "limit": None, "variants": {
        "all on": {"pipeline": {}, "run_id": "a", "systems": svc(0.70, 0.80)},
        "-rerank": {"pipeline": {"rerank": False}, "run_id": "b", "systems": svc(0.65, 0.81)}}})
    assert "| -rerank | 0.500 | 0.650 |" in md
    assert "| -rerank | -0.050 | -0.050 |" in md and "| -rerank | +0.010 | +0.010 |" in md
