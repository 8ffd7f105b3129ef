"""Intent routing: keyword rules, prototypes (real embedder), weight profiles, and time windows
resolved against a fixed reference time. The LLM tier over HTTP is in tests/integration/test_intent_llm.py."""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from app.domain.retrieval.intent import IntentRouter
from app.domain.retrieval.intent_rules import (
    LABELS,
    PROFILES,
    SIGNALS,
    keyword_scores,
    profile_weights,
    prototype_decision,
)
from app.domain.timeexpr import in_window, resolve_time_window

UTC = timezone.utc
REF = datetime(2024, 6, 20, 15, 30, tzinfo=UTC)


def d(*a):
    return datetime(*a, tzinfo=UTC)


# ---------------------------------------------------------------- tier 1


@pytest.mark.parametrize("q,label", [
    ("When did Ana move to Denver?", "temporal"),
    ("How long has Ben been married?", "temporal"),
    ("What year did they open the bakery?", "temporal"),
    ("Why did Ana move to Denver?", "causal"),
    ("What led Melanie to start painting?", "causal"),
    ("Where does Ana live now?", "knowledge_update"),
    ("Is Ben still working at the hospital?", "knowledge_update"),
    ("What is Ben's favorite food?", "preference"),
    ("What kind of music does Ben like?", "preference"),
    ("Would Caroline likely enjoy a hiking trip?", "multi_hop"),
    ("What do Ana and Ben have in common?", "multi_hop"),
    ("Who is Ana's sister?", "entity_centric"),
    ("What is the name of Ben's dog?", "entity_centric"),
])
def test_keyword_tier(q, label):
    intent = IntentRouter().route(q, reference_time=REF)
    assert intent.label == label, intent.evidence
    assert intent.tier == "keyword" and intent.confidence >= 0.75
    assert set(intent.weights) == set(SIGNALS)


def test_no_keyword_no_encoder_no_llm_is_general():
    intent = IntentRouter().route("Tell me about the trip to the lake.", reference_time=REF)
    assert (intent.label, intent.tier, intent.confidence) == ("general", "default", 0.0)
    assert intent.weights == PROFILES["general"]
    assert intent.time_window is None


def test_multi_hop_suppresses_entity_centric():
    scores, fired = keyword_scores("Based on what she said, who is Ana's closest friend likely to be?")
    assert "multi_hop" in scores and "entity_centric" not in scores
    assert any(f.startswith("entity_centric") for f in fired)  # it fired, and was suppressed


def test_weight_profiles_cover_every_label_and_blend_by_confidence():
    assert set(PROFILES) == set(LABELS)
    assert all(set(p) == set(SIGNALS) for p in PROFILES.values())
    assert PROFILES["temporal"]["temporal"] > PROFILES["general"]["temporal"]
    assert PROFILES["knowledge_update"]["recency"] > PROFILES["general"]["recency"]
    assert PROFILES["multi_hop"]["graph"] > PROFILES["general"]["graph"]
    half = profile_weights("temporal", 0.5)
    assert half["temporal"] == pytest.approx((PROFILES["temporal"]["temporal"] + PROFILES["general"]["temporal"]) / 2)
    assert profile_weights("temporal", 1.0) == PROFILES["temporal"]


# ---------------------------------------------------------------- time windows


@pytest.mark.parametrize("q,ref,window", [
    ("What did Ana do last May?", REF, (d(2024, 5, 1), d(2024, 6, 1))),
    ("What did Ana do last May?", d(2024, 5, 10), (d(2023, 5, 1), d(2023, 6, 1))),  # said in May: a year back
    ("What did Ana do last May?", d(2024, 3, 1), (d(2023, 5, 1), d(2023, 6, 1))),
    ("Where did they go last summer?", d(2023, 8, 15), (d(2022, 6, 1), d(2022, 9, 1))),  # this one isn't over
    ("Where did they go last summer?", d(2023, 10, 1), (d(2023, 6, 1), d(2023, 9, 1))),
    ("What happened in May 2023?", REF, (d(2023, 5, 1), d(2023, 6, 1))),
    ("What did Ben eat yesterday?", REF, (d(2024, 6, 19), d(2024, 6, 20))),
    ("What did she do in 2022?", REF, (d(2022, 1, 1), d(2023, 1, 1))),
    ("What did she do between March and June 2023?", REF, (d(2023, 3, 1), d(2023, 7, 1))),
    ("What did she read last week?", REF, (d(2024, 6, 10), d(2024, 6, 17))),  # 20 June 2024 is a Thursday
    ("What did Ana do 2 months ago?", REF, (d(2024, 4, 1), d(2024, 5, 1))),
    ("What did they do on 3 July?", REF, (d(2023, 7, 3), d(2023, 7, 4))),  # not yet this year: last year's
    ("What did Joanna do in early June?", REF, (d(2024, 6, 1), d(2024, 6, 11))),
    ("What did she do before 2022?", REF, (None, d(2022, 1, 1))),
    ("What has he done since March 2024?", REF, (d(2024, 3, 1), None)),
])
def test_time_windows(q, ref, window):
    got = resolve_time_window(q, ref)
    assert got is not None, q
    assert got[0] == window


def test_no_window_without_a_time_expression():
    assert resolve_time_window("When did Ana move to Denver?", REF) is None
    assert resolve_time_window("May I ask what Ana cooked?", REF) is None  # "May" the verb
    assert resolve_time_window("Why did she sell 3 of her paintings?", REF) is None


def test_window_in_the_intent_and_membership():
    intent = IntentRouter().route("What did Ana cook last May?", reference_time=REF)
    assert intent.label == "temporal" and intent.time_expression == "last May"
    assert intent.in_window(d(2024, 5, 31, 23, 59)) and not intent.in_window(d(2024, 6, 1))
    assert in_window(datetime(2024, 5, 2), intent.time_window)  # naive = UTC
    assert not in_window(None, intent.time_window)
    assert intent.to_dict()["time_window"] == ["2024-05-01T00:00:00+00:00", "2024-06-01T00:00:00+00:00"]


# ---------------------------------------------------------------- tier 2


def test_prototype_decision_needs_threshold_and_margin():
    assert prototype_decision({"temporal": 0.70, "causal": 0.50}) == "temporal"
    assert prototype_decision({"temporal": 0.70, "causal": 0.65}) is None  # margin 0.05 < 0.10
    assert prototype_decision({"temporal": 0.50, "causal": 0.10}) is None  # under θ = 0.55
    assert prototype_decision({}) is None


def test_prototype_tier_with_the_real_embedder(embedder):
    router = IntentRouter(embedder.encode)
    hit = router.route("What kind of food does Ana usually cook?", reference_time=REF)
    assert (hit.label, hit.tier) == ("preference", "prototype")
    assert hit.confidence > 0.55
    assert hit.scores["preference"] - sorted(hit.scores.values())[-2] >= 0.10
    miss = router.route("Bananas are yellow.", reference_time=REF)
    assert (miss.label, miss.tier) == ("general", "default")
    # the query vector can be passed in (the dense stage already has it): same answer
    qv = embedder.encode(["What kind of food does Ana usually cook?"])[0]
    assert router.route("What kind of food does Ana usually cook?", query_vec=qv).label == "preference"


def test_prototype_bank_is_embedded_once():
    calls = []

    def encode(texts):
        calls.append(len(texts))
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 8)).astype(np.float32)

    router = IntentRouter(encode)
    for _ in range(3):
        router.route("Some statement without cues.")
    bank = [c for c in calls if c > 1]
    assert len(bank) == 1 and bank[0] > 20  # the bank once
    assert calls.count(1) == 3  # then one query per call
