"""The learned reader of names on the timeline a user opens (/v1/conversations/{id}/timeline): a claim
the rules do not know the form of ("I'm on earlies at Penhallow Infirmary") is there, the layer's
version names the model, and the setting switches it off."""
from __future__ import annotations

from app.settings import get_settings
from tests.integration.layers_wiring_support import build_all
from tests.support import auth

TURNS = [
    ("Noor", "Morning! I'm on earlies at Penhallow Infirmary this week, so no coffee till Friday.",
     "2025-02-03T08:00:00Z"),
    ("Tom", "Ha. No move for us either, I'm staying put in Calder Vale after all.", "2025-02-03T08:01:00Z"),
]


def _timeline(client, key, conv: str) -> dict:
    events = [{"conversation_id": conv, "event_id": f"{conv}-{i}", "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(TURNS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code in (200, 201), r.text
    build_all([x["id"] for x in r.json()["results"]])
    r = client.get(f"/v1/conversations/{conv}/timeline", headers=auth(key))
    assert r.status_code == 200, r.text
    return r.json()


def test_the_timeline_holds_what_the_span_model_read(client, tenant):
    _, key = tenant
    body = _timeline(client, key, "spans-on")
    claims = {(a["entity"], a["attribute"], a["value"]) for a in body["assertions"]}
    assert {("Noor", "works_at", "Penhallow Infirmary"), ("Tom", "lives_in", "Calder Vale")} <= claims
    assert "+spans/" in body["layer_version"]


def test_the_setting_leaves_the_rules_alone(client, tenant, monkeypatch):
    _, key = tenant
    monkeypatch.setenv("PALIMPSEST_SPAN_CLAIMS", "false")
    get_settings.cache_clear()
    try:
        body = _timeline(client, key, "spans-off")
    finally:
        monkeypatch.delenv("PALIMPSEST_SPAN_CLAIMS")
        get_settings.cache_clear()
    assert not {a["value"] for a in body["assertions"]} & {"Penhallow Infirmary", "Calder Vale"}
    assert "+spans/" not in body["layer_version"]
