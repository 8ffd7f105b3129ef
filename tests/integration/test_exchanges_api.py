"""A request for an account of what was discussed, through /v1/query: each of the best turns comes with
its exchange (app/domain/retrieval/exchanges.py). The user names the topic; the assistant's reply,
which holds the advice in other words, comes in right after the user's turn that asked for it."""
from __future__ import annotations

from tests.support import auth
from tests.integration.layers_wiring_support import build_all

TURNS = [
    ("user", "I need new running shoes for my knee, I run about 30 km a week on the road.", "2024-03-04T09:00:00Z"),
    ("assistant", "With that mileage and a sore knee, look for a cushioned, stable trainer: a wide base, a firm "
     "heel counter and a moderate drop. Have your gait checked in a store and rotate two pairs.",
     "2024-03-04T09:01:00Z"),
    ("user", "Thanks. Separately, what should I cook for dinner tonight?", "2024-03-04T09:05:00Z"),
    ("assistant", "A quick lentil curry with rice takes about thirty minutes.", "2024-03-04T09:06:00Z"),
    ("user", "Update on the running shoes: the store said I overpronate.", "2024-04-10T18:00:00Z"),
    ("assistant", "Then a stability model with a medial post suits you; replace them every 600 to 800 km.",
     "2024-04-10T18:01:00Z"),
]
QUESTION = "Can you give me a summary of the advice about my running shoes?"


def load(client, key) -> dict[str, int]:
    events = [{"conversation_id": "ex", "event_id": f"ex-{i}", "speaker": s, "role": s, "content": c,
               "occurred_at": t} for i, (s, c, t) in enumerate(TURNS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code in (200, 201), r.text
    pks = {f"ex-{i}": x["id"] for i, x in enumerate(r.json()["results"])}
    build_all(list(pks.values()))
    return pks


def _ask(client, key, **extra) -> dict:
    r = client.post("/v1/query", headers=auth(key), json={"query": QUESTION, "conversation_id": "ex",
                                                          "top_k": 6} | extra)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_summary_request_gets_each_users_turn_with_the_reply_it_got(client, tenant):
    _, key = tenant
    pks = load(client, key)
    items = _ask(client, key)["items"]
    ids = [it["event_id"] for it in items]
    for asked, reply in (("ex-0", "ex-1"), ("ex-4", "ex-5")):
        assert ids.index(reply) == ids.index(asked) + 1, ids
        assert items[ids.index(reply)]["stages"]["exchange"]["with"] == pks[asked]
    # the user's turn does not bring the assistant's turn before it (the end of the exchange before)
    assert [it["event_id"] for it in items if it["stages"].get("exchange", {}).get("with") == pks["ex-4"]] == ["ex-5"]
    assert "exchange" not in items[ids.index("ex-4")]["stages"]


def test_the_stage_is_a_switch_and_the_filters_hold(client, tenant):
    _, key = tenant
    load(client, key)
    off = _ask(client, key, pipeline={"exchanges": False})
    assert not any("exchange" in it["stages"] for it in off["items"])
    assert off["pipeline"]["exchanges"] is False
    # a request that may see the user's turns only gets no reply read in from the conversation
    users = _ask(client, key, speakers=["user"])
    assert {it["event_id"] for it in users["items"]} <= {"ex-0", "ex-2", "ex-4"}
