"""The README's example, as a newcomer runs it: two changes in one conversation, then the question
the README asks. The current value comes first; the replaced one is kept, marked superseded."""
from __future__ import annotations

from tests.integration.layers_wiring_support import build_all
from tests.support import auth

EVENTS = [
    {"conversation_id": "readme-demo", "event_id": "1", "speaker": "Ana",
     "content": "I live in Boston, and I work at Harbor Bank.", "occurred_at": "2023-11-20T09:00:00Z"},
    {"conversation_id": "readme-demo", "speaker": "Ben", "content": "My dog Rex loves the snow.",
     "occurred_at": "2023-11-20T09:01:00Z"},
    {"conversation_id": "readme-demo", "event_id": "3", "speaker": "Ana",
     "content": "Big news: we moved to Denver last spring, and I started at Stripe.",
     "occurred_at": "2024-06-02T10:00:00Z"}]


def _ask(client, key, query: str, **pipeline) -> dict:
    body = {"query": query, "conversation_id": "readme-demo", "token_budget": 500}
    if pipeline:
        body["pipeline"] = pipeline
    r = client.post("/v1/query", headers=auth(key), json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_readme_question_gets_the_current_city_first(client, tenant):
    _, key = tenant
    r = client.post("/v1/events", headers=auth(key), json={"events": EVENTS})
    assert r.status_code == 200, r.text
    build_all([x["id"] for x in r.json()["results"]])

    out = _ask(client, key, "Where does Ana live now?")
    assert out["intent"]["label"] == "knowledge_update"
    assert out["abstain"] is False
    first, second = out["items"][0], out["items"][1]
    assert first["event_id"] == "3" and "Denver" in first["content"]
    assert first["stages"]["current_first"]["supersedes"] == second["id"]
    assert second["event_id"] == "1" and second["stages"]["superseded_by"]["id"] == first["id"]
    boston = next(line for line in out["context"].splitlines() if "Boston" in line)
    assert "[superseded by a later statement of 2024-06-02]" in boston
    assert any("Denver" in line for line in out["context"].splitlines())

    # a question about a move is one about the current value too
    assert _ask(client, key, "Which city did Ana move to?")["items"][0]["event_id"] == "3"
    # the stage can be switched off per request (the benchmark's ablation)
    off = _ask(client, key, "Where does Ana live now?", current_first=False)
    assert all("current_first" not in it["stages"] for it in off["items"])
    assert off["pipeline"]["current_first"] is False
