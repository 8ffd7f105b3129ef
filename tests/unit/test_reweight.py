"""Reweighting (True Memory eq. 4) on hand-made candidates: each factor fires only on its condition."""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.timeexpr import resolve_time_window
from app.domain.retrieval.reweight import Candidate, ReweightConfig, reweight

UTC = timezone.utc
REF = datetime(2024, 6, 20, 12, tzinfo=UTC)
MAY = resolve_time_window("What did Ana do last May?", REF)[0]  # [2024-05-01, 2024-06-01)


def by_id(out):
    return {r.id: r for r in out.items}


def test_temporal_boost_only_inside_the_window():
    cands = [
        Candidate(1, 1.0, occurred_at=datetime(2024, 4, 30, 23, 59, tzinfo=UTC)),  # just before
        Candidate(2, 1.0, occurred_at=datetime(2024, 5, 1, 0, 0, tzinfo=UTC)),  # first instant
        Candidate(3, 1.0, occurred_at=datetime(2024, 5, 31, 23, 59, tzinfo=UTC)),  # last minute
        Candidate(4, 1.0, occurred_at=datetime(2024, 6, 1, 0, 0, tzinfo=UTC)),  # end is exclusive
        Candidate(5, 1.0, occurred_at=datetime(2024, 6, 10, tzinfo=UTC), dates=[(date(2024, 5, 12), date(2024, 5, 12))]),
        Candidate(6, 1.0),  # no time at all
    ]
    out = reweight(cands, time_window=MAY)
    r = by_id(out)
    assert [i for i in r if r[i].score == pytest.approx(1.3)] == [2, 3, 5]
    assert r[1].score == r[4].score == r[6].score == 1.0
    assert r[2].adjustments[0].stage == "temporal" and r[2].adjustments[0].factor == 1.3
    assert "about 2024-05-12" in r[5].adjustments[0].note  # a resolved date it talks about counts
    assert out.ids()[:3] == [2, 3, 5]  # boosted ones first, input order kept among equals
    # no window -> nothing moves
    assert all(not x.adjustments for x in reweight(cands).items)


def test_open_ended_window():
    before = resolve_time_window("What did she do before June 2024?", REF)[0]
    out = by_id(reweight([Candidate("a", 1.0, occurred_at=datetime(2023, 1, 1, tzinfo=UTC)),
                          Candidate("b", 1.0, occurred_at=datetime(2024, 6, 2, tzinfo=UTC))], time_window=before))
    assert out["a"].score == pytest.approx(1.3) and out["b"].score == 1.0


def test_surprise_boost_and_speaker_prior():
    cands = [Candidate("a", 1.0, surprise=0.5, speaker="Ana"), Candidate("b", 1.0, surprise=0.0, speaker="Ben"),
             Candidate("c", 1.0, speaker="Cy")]
    r = by_id(reweight(cands, speaker_priors={"Ana": 1.0, "Ben": 0.4}))
    assert r["a"].score == pytest.approx(1.25 * 1.1)  # speaker (1 + 0.25·1) then surprise (1 + 0.2·0.5)
    assert [a.stage for a in r["a"].adjustments] == ["speaker", "surprise"]
    assert r["b"].score == pytest.approx(1.1)  # σ = 0 leaves it untouched
    assert r["c"].score == 1.0 and not r["c"].adjustments
    # a per-candidate prior (style similarity) works too; the larger prior wins
    r2 = by_id(reweight(cands, candidate_priors={"c": 0.8}))
    assert r2["c"].score == pytest.approx(1.2)


def test_knowledge_update_prefers_the_newest_and_attaches_the_old():
    cands = [
        Candidate("boston", 0.05, superseded_by="denver"),  # retrieved first: "I live in Boston"
        Candidate("other", 0.04),
        Candidate("denver", 0.01),  # "We moved to Denver" - the newer assertion, ranked low
    ]
    out = reweight(cands, knowledge_update=True)
    ids = out.ids()
    assert ids[0] == "denver" and ids.index("boston") > 0
    r = by_id(out)
    assert r["denver"].supersedes == ["boston"]
    assert r["boston"].superseded_by == "denver"
    assert r["boston"].score == pytest.approx(0.05 * 0.85)
    assert r["denver"].adjustments[-1].stage == "knowledge_update"
    # only when the question asks for a current value
    assert reweight(cands).ids()[0] == "boston"


def test_knowledge_update_follows_chains_and_injects_or_reports_missing():
    cands = [Candidate("v1", 0.05, superseded_by="v2"), Candidate("x", 0.03)]
    # v2 was itself superseded by v3, which the caller can supply
    newer = {"v2": Candidate("v2", 0.0, superseded_by="v3"), "v3": Candidate("v3", 0.0)}
    out = reweight(cands, knowledge_update=True, newer=newer)
    assert out.ids()[0] == "v3"
    assert by_id(out)["v3"].injected == "newer_assertion"
    missing = reweight(cands, knowledge_update=True)
    assert missing.missing_newer == ["v2"] and missing.ids() == ["v1", "x"]


def test_salience_floor_drops_and_explains():
    cands = [Candidate("a", 1.0, salience=0.1), Candidate("b", 0.5, salience=0.9), Candidate("c", 0.4)]
    out = reweight(cands, config=ReweightConfig(salience_floor=0.3))
    assert out.ids() == ["b", "c"]  # no salience given -> kept
    assert out.dropped[0].candidate.id == "a" and "floor" in out.dropped[0].reason
    # the switch turns it off
    assert reweight(cands, config=ReweightConfig(salience_floor=0.3, salience=False)).ids() == ["a", "b", "c"]


def test_injected_profile_results_scale_to_the_best_score():
    out = reweight([Candidate("a", 0.02), Candidate("b", 0.01)], speaker_priors={"Ana": 1.0},
                   inject=[(Candidate("profile:Ana", 0.0, kind="profile"), "profile"),
                           (Candidate("a", 0.0), "style")])  # already present: not duplicated
    r = by_id(out)
    assert r["profile:Ana"].score == pytest.approx(0.016) and r["profile:Ana"].injected == "profile"
    assert len(out.items) == 3
    explained = r["profile:Ana"].explain()
    assert explained["injected"] == "profile" and explained["adjustments"][0]["stage"] == "speaker_inject"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0.001, 1.0), st.floats(0.0, 1.0)), min_size=1, max_size=15))
def test_factors_never_lower_a_score_and_output_is_sorted(rows):
    cands = [Candidate(i, s, surprise=sig, occurred_at=datetime(2024, 5, 5, tzinfo=UTC)) for i, (s, sig) in enumerate(rows)]
    out = reweight(cands, time_window=MAY, speaker_priors={"x": 1.0})
    scores = [r.score for r in out.items]
    assert scores == sorted(scores, reverse=True)
    for r in out.items:
        assert r.score >= r.base_score * 1.3 - 1e-12
        assert [r.rank_after for r in out.items] == list(range(1, len(out.items) + 1))


def test_asker_factor_lifts_only_the_askers_own_turns():
    cands = [Candidate("long reply", 1.0, speaker="assistant"), Candidate("said it", 0.8, speaker="user"),
             Candidate("other", 0.9, speaker="user")]
    out = reweight(cands, asker_turns={"said it"})
    r = by_id(out)
    assert r["said it"].score == pytest.approx(0.8 * 2.0)  # × (1 + β_a), β_a = 1
    assert [a.stage for a in r["said it"].adjustments] == ["asker"]
    assert r["long reply"].score == 1.0 and r["other"].score == 0.9
    assert out.ids()[0] == "said it"
    assert by_id(reweight(cands, asker_turns={"said it"}, config=ReweightConfig(asker=False)))["said it"].score == 0.8


def test_addressee_factor_lifts_the_assistants_turns_by_its_own_size():
    cands = [Candidate("user asks", 1.0, speaker="user"), Candidate("assistant said it", 0.9, speaker="assistant")]
    out = by_id(reweight(cands, addressee_turns={"assistant said it"}, config=ReweightConfig(addressee_beta=0.25)))
    assert out["assistant said it"].score == pytest.approx(0.9 * 1.25)
    assert [a.stage for a in out["assistant said it"].adjustments] == ["addressee"]
    assert out["user asks"].adjustments == []
    # a size of 0 is no factor at all (nothing recorded), and the asker switch turns both off
    assert by_id(reweight(cands, addressee_turns={"assistant said it"}))["assistant said it"].adjustments == []
    off = reweight(cands, addressee_turns={"assistant said it"}, config=ReweightConfig(asker=False, addressee_beta=1))
    assert by_id(off)["assistant said it"].score == 0.9


def test_soft_priors_leave_a_clearly_better_turn_of_the_other_person_first():
    # the question names Ana, but Ben's turn answers it: a soft prior reorders near-ties only
    cands = [Candidate("ben answers", 1.0, speaker="Ben"), Candidate("ana chats", 0.8, speaker="Ana")]
    soft = reweight(cands, speaker_priors={"Ana": 1.0}, config=ReweightConfig(speaker_beta=0.1))
    assert soft.ids()[0] == "ben answers"
    hard = reweight(cands, speaker_priors={"Ana": 1.0}, config=ReweightConfig(speaker_beta=0.5))
    assert hard.ids()[0] == "ana chats"
    assert by_id(reweight(cands, speaker_priors={"Ana": 1.0}, config=ReweightConfig(speaker_beta=0)))[
        "ana chats"].adjustments == []
