"""Ranking features from a candidate's words and its neighbours in the exchange (`context_features`)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np

from app.domain.retrieval.context_features import (
    CONTEXT_FEATURES,
    SESSION_FEATURES,
    context_features,
    group_features,
    session_keys,
    stem,
)
from app.domain.retrieval.features import FEATURES

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


@dataclass
class Ev:
    id: int
    content: str
    occurred_at: datetime
    conversation_id: str = "c"


@dataclass
class Item:
    event: Ev


def col(x: np.ndarray, i: int, name: str) -> float:
    return float(x[i, CONTEXT_FEATURES.index(name)])


def test_the_features_are_part_of_the_model_rows():
    assert FEATURES[-len(CONTEXT_FEATURES) - len(SESSION_FEATURES):] == CONTEXT_FEATURES + SESSION_FEATURES


def test_stems_meet_across_forms():
    assert stem("moved") == stem("moving") == stem("moves")
    assert stem("Ana's") == "ana"


def test_a_turn_that_holds_the_whole_question_covers_more_than_one_that_repeats_a_word():
    items = [Item(Ev(1, "The conference moved to Porto this year.", T0)),
             Item(Ev(2, "City, city, city: I love a big city.", T0 + timedelta(days=3)))]
    x = context_features(items, {"dense": [0.9, 0.5], "lexical": [0.4, 1.0]},
                         "Which city did the conference move to?")
    assert col(x, 0, "q_cover") > col(x, 1, "q_cover") > 0
    assert col(x, 0, "q_cover_idf") > col(x, 1, "q_cover_idf")


def test_names_in_the_question_are_counted():
    items = [Item(Ev(1, "Noor said the trip to Kyoto is on.", T0)), Item(Ev(2, "The trip is on.", T0 + timedelta(days=1)))]
    x = context_features(items, {}, "When is Noor going to Kyoto?")
    assert col(x, 0, "q_names") == 2.0 and col(x, 1, "q_names") == 0.0


def test_the_reply_to_a_matching_question_carries_its_match():
    items = [Item(Ev(11, "Lisbon, in May!", T0 + timedelta(seconds=30))),   # fused order: the reply first
             Item(Ev(10, "Where did you go on holiday?", T0)),
             Item(Ev(12, "Nice. Anything else new?", T0 + timedelta(hours=5)))]  # after a long pause
    x = context_features(items, {"dense": [0.2, 1.0, 0.3], "lexical": [0.0, 1.0, 0.0]},
                         "Where did they go on holiday?")
    assert col(x, 0, "prev_found") == 1.0
    assert col(x, 0, "prev_dense_rel") == 1.0 and col(x, 0, "prev_lexical_rel") == 1.0
    assert col(x, 0, "prev_cover") == col(x, 1, "q_cover") > 0
    assert col(x, 1, "is_question") == 1.0 and col(x, 0, "is_question") == 0.0
    assert col(x, 1, "prev_found") == 0.0  # nothing before the question
    assert col(x, 2, "prev_found") == 0.0  # five hours later: another exchange


def test_a_statement_lends_its_match_to_no_neighbour():
    """Three statements a minute apart: the one that matches stays the only one with the match."""
    items = [Item(Ev(1, "I adopted a puppy last weekend.", T0)),
             Item(Ev(2, "My sister is getting married in Lisbon.", T0 + timedelta(minutes=1))),
             Item(Ev(3, "We repainted the kitchen.", T0 + timedelta(minutes=2)))]
    x = context_features(items, {"dense": [0.4, 1.0, 0.2]}, "Where is the wedding?")
    assert [col(x, i, "prev_found") for i in range(3)] == [0.0, 0.0, 0.0]
    assert [col(x, i, "prev_dense_rel") for i in range(3)] == [0.0, 0.0, 0.0]


def test_turns_of_another_conversation_are_not_neighbours():
    items = [Item(Ev(1, "Where did you go?", T0, "a")), Item(Ev(2, "Lisbon!", T0 + timedelta(seconds=5), "b"))]
    x = context_features(items, {"dense": [1.0, 1.0]}, "Where did they go?")
    assert col(x, 1, "prev_found") == 0.0 and col(x, 0, "prev_found") == 0.0


def test_no_items_no_rows():
    assert context_features([], {}, "anything?").shape == (0, len(CONTEXT_FEATURES))


def test_a_standing_instruction_and_a_preference_are_marked_and_small_talk_is_not():
    items = [Item(Ev(1, "Always include version numbers when I ask about libraries.", T0)),
             Item(Ev(2, "From now on, please answer in French.", T0 + timedelta(minutes=1))),
             Item(Ev(3, "I'd rather take the train than fly.", T0 + timedelta(minutes=2))),
             Item(Ev(4, "She is always ready for a game, and I always loved chess.", T0 + timedelta(minutes=3))),
             Item(Ev(5, "My preferred editor is the one with split panes.", T0 + timedelta(minutes=4)))]
    x = context_features(items, {}, "Which libraries should I use for the parser?")
    assert [col(x, i, "standing_rule") for i in range(5)] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert [col(x, i, "states_preference") for i in range(5)] == [0.0, 0.0, 1.0, 0.0, 1.0]



def test_a_sitting_ends_at_a_six_hour_gap_and_at_another_conversation():
    items = [Item(Ev(1, "a", T0)), Item(Ev(2, "b", T0 + timedelta(hours=5, minutes=59))),
             Item(Ev(3, "c", T0 + timedelta(hours=12))), Item(Ev(4, "d", T0 + timedelta(minutes=1), "other"))]
    k = session_keys(items)
    assert k[0] == k[1] and k[2] != k[1] and k[3] != k[0] and k[3][0] == "other"


def test_a_turn_of_a_strong_sitting_is_told_so_and_how_far_it_lies_from_the_best_of_the_others():
    # two sittings a day apart; the second holds two candidates
    items = [Item(Ev(1, "x", T0)), Item(Ev(2, "y", T0 + timedelta(days=1))),
             Item(Ev(3, "z", T0 + timedelta(days=1, minutes=2)))]
    dense, lexical = np.array([0.9, 0.4, 1.0]), np.array([0.0, 0.7, 0.2])
    x = group_features(session_keys(items), dense, lexical)
    # (others, dense best, dense lead, lexical best, lexical lead)
    assert x[0].tolist() == [0.0, 0.9, 0.0, 0.0, 0.0]  # alone: its own relevance is its sitting's best
    assert np.allclose(x[1], [np.log1p(1), 1.0, 0.4 - 1.0, 0.7, 0.7 - 0.2])
    assert np.allclose(x[2], [np.log1p(1), 1.0, 1.0 - 0.4, 0.7, 0.2 - 0.7])


def test_the_best_of_the_others_is_the_second_best_for_the_best_and_unknown_groups_stay_alone():
    dense = np.array([0.9, 0.5, 0.3, 1.0])
    x = group_features(["e", "e", "e", None], dense, dense)
    assert np.allclose(x[:3, 1], 0.9) and np.allclose(x[:3, 2], [0.9 - 0.5, 0.5 - 0.9, 0.3 - 0.9])
    assert np.allclose(x[3], [0.0, 1.0, 0.0, 1.0, 0.0])
