"""The learned fusion through the query endpoint: on, each item says which features placed it; off,
the ranking is today's weighted RRF and reweight, with no trace of the model."""
from __future__ import annotations

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
