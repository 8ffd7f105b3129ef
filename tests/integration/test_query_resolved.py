"""What the layers resolved, as a user of /v1/query and the timeline sees it: a team change and a
cancelled plan supersede what came before, the context dates relative expressions beside the words
and marks the replaced turn, and the response says which item a later statement replaced."""
from __future__ import annotations

from tests.support import auth
from tests.integration.layers_wiring_support import build_all

TURNS = [
    ("Rosa", "I work at Quillworks, mostly on the billing team.", "2024-01-08T09:00:00Z"),
    ("Ama", "Nice. Are you and Tobias still doing the Reykjavík trip?", "2024-01-08T09:01:00Z"),
    ("Rosa", "Yes! We're planning a trip to Reykjavík at the end of March.", "2024-01-08T09:02:00Z"),
    ("Rosa", "Big news: I switched to the search team last Monday.", "2024-02-14T18:00:00Z"),
    ("Ama", "Congrats! How is the new team?", "2024-02-14T18:01:00Z"),
    ("Rosa", "Sadly we cancelled the Reykjavík trip, Tobias has to work.", "2024-02-14T18:02:00Z"),
]


def load(client, key) -> list[int]:
    events = [{"conversation_id": "qr", "event_id": f"qr-{i}", "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(TURNS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code in (200, 201), r.text
    return [x["id"] for x in r.json()["results"]]


def test_timeline_holds_the_team_change_and_the_cancelled_plan(client, tenant):
    _, key = tenant
    build_all(load(client, key))
    body = client.get("/v1/conversations/qr/timeline", headers=auth(key)).json()
    team = [a for a in body["assertions"] if a["attribute"] == "works_in"]
    assert [a["value"] for a in team] == ["billing team", "search team"]
    assert team[0]["superseded_by"] == team[1]["id"]
    trip = [a for a in body["assertions"] if a["attribute"] == "plan:trip"]
    assert [(a["value"], a["negated"]) for a in trip] == [("Reykjavík", False), ("Reykjavík", True)]
    assert trip[0]["superseded_by"] == trip[1]["id"]


def test_context_dates_the_words_and_marks_the_replaced_turn(client, tenant):
    _, key = tenant
    pks = load(client, key)
    build_all(pks)
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "Which team does Rosa work on now?", "conversation_id": "qr", "top_k": 6}).json()
    lines = out["context"].splitlines()
    old = next(line for line in lines if "billing team" in line)
    assert old.endswith("[superseded by a later statement of 2024-02-14]")
    new = next(line for line in lines if "search team" in line)
    assert "last Monday [12 February 2024]" in new and "superseded" not in new
    item = next(it for it in out["items"] if it["event_id"] == "qr-0")
    assert item["stages"]["superseded_by"]["id"] == pks[3]
    plan = client.post("/v1/query", headers=auth(key), json={
        "query": "When is the Reykjavík trip?", "conversation_id": "qr", "top_k": 6}).json()["context"]
    assert "at the end of March [late March 2024]" in plan


PARTY = [
    ("Anouk", "Mum turns seventy on the 22nd of November. Party or no party?", "2025-09-28T20:00:00Z"),
    ("Theo", "Party, obviously. Somewhere small, she hates a fuss.", "2025-09-28T20:01:00Z"),
    ("Anouk", "The 22nd is a Saturday, so lunch at the Olive Tree?", "2025-09-28T20:02:00Z"),
    ("Theo", "Lunch works. Aunt Odile flies in the night before.", "2025-09-28T20:03:00Z"),
]


def test_context_dates_a_turn_with_the_turns_before_it(client, tenant):
    """"The 22nd" restating a date named two turns before is that date in the context (read alone it
    would be 22 October), and "the night before" counts back from it."""
    _, key = tenant
    events = [{"conversation_id": "party", "event_id": f"party-{i}", "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(PARTY)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code in (200, 201), r.text
    build_all([x["id"] for x in r.json()["results"]])
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "When is the lunch at the Olive Tree for Mum's birthday?", "conversation_id": "party",
        "top_k": 4}).json()
    lines = out["context"].splitlines()
    lunch = next(line for line in lines if "Olive Tree" in line)
    assert "The 22nd [22 November 2025]" in lunch
    odile = next(line for line in lines if "Odile" in line)
    assert "the night before [21 November 2025]" in odile
