"""The HTTP latency A/B's bookkeeping: what counts as the same answer, and how the time is split."""
from __future__ import annotations

from bench.latency_http import comparable, summary


def test_bodies_compare_without_timing_values_but_with_stage_names():
    a = {"items": [{"id": 1}], "context": "x", "timings_ms": {"lexical": 3.0, "heat": 1.0}}
    assert comparable(a) == comparable(a | {"timings_ms": {"heat": 9.0, "lexical": 7.5}})
    assert comparable(a) != comparable(a | {"timings_ms": {"lexical": 3.0}})  # a stage gone
    assert comparable(a) != comparable(a | {"context": "y"})


def test_summary_splits_the_total_into_pipeline_and_rest_per_arm_and_conversation():
    rows = [{"arm": arm, "conversation": "c", "total": t, "pipeline": p}
            for arm, t, p in (("base", 10.0, 6.0), ("base", 20.0, 14.0), ("new", 8.0, 6.0))]
    s = summary(rows)
    assert s["c"]["base"]["n"] == 2 and s["c"]["new"]["n"] == 1
    assert s["c"]["base"]["total"]["p50"] == 15.0 and s["c"]["base"]["rest"]["mean"] == 5.0
    assert s["c"]["new"]["rest"]["p50"] == 2.0
