"""The layer endpoints over HTTP: /episodes, /timeline, /graph, /speakers; tenant isolation; and the
per-layer pending counts of /status going to 0 as the jobs run."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support import auth
from tests.integration.layers_wiring_support import build_all, post_conversation

ENDPOINTS = ("episodes", "timeline", "graph", "speakers")
LAYERS = ("embed", "gate", "consolidate", "surprise", "engrams", "graph")


@pytest.fixture(scope="module")
def conv(engine, client):
    from tests.support import new_tenant

    tid, key = new_tenant(engine)
    pks = post_conversation(client, key, "api")
    st = client.get("/v1/conversations/api/status", headers=auth(key)).json()
    build_all(pks)
    return tid, key, pks, st


def get(client, key, path, **params):
    return client.get(f"/v1/conversations/api/{path}", headers=auth(key), params=params)


def test_status_shows_each_layer_pending_then_zero(client, conv):
    _, key, pks, before = conv
    n = len(pks)
    assert before["pending"] == {"embed": n, "gate": 0, "consolidate": n, "surprise": n, "engrams": n, "graph": n}
    after = client.get("/v1/conversations/api/status", headers=auth(key)).json()
    assert after["pending"] == {layer: 0 for layer in LAYERS} and after["events"] == n


def test_episodes_endpoint(client, conv):
    _, key, pks, _ = conv
    body = get(client, key, "episodes").json()
    assert body["conversation_id"] == "api" and body["layer_version"].startswith("consolidation/")
    assert [e["event_ids"] for e in body["episodes"]] == [pks[:5], pks[5:]]
    assert [e["index"] for e in body["episodes"]] == [0, 1]
    assert body["episodes"][1]["boundary"] == "gap" and body["episodes"][1]["speakers"] == ["Ana", "Ben"]
    assert body["episodes"][0]["summary"] and body["episodes"][0]["start"] == "2023-05-08T10:00:00Z"


def test_timeline_endpoint(client, conv):
    _, key, pks, _ = conv
    body = get(client, key, "timeline").json()
    lives = [a for a in body["assertions"] if a["entity"] == "Ana" and a["attribute"] == "lives_in"]
    assert [a["value"] for a in lives] == ["Boston", "Boston", "Denver", "Denver"]
    assert lives[0]["superseded_by"] == lives[2]["id"] and lives[2]["superseded_by"] is None
    c = next(c for c in body["contradictions"] if c["attribute"] == "lives_in")
    assert (c["earlier_value"], c["later_value"], c["later_event_id"], c["kind"]) == ("Boston", "Denver", pks[5], "update")
    only = get(client, key, "timeline", entity="ana", attribute="works_at").json()
    assert {a["value"] for a in only["assertions"]} == {"Google", "Stripe"}
    assert all(c["attribute"] == "works_at" for c in only["contradictions"])


def test_graph_endpoint(client, conv):
    _, key, pks, _ = conv
    body = get(client, key, "graph", entity="Boston", limit=12).json()
    assert body["stats"]["seeds"] == ["en:boston"] and len(body["nodes"]) <= 12
    kinds = {n["kind"] for n in body["nodes"]}
    assert "entity" in kinds and "facet_point" in kinds
    ids = {n["id"] for n in body["nodes"]}
    assert all(e["src"] in ids and e["dst"] in ids for e in body["edges"])
    assert {e["type"] for e in body["edges"]} >= {"belongs_to", "involves_entity"}
    facts = [n for n in body["nodes"] if n["kind"] == "facet_point"]
    assert all(n["event_id"] in pks for n in facts)
    # what the explorer page asks: the entities a question names
    q = get(client, key, "graph", query="Did Ana really move from Boston to Denver?", limit=40).json()
    assert {"en:ana", "en:boston", "en:denver"} <= set(q["stats"]["seeds"])
    assert q["stats"]["conversation"]["edges"]["evolution"] >= 1
    # no names: the most mentioned entities
    top = get(client, key, "graph").json()
    assert top["stats"]["seeds"] and top["stats"]["seeds"][0] == "en:ana"
    assert get(client, key, "graph", entity="Nobody Here").json()["nodes"] == []
    assert get(client, key, "graph", limit=0).status_code == 422
    assert get(client, key, "graph", entity="a\x00b").status_code == 422
    r = get(client, key, "graph", entitty="Boston")  # a typo is refused, not ignored
    assert r.status_code == 422 and r.json()["fields"][0]["path"] == "entitty"


def test_speakers_endpoint(client, conv):
    _, key, _, _ = conv
    body = get(client, key, "speakers").json()
    by = {p["speaker"]: p for p in body["speakers"]}
    assert by["Ana"]["message_count"] == 5 and by["Ben"]["message_count"] == 3
    assert by["Ana"]["style_vector"] is None and by["Ana"]["topics"]
    assert by["Ana"]["attributes"]["works_at"] == ["Stripe"]
    vec = get(client, key, "speakers", include_vectors="true").json()["speakers"][0]["style_vector"]
    assert len(vec) == 256 and np.linalg.norm(vec) == pytest.approx(1.0, abs=1e-4)


def test_pinned_layer_version(client, conv):
    _, key, _, _ = conv
    current = get(client, key, "episodes").json()["layer_version"]
    assert get(client, key, "episodes", layer_version=current).json()["episodes"]
    missing = get(client, key, "episodes", layer_version="consolidation/0").json()
    assert missing["episodes"] == [] and missing["layer_version"] == "consolidation/0"


def test_other_tenants_and_unknown_conversations_get_404(client, conv, make_tenant):
    _, key, _, _ = conv
    _, other = make_tenant()
    for path in ENDPOINTS:
        r = get(client, other, path)
        assert r.status_code == 404 and r.json()["error"] == "not_found", path
        assert client.get(f"/v1/conversations/nope/{path}", headers=auth(key)).status_code == 404
    # the other tenant's own conversation with the same id is theirs alone
    post_conversation(client, other, "api", [("Zed", "I live in Oslo.", "2024-01-01T00:00:00Z")])
    assert get(client, other, "episodes").json() == {"conversation_id": "api", "layer_version": None, "episodes": [],
                                                     "next_cursor": None}
    assert get(client, other, "timeline").json()["assertions"] == []
    assert get(client, other, "graph", entity="Boston").json()["nodes"] == []
    assert get(client, other, "speakers").json()["speakers"] == []
    assert client.get("/v1/conversations/api/episodes").status_code == 401
