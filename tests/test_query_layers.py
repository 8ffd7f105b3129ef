"""The query path over the ingestion layers: the derived-text and graph signals, the routed intent,
the per-stage trace, and heat bumped by retrieval."""
from __future__ import annotations

from sqlalchemy import text

from tests.conftest import auth
from tests.test_layers_wiring import build_all

TURNS = [
    ("Ana", "Last Saturday I ran my first half marathon in Boulder with my sister Petra.", "2023-05-08T10:00:00Z"),
    ("Ben", "Wow, congratulations! How did Petra do?", "2023-05-08T10:01:00Z"),
    ("Ana", "She beat me by ten minutes, she trains with a club called Summit Striders.", "2023-05-08T10:02:00Z"),
    ("Ben", "I adopted a beagle named Waffles from the shelter.", "2023-05-20T09:00:00Z"),
    ("Ana", "Petra says Summit Striders is looking for new members.", "2023-06-02T18:00:00Z"),
    ("Ben", "Waffles chewed my running shoes, so no club for me.", "2023-06-02T18:01:00Z"),
]


def load(client, key) -> list[int]:
    events = [{"conversation_id": "ql", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(TURNS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    return [x["id"] for x in r.json()["results"]]


def test_derived_dates_and_graph_find_evidence_the_words_do_not_name(client, tenant, engine):
    tid, key = tenant
    pks = load(client, key)
    build_all(pks)
    # "6 May 2023" is never written: the layers resolved "last Saturday" said on 8 May.
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What happened on 6 May 2023?", "conversation_id": "ql",
        "pipeline": {"dense": False, "lexical": False, "graph": False}}).json()
    assert out["items"] and out["items"][0]["event_id"] == "0"
    assert "derived" in out["items"][0]["signals"]

    out = client.post("/v1/query", headers=auth(key), json={
        "query": "Petra", "conversation_id": "ql",
        "pipeline": {"dense": False, "lexical": False, "derived": False}}).json()
    found = {it["event_id"] for it in out["items"]}
    assert {"0", "4"} <= found  # events around the entity Petra, by PageRank over the graph
    assert all("graph" in it["signals"] for it in out["items"])


def test_intent_and_stage_trace_in_the_response(client, tenant):
    _, key = tenant
    pks = load(client, key)
    build_all(pks)
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "When did Ana run the half marathon?", "conversation_id": "ql"}).json()
    assert out["intent"]["label"] == "temporal"
    top = out["items"][0]
    assert top["event_id"] == "0"
    assert top["stages"]["fusion"]["rank"] >= 1 and "lexical" in top["stages"]["fusion"]["weights"]
    off = client.post("/v1/query", headers=auth(key), json={
        "query": "When did Ana run the half marathon?", "conversation_id": "ql",
        "pipeline": {"intent": False}}).json()
    assert off["intent"] is None and off["pipeline"]["intent"] is False


def test_retrieval_bumps_heat(client, tenant, engine):
    tid, key = tenant
    pks = load(client, key)
    build_all(pks)

    def accesses() -> int:
        with engine.connect() as conn:
            return conn.execute(text("SELECT coalesce(sum(access_count), 0) FROM event_signals WHERE event_pk = ANY(:p)"),
                                {"p": pks}).scalar_one()

    before = accesses()
    client.post("/v1/query", headers=auth(key), json={"query": "beagle Waffles", "conversation_id": "ql"})
    assert accesses() > before
