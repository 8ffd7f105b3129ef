"""Abstention through the query endpoint (issue #17 item 9): on a small conversation, a question it
never covered abstains and one it covered does not, each with the features and the score that decided
in `relevance`; `abstain_learned: false` goes back to the dense floor."""
from __future__ import annotations

import pytest

from app.adapters.abstain_model import MODEL_FILE, load
from tests.integration.layers_wiring_support import build_all
from tests.support import auth

CONV = [
    ("Ana", "I adopted a greyhound named Biscuit last week.", "2024-05-20T10:00:00Z"),
    ("Ben", "My sister is moving to Lisbon next month.", "2024-05-21T10:01:00Z"),
    ("Ana", "Biscuit sleeps all day on the sofa.", "2024-05-21T10:02:00Z"),
    ("Ben", "I started a new job at the bakery on Main Street.", "2024-05-22T09:00:00Z"),
    ("Ana", "Congrats on the bakery job! What do you bake?", "2024-05-22T09:01:00Z"),
    ("Ben", "Mostly sourdough bread and cinnamon rolls.", "2024-05-22T09:02:00Z"),
    ("Ana", "I finished painting the kitchen blue on Saturday.", "2024-05-25T18:00:00Z"),
    ("Ben", "Blue is a brave choice. Did the landlord mind?", "2024-05-25T18:01:00Z"),
]

pytestmark = pytest.mark.skipif(not MODEL_FILE.exists(), reason="no abstain model shipped")


def ask(client, key, query, pipeline=None):
    r = client.post("/v1/query", headers=auth(key), json={
        "query": query, "conversation_id": "home", "top_k": 5, "pipeline": pipeline or {}})
    assert r.status_code == 200, r.text
    return r.json()


def test_off_topic_abstains_covered_does_not_and_the_floor_switch(client, tenant):
    _, key = tenant
    events = [{"conversation_id": "home", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(CONV)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200
    build_all([x["id"] for x in r.json()["results"]])  # embedded and every layer built, as a worker would
    model = load()

    off = ask(client, key, "Which football team do I support?")
    rel = off["relevance"]
    assert off["abstain"] is True and off["items"], rel  # abstaining still returns what was found
    assert rel["abstain_score"] >= rel["abstain_threshold"] == pytest.approx(model.threshold, abs=1e-4)
    assert set(model.features) <= set(rel)  # every feature the model read is shown
    assert rel["coverage"] < 0.5  # "football", "team", "support": none was said

    covered = ask(client, key, "What is the name of the greyhound Ana adopted?")
    rel = covered["relevance"]
    assert covered["abstain"] is False, rel
    assert rel["abstain_score"] < rel["abstain_threshold"]
    assert rel["coverage"] == 1.0 and covered["items"][0]["event_id"] == "0"

    floor = ask(client, key, "Which football team do I support?", {"abstain_learned": False})
    assert "abstain_score" not in floor["relevance"] and "coverage" not in floor["relevance"]
    assert floor["abstain"] is (floor["relevance"]["dense"] < floor["pipeline"]["abstain_dense_floor"])
