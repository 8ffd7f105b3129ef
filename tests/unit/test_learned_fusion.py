"""The learned fusion: features of a hand-made candidate set, the shipped model file, the explanation."""
from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from types import SimpleNamespace

import numpy as np
import pytest

from app.adapters.fusion_ranker import MODEL_FILE, FusionModelUnavailable, FusionRanker
from app.domain.recipe import Recipe
from app.domain.retrieval.context_features import SESSION_FEATURES
from app.domain.retrieval.features import FEATURES, MISSING_RANK, candidate_features, order_by_model, prior_boost
from app.domain.retrieval.ranking import RankedItem

F = {name: i for i, name in enumerate(FEATURES)}


def ev(pk, speaker, content, when, role=None):
    return SimpleNamespace(id=pk, event_id=str(pk), speaker=speaker, content=content, occurred_at=when, role=role)


def sig(pk, *, surprise=0.0, superseded_by=None, dates=(), episode=None):
    return SimpleNamespace(event_pk=pk, surprise=surprise, salience=0.7, importance=0.2, superseded_by=superseded_by,
                           heat=0.4, access_count=3, entities=("greyhound",), resolved_dates=tuple(dates),
                           conversation_id="c", episode_index=episode)


def candidates():
    a = ev(1, "Ana", "I adopted a greyhound named Biscuit last week.", datetime(2024, 5, 20, tzinfo=UTC))
    b = ev(2, "Ben", "My sister is moving to Lisbon.", datetime(2024, 5, 22, tzinfo=UTC))
    c = ev(3, "Ben", "Old news.", datetime(2024, 1, 2, tzinfo=UTC))
    items = [RankedItem(b, 0.032, {"lexical": {"rank": 1, "score": 4.0}, "dense": {"rank": 2, "score": 0.14}}),
             RankedItem(a, 0.030, {"dense": {"rank": 1, "score": 0.54}, "recency": {"rank": 2, "score": -2.0}}),
             RankedItem(c, 0.010, {"graph": {"rank": 1, "score": 1.0}})]
    signals = {"lexical": [(2, 4.0)], "dense": [(1, 0.54), (2, 0.14)], "graph": [(3, 1.0)]}
    intent = SimpleNamespace(label="knowledge_update", confidence=0.8,
                             time_window=(datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)))
    sigs = {1: sig(1, surprise=0.5), 3: sig(3, superseded_by=1, dates=(date(2024, 5, 3),))}
    return items, signals, intent, sigs


def test_features_of_a_hand_made_candidate_set():
    items, signals, intent, sigs = candidates()
    x = candidate_features(items, signals, query="Which dog did Ana get recently?", intent=intent, signals_of=sigs,
                           reference_time=datetime(2024, 5, 22, tzinfo=UTC))
    assert x.shape == (3, len(FEATURES))
    ana, ben, old = x[1], x[0], x[2]
    # each signal: found, rank (sentinel when not), raw score, score over the question's best
    assert ana[F["dense_found"]] == 1 and ana[F["dense_rank"]] == 1 and ana[F["dense_rel"]] == pytest.approx(1.0)
    assert ben[F["dense_rel"]] == pytest.approx(0.14 / 0.54)
    assert ana[F["lexical_found"]] == 0 and ana[F["lexical_rank"]] == MISSING_RANK and ana[F["lexical_score"]] == 0
    assert ben[F["n_signals"]] == 2 and ana[F["n_signals"]] == 1  # recency is not a retriever
    assert (ben[F["rrf_rank"]], ana[F["rrf_rank"]]) == (1, 2) and ben[F["rrf_rel"]] == pytest.approx(1.0)
    # the reweight's facts: the question names Ana; Ana's turn and the old one's resolved date are in May
    assert ana[F["named_speaker"]] == 1 and ben[F["named_speaker"]] == 0 and ben[F["names_any_speaker"]] == 1
    assert ana[F["in_window"]] == 1 and old[F["in_window"]] == 1 and ben[F["in_window"]] == 1
    assert ana[F["surprise"]] == pytest.approx(0.5) and old[F["superseded"]] == 1 and ben[F["has_signals"]] == 0
    assert ana[F["heat"]] == pytest.approx(0.4) and ana[F["access_count"]] == 3
    # recency among the candidates, the intent, the turn
    assert (ben[F["recency_rank"]], ana[F["recency_rank"]], old[F["recency_rank"]]) == (1, 2, 3)
    assert ana[F["recency_days"]] == pytest.approx(2.0) and ana[F["recency_fused"]] == 1
    assert ana[F["intent_knowledge_update"]] == 1 and ana[F["intent_general"]] == 0
    assert ana[F["len_words"]] == 8 and ana[F["query_words"]] == 6
    # three sittings (days apart), no episode built: each candidate alone, its own relevance its group's best
    assert not x[:, [F[f] for f in SESSION_FEATURES if f.endswith(("_others", "_lead"))]].any()
    assert ana[F["session_dense_best"]] == pytest.approx(1.0) and ana[F["episode_lexical_best"]] == 0.0


def test_a_candidate_learns_what_the_others_of_its_sitting_and_episode_scored():
    t = datetime(2024, 5, 20, 18, 0, tzinfo=UTC)
    a = ev(1, "Ana", "We booked the flights.", t)
    b = ev(2, "Ben", "Which airline?", t + timedelta(minutes=1))
    c = ev(3, "Ana", "The one with the good legroom.", t + timedelta(minutes=2))
    items = [RankedItem(b, 0.03, {"lexical": {"rank": 1, "score": 6.0}}),
             RankedItem(a, 0.02, {"dense": {"rank": 1, "score": 0.6}}),
             RankedItem(c, 0.01, {"dense": {"rank": 2, "score": 0.3}})]
    signals = {"lexical": [(2, 6.0)], "dense": [(1, 0.6), (3, 0.3)]}
    sigs = {1: sig(1, episode=7), 3: sig(3, episode=7)}  # b's episode not built yet
    x = candidate_features(items, signals, query="Which airline did they book?", intent=None, signals_of=sigs)
    b_row, a_row, c_row = x
    assert c_row[F["session_others"]] == pytest.approx(np.log1p(2))
    assert c_row[F["session_dense_best"]] == pytest.approx(1.0) and c_row[F["session_lexical_best"]] == pytest.approx(1.0)
    assert c_row[F["session_dense_lead"]] == pytest.approx(0.5 - 1.0) and a_row[F["session_dense_lead"]] == pytest.approx(0.5)
    # the episode holds a and c only: b's lexical match is not theirs there
    assert c_row[F["episode_others"]] == pytest.approx(np.log1p(1)) and c_row[F["episode_lexical_best"]] == 0.0
    assert b_row[F["episode_others"]] == 0.0 and b_row[F["episode_lexical_best"]] == pytest.approx(1.0)


def test_asker_turn_only_among_mixed_roles():
    a = ev(1, "user", "I decided on the blue one.", datetime(2024, 1, 1, tzinfo=UTC), role="user")
    b = ev(2, "assistant", "You decided on the blue one, a fine choice.", datetime(2024, 1, 1, tzinfo=UTC),
           role="assistant")
    items = [RankedItem(b, 0.02, {"dense": {"rank": 1, "score": 0.7}}), RankedItem(a, 0.01, {})]
    x = candidate_features(items, {"dense": [(2, 0.7)]}, query="What did I decide?", intent=None, signals_of={})
    assert x[1][F["asker_turn"]] == 1 and x[0][F["asker_turn"]] == 0 and x[0][F["role_assistant"]] == 1


def logistic_model(weight_of: dict[str, float]) -> FusionRanker:
    coef = [weight_of.get(n, 0.0) for n in FEATURES]
    return FusionRanker({"kind": "logistic", "features": list(FEATURES), "trained_on": {}, "trained_at": "t",
                         "model": {"mean": [0.0] * len(FEATURES), "scale": [1.0] * len(FEATURES), "coef": coef,
                                   "intercept": 0.0}})


def test_model_orders_by_its_score_and_explains_with_feature_names():
    items, signals, intent, sigs = candidates()
    x = candidate_features(items, signals, query="Which dog did Ana get recently?", intent=intent, signals_of=sigs)
    model = logistic_model({"dense_score": 5.0, "named_speaker": 1.0, "superseded": -2.0})
    out = order_by_model(items, x, model.score(x), model.contributions, explain=2)
    assert [it.event.id for it in out] == [1, 2, 3]  # one signal was sure: dense 0.54 beats RRF's first
    learned = out[0].stages["learned"]
    assert learned["rank_before"] == 2 and learned["rank_after"] == 1
    assert [t["feature"] for t in learned["top"][:2]] == ["dense_score", "named_speaker"]
    assert len(learned["top"]) == 3 and all(t["feature"] in FEATURES for t in learned["top"])
    assert learned["top"][0]["contribution"] == pytest.approx(5.0 * 0.54)
    assert "top" not in out[2].stages["learned"]  # only the first `explain` are explained


def test_priors_on_top_lift_the_turn_in_the_time_window_and_say_so():
    """Two candidates the model scores alike: with priors, the one inside the question's time window
    (×1.3) and surprising (σ 1: ×1.2) goes first, and its explanation carries the priors' part."""
    x = np.zeros((2, len(FEATURES)))
    col = FEATURES.index
    x[1, col("in_window")] = 1.0
    x[1, col("surprise")] = 1.0
    x[0, col("surprise")] = -3.0  # a negative σ is no factor, not a penalty
    boost = prior_boost(x)
    assert boost[0] == 0.0 and boost[1] == pytest.approx(np.log(1.3) + np.log(1.2))
    items = [RankedItem(SimpleNamespace(id=i), 1.0 - i / 10, {}) for i in (1, 2)]
    plain = order_by_model(list(items), x, np.array([0.5, 0.45]), None, explain=0)
    assert [it.event.id for it in plain] == [1, 2] and "priors" not in plain[1].stages["learned"]
    lifted = order_by_model(list(items), x, np.array([0.5, 0.45]), None, explain=0, priors=boost)
    assert [it.event.id for it in lifted] == [2, 1]
    assert lifted[0].stages["learned"]["priors"] == pytest.approx(boost[1], abs=1e-6)
    assert "priors" not in lifted[1].stages["learned"]


def test_a_superseded_turn_is_lowered_only_for_a_knowledge_update_question():
    x = np.zeros((2, len(FEATURES)))
    x[:, FEATURES.index("superseded")] = 1.0
    x[1, FEATURES.index("intent_knowledge_update")] = 1.0
    assert prior_boost(x).tolist() == pytest.approx([0.0, np.log(0.85)])


def test_priors_on_top_take_the_requests_strengths_and_switches():
    """The priors on the learned score read the request's recipe, as the reweight does: its asker and
    speaker betas, and nothing from a factor switched off."""
    from app.domain.retrieval.ranking import reweight_config

    x = np.zeros((3, len(FEATURES)))
    x[0, FEATURES.index("asker_turn")] = 1.0
    x[1, FEATURES.index("named_speaker")] = 1.0
    default = prior_boost(x, reweight_config(Recipe()))
    assert default[0] == pytest.approx(np.log1p(Recipe().asker_beta)) and default[2] == 0.0
    assert default[1] == pytest.approx(np.log1p(Recipe().speaker_beta))
    stronger = prior_boost(x, reweight_config(Recipe(asker_beta=3.0, speaker_beta=0.5)))
    assert stronger[:2] == pytest.approx([np.log(4.0), np.log(1.5)])
    assert prior_boost(x, reweight_config(Recipe(asker=False, speaker_beta=0.5)))[0] == 0.0
    assert prior_boost(x, reweight_config(Recipe(asker_beta=0.0)))[0] == 0.0


def test_a_model_for_other_features_is_refused():
    with pytest.raises(FusionModelUnavailable):
        FusionRanker({"kind": "logistic", "features": ["a"], "model": {}})


@pytest.mark.skipif(not MODEL_FILE.exists(), reason="no fusion model shipped yet")
def test_shipped_model_loads_and_scores_deterministically():
    doc = json.loads(MODEL_FILE.read_text())
    assert doc["features"] == list(FEATURES) and doc["trained_on"]["locomo"] and doc["trained_on"]["beam"]
    assert not set(doc["trained_on"]["locomo"]) & {"conv-43", "conv-44", "conv-47"}  # never on validation
    model = FusionRanker.load(MODEL_FILE)
    items, signals, intent, sigs = candidates()
    x = candidate_features(items, signals, query="Which dog did Ana get recently?", intent=intent, signals_of=sigs)
    first, again = model.score(x), FusionRanker.load(MODEL_FILE).score(x)
    assert np.array_equal(first, again) and np.all(np.isfinite(first))
    contrib = model.contributions(x)
    assert contrib.shape == (3, len(FEATURES) + 1)
    assert np.allclose(contrib.sum(axis=1), first, atol=1e-6)


def test_recipe_has_the_learned_stage():
    assert "learned" in Recipe.stages() and Recipe.setting("learned") == "learned_enabled"


@pytest.mark.skipif(not MODEL_FILE.exists(), reason="no fusion model shipped yet")
@pytest.mark.parametrize("elsewhere", [0, 50])
def test_shipped_model_puts_the_answering_turn_above_its_neighbours(elsewhere):
    """Three statements a minute apart, one of them the answer by a wide dense margin: the turns on
    either side of it must not outrank it for sitting next to it, whether they are the whole
    conversation or it holds `elsewhere` weaker candidates said on other days."""
    t0 = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
    texts = [("Maya", "I adopted a golden retriever puppy named Biscuit last weekend.", 0.191),
             ("Leo", "My sister is getting married in Lisbon this October.", 0.491),
             ("Maya", "We repainted the kitchen a pale shade of green.", 0.095)]
    texts += [("Leo", f"Another day, another note ({k}).", 0.05 + 0.01 * (k % 10)) for k in range(elsewhere)]
    evs = [ev(11 + i, sp, text, t0 + timedelta(minutes=i) if i < 3 else t0 - timedelta(days=i))
           for i, (sp, text, _) in enumerate(texts)]
    for e in evs:
        e.conversation_id = "c"
    order = sorted(range(len(texts)), key=lambda i: -texts[i][2])
    items = [RankedItem(evs[i], 1.0 / (60 + r), {"dense": {"rank": r, "score": texts[i][2]}})
             for r, i in enumerate(order, start=1)]
    signals = {"dense": [(evs[i].id, texts[i][2]) for i in order]}
    x = candidate_features(items, signals, query="Where is the wedding?", intent=None, signals_of={})
    from app.domain.retrieval.ranking import reweight_config

    scores = FusionRanker.load(MODEL_FILE).score(x) + prior_boost(x, reweight_config(Recipe()))
    assert items[int(np.argmax(scores))].event.content.startswith("My sister is getting married")
