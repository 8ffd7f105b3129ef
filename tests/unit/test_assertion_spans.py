"""The learned reader of names (app/domain/layers/assertion_spans.py): its features, the model's
arithmetic, who a claim is about, and what the shipped model adds to the rules' timeline."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from app.adapters.span_model import installed_span_model
from app.domain.layers.assertion_spans import (ATTRIBUTES, ROLE_ATTRIBUTES, SpanModel, candidate_spans,
                                               learned_claims, role_spans, span_features)
from app.domain.layers.assertions import extract_all
from app.domain.layers.events import LayerEvent

T0 = datetime(2025, 2, 3, 9, tzinfo=timezone.utc)
SPEAKERS = frozenset({"noor", "tom"})


def ev(text: str, speaker: str = "Noor", i: int = 0) -> LayerEvent:
    return LayerEvent(id=str(i), speaker=speaker, content=text, occurred_at=T0 + timedelta(minutes=i),
                      conversation_id="c", seq=i)


def test_the_features_are_the_words_around_the_name_in_its_clause():
    text = "Long week. I'm on nights at Glanmor General, so no football."
    (span, i, j), = candidate_spans(text, SPEAKERS)
    f = span_features(text, span, i, j, SPEAKERS)
    assert span == "Glanmor General"
    assert {"L1=at", "L2=nights", "L3=on", "L21=nights_at", "head=general", "ntok=2", "first_person"} <= set(f)
    assert "lb=long" not in f  # the sentence before is another clause
    assert "rb=football" not in f and "question" not in f and "neg_cue" not in f


def test_features_read_a_bounded_window_of_a_long_turn():
    text = "x " * 5000 + "I live in Calder Vale."
    (span, i, j), = candidate_spans(text, SPEAKERS)
    assert span_features(text, span, i, j, SPEAKERS) == span_features(text[-300:], span, i - (len(text) - 300),
                                                                        j - (len(text) - 300), SPEAKERS)


# two classes, one feature: p(works_at) = sigmoid(2 * at - 1)
TINY = SpanModel(("none", "works_at"), (0.5, -0.5), {"L1=at": (-1.0, 1.0)}, threshold=0.7)


def test_the_model_is_a_softmax_over_its_weights():
    p = TINY.probabilities({"L1=at": 1.0})
    assert p[1] == pytest.approx(1 / (1 + math.exp(-2.0 * 1 + 1.0)))
    assert TINY.label({"unknown": 1.0}) == ("none", pytest.approx(1 / (1 + math.exp(-1.0))))
    assert SpanModel.from_dict(TINY.to_dict()) == TINY


def test_a_claim_is_about_the_speaker_the_person_named_or_nobody():
    mine = learned_claims(ev("I'm at Kestrel Labs now."), [], TINY, SPEAKERS)
    assert [(a.entity, a.attribute, a.value) for a in mine] == [("Noor", "works_at", "Kestrel Labs")]
    named = learned_claims(ev("Priya is at Kestrel Labs now."), [], TINY, SPEAKERS)
    assert [(a.entity, a.value) for a in named] == [("Priya", "Kestrel Labs")]
    assert learned_claims(ev("She is at Kestrel Labs now."), [], TINY, SPEAKERS) == []  # "she": nobody named
    assert learned_claims(ev("I'm at Kestrel Labs.", speaker="assistant"), [], TINY, SPEAKERS | {"assistant"}) == []


def test_what_the_rules_found_in_the_event_is_not_claimed_again():
    event = ev("I'm at Kestrel Labs, and my sister is at Orbit Foods.")
    rules = extract_all([event])
    learned = learned_claims(event, rules, TINY, SPEAKERS)
    assert not {a.value for a in learned} & {a.value for a in rules}
    assert all(a.attribute not in {r.attribute for r in rules} for a in learned)


def test_the_shipped_model_reads_forms_the_rules_do_not_know():
    model = installed_span_model()
    assert model is not None and set(ATTRIBUTES) <= {c.removesuffix("~neg") for c in model.classes}
    events = [ev("I'm on earlies at Penhallow Infirmary this week.", i=0),
              ev("Ha. I'm staying put in Calder Vale after all.", speaker="Tom", i=1)]
    rules = {(a.entity, a.attribute, a.value) for a in extract_all(events)}
    both = {(a.entity, a.attribute, a.value) for a in extract_all(events, spans=model)}
    assert both - rules == {("Noor", "works_at", "Penhallow Infirmary"), ("Tom", "lives_in", "Calder Vale")}


def test_a_role_phrase_is_its_head_with_up_to_two_words_before_it():
    groups = role_spans("From May I'm a senior data engineer, and my new manager is on the billing team.")
    assert [[span for span, _, _ in g] for g in groups] == [
        ["engineer", "data engineer", "senior data engineer"], ["manager"], ["billing team"]]
    assert role_spans("The team met.") == []  # a team needs a word that names it
    assert role_spans("Ask Engineer Holt.") == []  # a capitalised head inside a sentence is part of a name
    text = "I'm a pastry chef."
    f = span_features(text, "pastry chef", 6, 17, SPEAKERS, kind="role")
    assert f["kind=role"] == 1.0 and f["L1=a"] == 1.0 and not any(k.startswith("kind=") and k != "kind=role" for k in f)


def test_the_shipped_model_reads_job_titles_the_rules_do_not_know():
    model = installed_span_model()
    assert model is not None and set(ROLE_ATTRIBUTES) <= set(model.classes)
    events = [ev("Twelve years as a pastry chef, and I still love it.", i=0),
              ev("Three months as a bus driver so far.", speaker="Tom", i=1),
              ev("She's been brilliant, the best teacher we've had.", i=2)]
    rules = {(a.entity, a.attribute, a.value) for a in extract_all(events)}
    both = {(a.entity, a.attribute, a.value) for a in extract_all(events, spans=model)}
    assert both - rules == {("Noor", "job_title", "pastry chef"), ("Tom", "job_title", "bus driver")}
