"""The learned fusion through the query endpoint: on, each item says which features placed it; off,
the ranking is today's weighted RRF and reweight, with no trace of the model."""
from __future__ import annotations

import math

import pytest

from app.adapters.fusion_ranker import MODEL_FILE
from app.domain.retrieval.features import FEATURES
from tests.support import auth

CONV = [
    ("Ana", "I adopted a greyhound named Biscuit last week.", "2024-05-20T10:00:00Z"),
    ("Ben", "My sister is moving to Lisbon next month.", "2024-05-21T10:01:00Z"),
    ("Ana", "Biscuit sleeps all day on the sofa.", "2024-05-21T10:02:00Z"),
    ("Ben", "I started a new job at the bakery on Main Street.", "2024-05-22T09:00:00Z"),
    ("Ana", "Congrats on the bakery job! What do you bake?", "2024-05-22T09:01:00Z"),
    ("Ben", "Mostly sourdough bread and cinnamon rolls.", "2024-05-22T09:02:00Z"),
]

pytestmark = pytest.mark.skipif(not MODEL_FILE.exists(), reason="no fusion model shipped")


def ask(client, key, pipeline):
    r = client.post("/v1/query", headers=auth(key), json={
        "query": "Which dog did Ana adopt recently?", "conversation_id": "pets", "top_k": 5, "pipeline": pipeline})
    assert r.status_code == 200, r.text
    return r.json()


def test_learned_on_explains_each_item_and_off_is_todays_ranking(client, tenant):
    _, key = tenant
    events = [{"conversation_id": "pets", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(CONV)]
    assert client.post("/v1/events", headers=auth(key), json={"events": events}).status_code == 200

    on = ask(client, key, {"learned": True})
    assert on["pipeline"]["learned"] is True and on["items"]
    assert on["items"][0]["event_id"] == "0"  # the turn that answers it
    for pos, it in enumerate(on["items"], start=1):
        learned = it["stages"]["learned"]
        assert learned["rank_after"] == pos
        assert len(learned["top"]) == 3 and all(t["feature"] in FEATURES for t in learned["top"])
    scores = [it["score"] for it in on["items"]]
    assert scores == sorted(scores, reverse=True)

    off = ask(client, key, {"learned": False})
    assert off["pipeline"]["learned"] is False
    assert all("learned" not in it["stages"] for it in off["items"])
    assert all("fusion" in it["stages"] for it in off["items"])
    scores = [it["score"] for it in off["items"]]
    assert scores == sorted(scores, reverse=True)


def test_priors_on_top_are_the_default_shown_per_item_and_can_be_switched_off(client, tenant):
    """The question names Ana: with the priors (the default) each of her turns is lifted by at least
    the named-speaker factor (×1.25) over the model's own score, and says by how much; off, no item
    carries a prior and each score is the model's alone."""
    _, key = tenant
    events = [{"conversation_id": "pets", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(CONV)]
    assert client.post("/v1/events", headers=auth(key), json={"events": events}).status_code == 200

    default = ask(client, key, {})
    off = ask(client, key, {"learned_priors": False})
    assert default["pipeline"]["learned_priors"] is True and off["pipeline"]["learned_priors"] is False
    assert all("priors" not in it["stages"]["learned"] for it in off["items"])
    plain = {it["event_id"]: it["score"] for it in off["items"]}
    anas = [it for it in default["items"] if it["speaker"] == "Ana"]
    assert anas
    for it in anas:
        priors = it["stages"]["learned"]["priors"]
        assert priors >= math.log(1.25) - 1e-6
        if it["event_id"] in plain:
            assert it["score"] == pytest.approx(plain[it["event_id"]] + priors, abs=1e-5)
