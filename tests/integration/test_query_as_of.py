"""The time anchor over HTTP: "last May" is read from the request's `as_of`, else from the newest event."""
from __future__ import annotations

from tests.integration.layers_wiring_support import build_all
from tests.support import auth

EVENTS = [
    ("Ana", "We went hiking in the hills with the dogs.", "2023-05-14T10:00:00Z"),
    ("Ana", "We went hiking in the hills with the dogs again.", "2024-05-19T10:00:00Z"),
    ("Ben", "Nice, the weather looks good this week.", "2024-06-20T10:00:00Z"),
]


def test_last_may_moves_with_as_of(client, tenant):
    _, key = tenant
    events = [{"conversation_id": "anchor", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(EVENTS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200
    build_all([x["id"] for x in r.json()["results"]])  # embedded and layered, as the worker leaves them
    ask = {"query": "Where did we go hiking last May?", "conversation_id": "anchor", "pipeline": {"rerank": False}}

    def first(body: dict) -> tuple[str, dict]:
        """The turn the question's time window found first (the `temporal` signal), checked to be in
        the context. Which of two same-worded turns the learned ranker puts first is its own business,
        measured on validation (docs/models.md), not this test's."""
        r = client.post("/v1/query", headers=auth(key), json=body)
        assert r.status_code == 200, r.text
        out = r.json()
        in_window = [it for it in out["items"] if it["signals"].get("temporal", {}).get("rank") == 1]
        assert len(in_window) == 1 and in_window[0]["in_context"], out["items"]
        return in_window[0]["event_id"], out

    top, out = first(ask | {"as_of": "2023-08-01T00:00:00Z"})
    assert top == "0"
    assert out["intent"]["time_window"][0].startswith("2023-05-01")
    assert out["as_of"].startswith("2023-08-01") and out["intent"]["reference_time"].startswith("2023-08-01")

    top, out = first(ask | {"as_of": "2024-07-01T12:00:00+02:00"})
    assert top == "1"
    assert out["intent"]["time_window"][0].startswith("2024-05-01")
    assert out["as_of"].startswith("2024-07-01T10:00")  # echoed in UTC

    # without as_of: the newest event (2024-06-20) is the anchor, as before
    top, out = first(ask)
    assert top == "1" and out["as_of"].startswith("2024-06-20")
    assert client.post("/v1/query", headers=auth(key), json=ask | {"as_of": 1690000000}).status_code == 422
