"""Query expansion (pseudo-relevance feedback, HyDE's passage) and the separation list (only in
conversations with more than five speakers), as pure functions. Through POST /v1/query:
tests/integration/test_expansion_separation_api.py."""
from __future__ import annotations

import numpy as np
import pytest

from app.domain.retrieval.expansion import feedback_ids, rocchio, usable_passage
from app.domain.retrieval.separation import (
    MIN_SPEAKERS,
    addressee_role,
    asker_role,
    names_speaker,
    separated_speakers,
)


def test_rocchio_moves_the_question_toward_its_feedback_and_stays_unit_length():
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    fb = [np.array([0.0, 1.0, 0.0], dtype=np.float32), np.array([0.0, 0.8, 0.6], dtype=np.float32)]
    v = rocchio(q, fb, alpha=1.0, beta=0.5)
    assert v is not None and abs(float(np.linalg.norm(v)) - 1.0) < 1e-6
    assert v[0] > v[1] > 0 and v[2] > 0  # still mostly the question, moved toward the feedback
    assert rocchio(q, []) is None


def test_feedback_ids_are_what_the_lists_agree_on():
    assert feedback_ids([[5, 1, 2], [1, 9, 5]], n=2) == [1, 5]
    assert feedback_ids([], n=3) == []


def test_usable_passage_trims_and_refuses_empty_replies():
    assert usable_passage("  I play the\\ncello  ".replace("\\n", "\n")) == "I play the cello"
    assert usable_passage("   ") is None
    assert len(usable_passage("x" * 5000)) == 600


def test_separation_fires_only_above_five_speakers_and_names_whole_words():
    five = ["Ana", "Ben", "Cleo", "Dev", "Eli"]
    assert separated_speakers("What did Ana say?", five) == ()
    six = five + ["Zoe Park"]
    assert len(set(six)) == MIN_SPEAKERS
    assert separated_speakers("What did Zoe say to Ben?", six) == ("Ben", "Zoe Park")
    assert separated_speakers("What did Benny say?", six) == ()  # "Ben" is not named in "Benny"
    assert names_speaker("ask zoe park", "Zoe Park") and not names_speaker("Zoey", "Zoe Park")


@pytest.mark.parametrize("question, role", [
    ("How many columns did I want to add to the table?", "user"),
    ("what did i decide about the budget tracker", "user"),
    ("Remind me which database my app uses", "user"),
    ("Can you list the order in which I brought up the bugs?", "user"),
    ("What did Caroline research?", None),
    ('When did Ana say "I quit"?', None),  # quoted words are somebody else's
    ("What is the MIME type of the upload?", None),  # "me" only as a whole word
])
def test_asker_role_is_the_users_for_first_person_questions(question, role):
    assert asker_role(question) == role


@pytest.mark.parametrize("question, role", [
    ("What did you recommend for my trip to Lisbon?", "assistant"),
    ("Which of your suggestions did I follow?", "assistant"),
    ("Can you remind me what the rotation was on Sunday?", None),  # a request to the service, not "you said"
    ("Could you please tell me what you suggested for dinner?", "assistant"),  # the second "you" counts
    ("What did Ana tell Ben?", None),
    ('When did Ana say "you are late"?', None),  # quoted words are somebody else's
    ("What is the YouTube channel called?", None),  # "you" only as a whole word
])
def test_addressee_role_is_the_assistants_for_questions_to_you(question, role):
    assert addressee_role(question) == role
