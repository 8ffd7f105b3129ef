"""The abstain decision (issue #17 item 9): features from what the query read, the shipped model's
decision over them, and the floors it replaced (still the recipe's switch back)."""
from __future__ import annotations

import pytest

from app.adapters.abstain_model import MODEL_FILE, load
from app.domain.recipe import Recipe
from app.domain.retrieval.abstain import (
    AbstainFeatures,
    AbstainModel,
    abstain_features,
    decide,
    question_names,
    question_terms,
    stem,
)

TEXTS = {
    1: "Ana: I adopted a greyhound named Biscuit last week.",
    2: "Ben: My sister is moving to Lisbon next month.",
    3: "Ana: We went to the lake on 3 June, it was freezing.",
    4: "Ben: I started a new job at the bakery on Main Street.",
}


def feats(**kw) -> AbstainFeatures:
    base = dict(dense=0.5, lexical=2.0, coverage=1.0, coverage_top=1.0, names_missing=0.0, top_score=2.0,
                margin=0.5, terms=3.0)
    return AbstainFeatures(**(base | kw))


def test_question_words_are_stemmed_without_stop_question_or_calendar_words():
    assert stem("teams") == stem("team's") == "team" and stem("parties") == "party"
    assert question_terms("Which football team do I support?") == ["footba", "team", "suppor"]
    assert question_terms("When did we go to the lake in June?") == ["lake"]  # "June": the time, not the topic
    assert question_names("When did Ana visit the UK and Lisbon?") == ["ana", "lisbon"]  # "UK": under 3 letters


def test_features_say_whether_the_question_was_ever_talked_about():
    dense = [(3, 0.24), (1, 0.2)]
    off = abstain_features("Which football team do I support?", {"dense": dense, "lexical": []}, TEXTS,
                           [3, 1, 2, 4], [2.0, 1.0, 0.5, 0.1])
    assert off.coverage == 0.0 and off.coverage_top == 0.0 and off.lexical == 0.0
    assert off.dense == 0.24 and off.top_score == 2.0 and off.margin == 1.0 and off.terms == 3
    on = abstain_features("When did Ana go to the lake?", {"dense": dense, "lexical": [(3, 6.0)]}, TEXTS,
                          [3, 1], [3.0, 0.5])
    assert on.coverage == 1.0 and on.coverage_top == 1.0 and on.lexical == pytest.approx(3.0)  # 6.0 / 2 words
    assert on.names_missing == 0  # "Ana" is a speaker of the candidates
    far = abstain_features("What did Ana buy in Lisbon?", {"lexical": [(2, 1.0)]}, {2: TEXTS[2]}, [2], [1.0])
    assert far.names_missing == 1 and far.coverage == pytest.approx(1 / 3) and far.dense == 0.0


def test_decide_uses_the_model_else_the_floors_and_nothing_found_abstains():
    model = AbstainModel(("coverage",), (0.5,), (0.5,), (-4.0,), 0.0, 0.5)
    assert model.probability(feats(coverage=0.0)) == pytest.approx(0.982, abs=1e-3)
    d = decide(feats(coverage=0.0), model, found_any=True, dense=0.9, rerank=None, dense_floor=0.31, rerank_floor=0.52)
    assert d.abstain and d.rule == "model" and d.threshold == 0.5
    d = decide(feats(coverage=1.0), model, found_any=True, dense=0.1, rerank=None, dense_floor=0.31, rerank_floor=0.52)
    assert not d.abstain and d.score < 0.5
    assert decide(None, None, found_any=True, dense=0.2, rerank=None, dense_floor=0.31, rerank_floor=0.52).abstain
    assert not decide(None, None, found_any=True, dense=0.2, rerank=0.6, dense_floor=0.31,
                      rerank_floor=0.52).abstain  # the cross-encoder, when it ran, is the judge
    assert decide(feats(), model, found_any=False, dense=None, rerank=None, dense_floor=0.31,
                  rerank_floor=0.52).rule == "nothing_found"


def test_a_model_file_naming_unknown_features_is_refused():
    doc = {"features": ["coverage", "vibes"], "threshold": 0.5,
           "model": {"mean": [0, 0], "scale": [1, 1], "coef": [1, 1], "intercept": 0}}
    with pytest.raises(ValueError, match="vibes"):
        AbstainModel.from_dict(doc)


# ---------------------------------------------------------------- the shipped model


def test_the_shipped_model_abstains_off_topic_and_answers_a_low_cosine_question_with_its_words_found():
    assert MODEL_FILE.is_file()
    model = load()
    floor = Recipe().abstain_dense_floor

    def ship(f: AbstainFeatures):
        return decide(f, model, found_any=True, dense=f.dense, rerank=None, dense_floor=floor, rerank_floor=0.52)

    # off topic: none of its words anywhere; the nearest turn is a topical near-miss at cosine 0.38
    off = feats(dense=0.38, lexical=0.0, coverage=0.0, coverage_top=0.0, names_missing=0.0, top_score=0.2,
                margin=0.05, terms=3.0)
    assert off.dense >= floor  # the floor answered it
    d = ship(off)
    assert d.abstain and d.rule == "model" and d.score >= model.threshold

    # a short date question whose evidence ranked first: dense only 0.24, but every word found, BM25 strong
    dated = feats(dense=0.24, lexical=4.0, coverage=1.0, coverage_top=1.0, names_missing=0.0, top_score=3.0,
                  margin=1.5, terms=2.0)
    assert dated.dense < floor  # the floor abstained
    d = ship(dated)
    assert not d.abstain

    # half its words nowhere in the conversation and a weak best cosine: abstain
    assert ship(feats(dense=0.3, coverage=0.5, coverage_top=0.5, terms=2.0)).abstain
    # an ordinary answerable question (the validation median: cosine 0.6, nearly every word found): answer
    assert not ship(feats(dense=0.6, coverage=0.9, coverage_top=0.8, terms=5.0)).abstain
