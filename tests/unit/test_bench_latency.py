"""The latency benchmark's own arithmetic: percentiles, the per-stage summary, and the identity check
that says whether two pieces of code answered every question alike."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.latency import BEAM_ID, conversations, differences, percentile, slim, summarise


def answer(qid: str, ranked, context="ctx", abstain=False, total=10.0, **stages) -> dict:  # noqa: ANN001
    return {"conversation": "c", "qid": qid, "ranked": ranked, "context": context, "abstain": abstain,
            "timings": {"total": total, **stages}}


def test_percentile_is_nearest_rank():
    vals = list(range(1, 101))
    assert percentile(vals, 50) == 50 and percentile(vals, 95) == 95 and percentile(vals, 100) == 100
    assert percentile([7.0], 95) == 7.0 and percentile([3, 1, 2], 50) == 2


def test_differences_name_every_kind_of_change():
    base = [answer("1", [["a", 1.0], ["b", 0.5]]), answer("2", [["a", 1.0]]), answer("3", [["a", 1.0]])]
    same = [answer("1", [["a", 1.0000001], ["b", 0.5]]), answer("2", [["a", 1.0]]), answer("3", [["a", 1.0]])]
    assert differences(base, same) == []
    moved = [answer("1", [["b", 1.0], ["a", 0.5]]), answer("2", [["a", 0.9]], context="other"),
             answer("3", [["a", 1.0]], abstain=True)]
    assert differences(base, moved) == ["c/1: ranked ids differ", "c/2: scores differ", "c/2: context differs",
                                        "c/3: abstain differs"]
    with pytest.raises(ValueError):
        differences(base, base[:2])  # a pass that lost a question is not "no differences"


def test_summary_per_conversation_and_stage():
    p = {"answers": [answer("1", [], total=10.0, lexical=2.0), answer("2", [], total=30.0, lexical=4.0),
                     answer("3", [], total=20.0)] + [dict(answer("9", []), conversation="other")]}
    s = summarise([p], "c")
    assert s["n"] == 3 and s["p50"] == 20.0 and s["p95"] == 30.0 and s["mean"] == 20.0
    assert s["stages"]["lexical"] == {"p50": 2.0, "mean": 2.0}  # a stage that did not run counts as 0 ms


def test_slim_keeps_ids_timings_and_a_hash_of_the_context():
    out = slim([{"setup": {"learned": True}, "answers": [answer("1", [["a", 1.0]], context="x")]}])
    a = out[0]["answers"][0]
    assert a["ranked"] == ["a"] and a["timings"] == {"total": 10.0} and "context" not in a
    assert a["context_sha1"] == "11f6ad8ec52a2984abaafd7c3b516503785c2072"


DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(not (DATA / "beam100k").is_dir(), reason="the shared data sets are not here")
def test_the_beam_500k_size_conversation_is_three_train_conversations_in_time_order():
    datasets, questions = conversations(DATA)
    big = datasets[1].conversations[0]
    assert big.id == BEAM_ID and len(big.turns) == 800
    times = [t.occurred_at for t in big.turns]
    assert times == sorted(times) and len({t.event_id for t in big.turns}) == 800
    assert len(datasets[0].conversations[0].turns) == 663 and len(questions) == 80
