"""A benchmark question in one call, shared by test_bench_metrics.py and test_bench_runner.py."""
from __future__ import annotations

from bench.datasets import Question


def _q(qid, gold, cat="single_hop", conv="c1"):
    return Question(qid, conv, f"question {qid}?", cat, tuple(gold))
