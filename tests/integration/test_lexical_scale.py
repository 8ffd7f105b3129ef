"""The lexical scale benchmark on its own embedded PostgreSQL: every variant of the lexical stage timed
on tiny sizes of the scale corpus (generated from the shared LoCoMo data)."""
from __future__ import annotations

import json

import pytest


@pytest.mark.needs_shared_data("locomo")
def test_lexical_scale_bench_times_the_stage_as_the_service_runs_it(tmp_path):
    """`python -m bench.lexical_scale` on tiny sizes: events COPYed into the service's own schema,
    every variant timed on planted questions in both scopes, and the planted event found."""
    from bench.lexical_scale import VARIANTS, main

    out = tmp_path / "out"
    assert main(["--sizes", "400,900", "--queries", "4", "--var-dir", str(tmp_path / "pg"),
                 "--out-dir", str(out)]) == 0
    result = json.loads(next(out.glob("lexical-scale-*.json")).read_text())
    assert [s["events"] for s in result["sizes"]] == [400, 900]
    for size in result["sizes"]:
        for scope in ("tenant", "conversation"):
            for v in VARIANTS:
                m = size[scope][v]
                assert m["p50_ms"] > 0 and m["recall_at_10"] == 1.0  # a coined word: lexical finds it
    assert "| 900 | tenant | before |" in next(out.glob("lexical-scale-*.md")).read_text()
