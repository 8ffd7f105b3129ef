"""The growth benchmark's report (bench/growth.py): one row per layer and size, before and after,
with the layers' run kind, and the POST-to-indexed row; the sizes measured are said when a run
stopped early."""
from __future__ import annotations

from bench.growth import LAYER_ORDER, markdown


def _batch(seconds: float, run: str | None) -> dict:
    layers = {layer: {"seconds": seconds, "status": "done", "run": run, "events": 1000, "state_bytes": 10}
              for layer in LAYER_ORDER}
    return {"events": 1000, "post_s": 0.1, "embed_s": 0.5, "layers": layers, "layers_s": seconds * 5,
            "post_to_indexed_s": seconds * 5 + 0.6}


def test_markdown_has_a_row_per_layer_before_and_after():
    res = {"benchmark": "growth", "sizes": [1000, 5000], "measured": [1000], "batch": 20, "cpus": 2,
           "load_avg": (1.0, 1.0, 1.0), "commit": "abc", "when": "now", "seconds_total": 10.0,
           "points": [{"size": 1000, "before": _batch(2.0, "full"), "after": _batch(0.25, "incremental"),
                       "stateful_batch_s_mean_last_50": 0.5}]}
    md = markdown(res)
    assert "measured: 1000" in md and "Sizes asked: 1000, 5000" in md
    for layer in LAYER_ORDER:
        assert f"| 1,000 | {layer} | 2.000 | 0.250 | incremental |" in md
    assert "| 1,000 | POST to fully indexed | 10.60 | 1.85 | |" in md
