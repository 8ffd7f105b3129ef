"""What the filter and paging tests share (test_filters_*.py, test_paging_*.py): two tenants holding the same
conversations and metadata with other words, so a leak through a filter or a cursor would show up as B's
content in A's answers; and small request helpers."""
from __future__ import annotations

import pytest

from tests.support import auth


# Two users of one tenant, each with two conversations; metadata says whose and which project.
EVENTS = [
    # conversation, event_id, speaker, content, time, metadata
    ("trip-a", "1", "Ana", "We are planning a hiking trip to the Alps in July.", "2024-05-01T10:00:00Z",
     {"user": "u1", "project": "travel", "tags": ["hiking", "alps"]}),
    ("trip-a", "2", "Bot", "Hiking in the Alps in July is lovely; book the huts early.", "2024-05-01T10:01:00Z",
     {"user": "u1", "project": "travel"}),
    ("trip-a", "3", "Ana", "My hiking boots are old, I need new ones before the trip.", "2024-05-02T09:00:00Z",
     {"user": "u1", "project": "travel", "tags": ["gear"]}),
    ("work-a", "1", "Ana", "The hiking app release slipped to Friday.", "2024-06-03T09:00:00Z",
     {"user": "u1", "project": "work", "priority": 2}),
    ("work-a", "2", "Bot", "Noted: the release moves to Friday.", "2024-06-03T09:01:00Z",
     {"user": "u1", "project": "work", "priority": 2.0}),
    ("trip-b", "1", "Ben", "I went hiking in the Alps last July with my brother.", "2024-04-01T08:00:00Z",
     {"user": "u2", "project": "travel", "tags": ["hiking"]}),
    ("trip-b", "2", "Bot", "Which part of the Alps did you hike in?", "2024-04-01T08:01:00Z",
     {"user": "u2", "project": "travel"}),
    ("notes-b", "1", "Ben", "Hiking boots: buy the waterproof ones.", "2024-06-20T12:00:00Z",
     {"user": "u2", "project": "notes", "priority": True}),
]


QUESTION = "hiking in the Alps"


def post(client, key, rows=EVENTS):
    events = [{"conversation_id": c, "event_id": e, "speaker": s, "content": t, "occurred_at": at, "metadata": md}
              for c, e, s, t, at, md in rows]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200, r.text
    return {(c, e): x["id"] for (c, e, *_), x in zip(rows, r.json()["results"])}


@pytest.fixture(scope="module")
def two_tenants(engine, client):
    """Tenant A holds EVENTS; tenant B holds the same conversations and metadata with other words,
    so a leak through a filter or a cursor would show up as B's content in A's answers."""
    from app.services.layers import embed_pending
    from tests.support import new_tenant

    _, key_a = new_tenant(engine)
    _, key_b = new_tenant(engine)
    ids_a = post(client, key_a)
    other = [(c, e, s, f"Tenant B secret {i}: hiking in the Alps with a map.", at, md)
             for i, (c, e, s, _t, at, md) in enumerate(EVENTS)]
    ids_b = post(client, key_b, other)
    embed_pending(list(ids_a.values()) + list(ids_b.values()))  # the dense signal joins the filters too
    return key_a, key_b, ids_a, ids_b


def query(client, key, **body):
    r = client.post("/v1/query", headers=auth(key), json={"query": QUESTION, "top_k": 20, **body})
    assert r.status_code == 200, r.text
    return r.json()


def meta(ids: dict, pred) -> set[int]:
    """Ids of EVENTS whose row passes `pred(conversation, speaker, time, metadata)`."""
    by_key = {(c, e): (c, s, at, md) for c, e, s, _t, at, md in EVENTS}
    return {pk for k, pk in ids.items() if pred(*by_key[k])}


def walk(client, key, path, params, items, method="get", body=None):
    """Every page of a listing: (items of each page, the cursors given)."""
    pages, cursors = [], []
    cursor = None
    for _ in range(50):
        if method == "get":
            r = client.get(path, headers=auth(key), params={**params, **({"cursor": cursor} if cursor else {})})
        else:
            r = client.post(path, headers=auth(key), json={**body, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        pages.append(items(r.json()))
        cursor = r.json()["next_cursor"]
        if cursor is None:
            return pages, cursors
        cursors.append(cursor)
    raise AssertionError("the pages never ended")


def first_cursor(client, key, path="/v1/conversations", **params):
    r = client.get(path, headers=auth(key), params={"limit": 1, **params})
    assert r.status_code == 200, r.text
    assert r.json()["next_cursor"], r.json()
    return r.json()["next_cursor"]


def refused(r) -> None:
    assert r.status_code == 422, r.text
    assert "cursor" in r.text
