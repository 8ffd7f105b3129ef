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
    # a time range that leaves out the turns "the night before" counts back from: the query holds none of
    # them, and the turn still reads as the layers read it with every turn before it (graph/5 keeps each
    # turn's mentions)
    alone = client.post("/v1/query", headers=auth(key), json={
        "query": "When does Aunt Odile fly in?", "conversation_id": "party",
        "time_range": {"start": "2025-09-28T20:03:00Z"}, "pipeline": {"neighbours": 0}}).json()
    assert [c["event_id"] for c in alone["context_items"]] == ["party-3"]
    assert "the night before [21 November 2025]" in alone["context"]



LAUNCH = [
    ("Ines", "The shop's launch party is on the 20th of May, save the date!", "2025-03-02T19:00:00Z", "plans"),
    ("Kofi", "In the diary. Want me to sort the music?", "2025-03-02T19:01:00Z", "plans"),
    ("Ines", "Bad news, the caterer for the launch dropped out.", "2025-04-10T08:30:00Z", "chat"),
    ("Kofi", "Ugh. Can we still do the 20th?", "2025-04-10T08:31:00Z", "chat"),
]


def test_context_dates_a_bare_day_with_a_day_named_in_an_earlier_sitting(client, tenant):
    """"Can we still do the 20th?", five weeks after "the 20th of May", is 20 May in the context, as the layers
    read it (read alone, the nearest 20th is 20 April). A metadata filter that hides the earlier sitting hides
    the day it named too."""
    _, key = tenant
    events = [{"conversation_id": "launch", "event_id": f"launch-{i}", "speaker": s, "content": c, "occurred_at": t,
               "metadata": {"channel": ch}} for i, (s, c, t, ch) in enumerate(LAUNCH)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code in (200, 201), r.text
    build_all([x["id"] for x in r.json()["results"]])

    def line(**extra) -> str:
        out = client.post("/v1/query", headers=auth(key), json={
            "query": "Can we still do the launch party?", "conversation_id": "launch", "top_k": 4, **extra})
        assert out.status_code == 200, out.text
        return next(x for x in out.json()["context"].splitlines() if "still do the 20th" in x)

    assert "the 20th [20 May 2025]" in line()
    assert "the 20th [20 April 2025]" in line(where={"channel": "chat"})
