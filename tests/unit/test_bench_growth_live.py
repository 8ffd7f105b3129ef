"""The live growth benchmark's report (bench/growth_live.py): warm-up batches are left out of the
means, held and made-again batches are counted, and the unrouted / routed ratio is stated."""
from __future__ import annotations

from bench.growth_live import markdown, summary


def _row(seconds: float, assembly: str, warmup: bool = False, post: float = 1.0) -> dict:
    return {"events": 1000, "post_to_indexed_s": post, "warmup": warmup,
            "graph": {"seconds": seconds, "assembly": assembly, "run": "incremental"}}


def test_summary_leaves_out_the_warm_up_and_counts_the_paths():
    rows = [_row(20.0, "rebuilt", True), _row(0.2, "held"), _row(2.0, "rebuilt"), _row(0.2, "held")]
    s = summary(rows)
    assert s["held"] == 2 and s["rebuilt"] == 1
    assert s["graph_s_mean"] == 0.8 and s["graph_s_median"] == 0.2
    assert s["first_graph_s"] == 20.0


def test_markdown_states_both_arms_and_their_ratio():
    routed = {"workers": ["graph-worker", "worker"], "batches": [], **summary([_row(9, "rebuilt", True),
                                                                              _row(0.25, "held", post=2.0)])}
    unrouted = {"workers": ["worker"], "batches": [], **summary([_row(9, "rebuilt", True),
                                                                 _row(1.0, "rebuilt", post=3.0)])}
    res = {"sizes": [1000], "batch": 20, "batches_per_arm": 1, "warmup_batches": 1, "cpus": 2,
           "load_avg": (1.0, 1.0, 1.0), "commit": "abc", "when": "now", "seconds_total": 10.0,
           "points": [{"size": 1000, "arms": {"routed": routed, "unrouted": unrouted}}]}
    md = markdown(res)
    assert "| 1,000 | routed | 0.250 | 0.250 | 1 / 0 | 2.00 | 9.000 |" in md
    assert "| 1,000 | unrouted | 1.000 | 1.000 | 0 / 1 | 3.00 | 9.000 |" in md
    assert "**4.0x**" in md and "**1.50x**" in md
    assert "--batches 1 --warmup 1" in md
