"""A claim whose words name the day it takes effect keeps that day (#19): /timeline's `valid_from`,
stored by the consolidation layer and kept across an incremental run; null when the claim holds
from the day it was said."""
from __future__ import annotations

from tests.integration.layers_wiring_support import build_all, post_conversation
from tests.support import auth

TURNS = [
    ("Ana", "I live in Boston and I work at Harbor Bank.", "2024-04-01T09:00:00Z"),
    ("Ben", "How is the job hunt going?", "2024-04-20T09:00:00Z"),
    ("Ana", "I got the offer! I start at Northwind Labs on June 3.", "2024-04-20T09:01:00Z"),
]


def _timeline(client, key, conv):
    r = client.get(f"/v1/conversations/{conv}/timeline", headers=auth(key))
    assert r.status_code == 200, r.text
    return r.json()


def test_a_named_start_day_is_the_claims_valid_from(engine, client):
    from tests.support import new_tenant

    _, key = new_tenant(engine)
    pks = post_conversation(client, key, "dated", TURNS)
    build_all(pks)
    body = _timeline(client, key, "dated")
    works = {a["value"]: a for a in body["assertions"] if a["attribute"] == "works_at"}
    assert works["Northwind Labs"]["valid_from"] == "2024-06-03"
    assert works["Northwind Labs"]["time"].startswith("2024-04-20")  # said then, takes effect later
    assert works["Harbor Bank"]["valid_from"] is None  # holds from the day it was said
    assert works["Harbor Bank"]["superseded_by"] == works["Northwind Labs"]["id"]
    schema = client.get("/openapi.json").json()["components"]["schemas"]["AssertionOut"]["properties"]
    assert schema["valid_from"]["anyOf"][0] == {"type": "string", "format": "date"}


def test_valid_from_survives_an_incremental_run(engine, client):
    from tests.support import new_tenant

    tid, key = new_tenant(engine)
    first = post_conversation(client, key, "dated-inc", TURNS[:1])
    build_all(first)
    events = [{"conversation_id": "dated-inc", "event_id": str(i + 1), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(TURNS[1:])]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    stats = build_all([x["id"] for x in r.json()["results"]])
    assert stats["consolidate"]["done"] == 1
    with engine.connect() as conn:  # the second batch extended the layer's state: no recompute
        run = conn.exec_driver_sql("SELECT stats->>'run' FROM layer_runs WHERE tenant_id = %s AND "
                                   "conversation_id = 'dated-inc' AND layer = 'consolidate'", (tid,)).scalar_one()
    assert run == "incremental"
    works = {a["value"]: a for a in _timeline(client, key, "dated-inc")["assertions"] if a["attribute"] == "works_at"}
    assert works["Northwind Labs"]["valid_from"] == "2024-06-03" and works["Harbor Bank"]["valid_from"] is None
