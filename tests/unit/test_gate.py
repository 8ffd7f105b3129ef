"""The encoding gate (True Memory §4.1 Stage 1) on hand-made cases, with the real embedder."""
from __future__ import annotations

import gzip

import pytest

from app.domain.gate import (
    GateConfig,
    _gz,
    classify_speech_act,
    decide,
    evaluate,
    evaluate_batch,
    gate_score,
    novelty,
    prediction_error,
    salience,
)

MEMORY = [
    "I love Italian food, pasta is my favourite thing to eat.",
    "The team meeting is on Monday at 10am in the big room.",
    "My sister lives in Chicago with her two cats.",
    "We went hiking in the Alps last summer and it rained every day.",
]


@pytest.fixture(scope="module")
def encode():
    from app.adapters.embedder import get_embedder

    return get_embedder().encode


def _refuse(texts):  # an encoder that must not be reached
    raise AssertionError(f"encode called with {texts!r}")


# ---------------------------------------------------------------- novelty

def test_gzip_frame_is_left_out():
    payload = b"hello hello hello"
    assert _gz(payload) == len(gzip.compress(payload, compresslevel=6, mtime=0)) - 18


def test_novelty_is_one_for_an_empty_memory():
    assert novelty("anything at all", []) == 1.0


def test_novelty_of_a_verbatim_repeat_is_the_floor():
    assert novelty(MEMORY[2], MEMORY) == 0.05


def test_novelty_ranks_new_information_above_a_restatement():
    restated = novelty("I love Italian food, pasta is my favourite thing to eat!", MEMORY)
    new = novelty("My landlord raised the rent to 2,400 dollars starting in October.", MEMORY)
    assert restated < 0.35 < new
    assert 0.0 <= restated <= 1.0 and 0.0 <= new <= 1.0


# ---------------------------------------------------------------- salience

@pytest.mark.parametrize(
    "text, category, score",
    [
        ("ok", "noise", 0.02),
        ("lol 😂", "noise", 0.02),
        ("thanks!", "noise", 0.02),
        ("I'll send you the report tomorrow", "commitment", 0.8),
        ("actually, it's Tuesday not Monday", "correction", 0.6),
        ("We decided to go with the blue one", "decision", 0.7),
        ("what time is it?", "question", 0.2),
    ],
)
def test_short_texts_get_fixed_speech_act_scores(text, category, score):
    assert len(text) <= 50
    assert salience(text) == (score, category)


def test_long_text_features_raise_salience():
    bland = "It was a fairly ordinary afternoon and nothing much happened at all really."
    rich = "On March 3rd my daughter Emma won 2 medals at the Boston swim meet, I'm so proud!"
    s_bland, _ = salience(bland)
    s_rich, _ = salience(rich)
    assert len(bland) > 50 and len(rich) > 50
    assert s_rich > s_bland + 0.3


def test_first_person_preference_is_salient():
    s, cat = salience("I really love Italian food, pasta is my favourite thing to eat!")
    assert cat == "preference" and s >= 0.5


def test_classifier_puts_corrections_before_questions():
    assert classify_speech_act("No, it's Friday, not Thursday?") == "correction"
    assert classify_speech_act("Will you come tomorrow?") == "question"


# ---------------------------------------------------------------- prediction error

def test_prediction_error_skips_noise_without_embedding():
    assert prediction_error("ok", MEMORY[0], _refuse, noise=True) == 0.0


def test_prediction_error_is_zero_for_an_off_topic_neighbour(encode):
    pi = prediction_error("The quarterly tax forms are due in April.", MEMORY[3], encode)
    assert pi == 0.0


def test_prediction_error_is_higher_for_a_change_than_a_restatement(encode):
    nearest = "My sister lives in Chicago with her two cats."
    changed = prediction_error("My sister moved from Chicago to Denver and gave away her cats.", nearest, encode)
    same = prediction_error("My sister lives in Chicago with her 2 cats.", nearest, encode)
    assert changed > same
    assert changed > 0.05


# ---------------------------------------------------------------- eq. (1) and modes

def test_score_is_the_weight_normalised_sum():
    assert gate_score(1.0, 1.0, 1.0) == pytest.approx(1.0)
    assert gate_score(0.4, 0.5, 0.2) == pytest.approx((0.25 * 0.4 + 0.20 * 0.5 + 0.30 * 0.2) / 0.75)


def test_ok_is_rejected_in_filter_mode_even_against_an_empty_memory():
    filt = GateConfig(mode="filter")
    for memory in ([], MEMORY):
        d = evaluate("ok", memory, _refuse, filt)
        assert d.category == "noise" and d.salience < filt.salience_floor
        assert d.admitted is False and d.status == "gated_out" and d.passed is False
    # novelty alone would have carried it: the salience floor is what stops it
    assert evaluate("ok", [], _refuse, filt).score >= 0.30 * 0 + 0.25 * 1.0 / 0.75 - 1e-9


def test_restated_preference_low_novelty_high_salience(encode):
    d = evaluate("I really love Italian food - pasta is my favourite thing to eat!", MEMORY, encode,
                 GateConfig(mode="filter"))
    assert d.novelty < 0.35
    assert d.salience >= 0.5
    assert d.category == "preference"


def test_correction_is_admitted(encode):
    d = evaluate("actually, it's Tuesday not Monday", [MEMORY[1], MEMORY[0]], encode, GateConfig(mode="filter"))
    assert d.category == "correction"
    assert d.threshold == pytest.approx(0.24)  # τ + Δc, Δc = -0.06
    assert d.admitted and d.status == "admitted"


def test_tag_and_off_admit_everything_but_keep_the_verdict(encode):
    for mode in ("tag", "off"):
        d = evaluate("ok", MEMORY, encode, GateConfig(mode=mode))
        assert d.admitted and d.status == "admitted" and d.passed is False


def test_regate_from_stored_signals():
    stored = evaluate("what time is it?", MEMORY, None, GateConfig(mode="filter"))
    assert not stored.admitted
    lenient = decide(stored.novelty, stored.salience, stored.prediction_error, stored.category,
                     GateConfig(mode="filter", tau=0.1))
    assert lenient.admitted and lenient.score == stored.score


def test_batch_matches_single_calls(encode):
    texts = ["ok", "actually, it's Tuesday not Monday", "My sister moved to Denver."]
    neighbours = [MEMORY, [MEMORY[1]], [MEMORY[2], MEMORY[0]]]
    batch = evaluate_batch(texts, neighbours, encode, GateConfig(mode="filter"))
    singles = [evaluate(t, nb, encode, GateConfig(mode="filter")) for t, nb in zip(texts, neighbours)]
    assert len(batch) == len(singles) == len(texts)
    # what the caller sees: "ok" is filtered out, the correction and the new fact are admitted
    assert [b.status for b in batch] == ["gated_out", "admitted", "admitted"]
    for b, s in zip(batch, singles, strict=True):
        assert (b.status, b.category, b.passed) == (s.status, s.category, s.passed)
        assert b.novelty == s.novelty and b.salience == s.salience
        assert b.prediction_error == pytest.approx(s.prediction_error, abs=1e-3)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        GateConfig(mode="drop")  # type: ignore[arg-type]
