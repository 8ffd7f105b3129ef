"""The conversation listing (GET /v1/conversations and POST /v1/conversations/search): filtered by
metadata, speaker, time, words and prefix, paged by cursor; a conversation's events paged; the SDK's
filters and pages."""
from __future__ import annotations

import json

import pytest

from tests.support import auth
from tests.integration.filters_paging_support import (  # noqa: F401  (two_tenants: a fixture)
    QUESTION,
    post,
    two_tenants,
    meta,
    walk,
    refused,
)


def conv_list(client, key, **params):
    r = client.get("/v1/conversations", headers=auth(key), params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_conversations_filtered_by_metadata_speaker_time_words_and_prefix(client, two_tenants):
    key_a = two_tenants[0]
    names = lambda body: [c["conversation_id"] for c in body["conversations"]]  # noqa: E731
    assert names(conv_list(client, key_a)) == ["notes-b", "work-a", "trip-a", "trip-b"]  # latest activity first
    assert names(conv_list(client, key_a, where=json.dumps({"user": "u1"}))) == ["work-a", "trip-a"]
    assert names(conv_list(client, key_a, speaker="Ben")) == ["notes-b", "trip-b"]
    assert names(conv_list(client, key_a, speaker=["Ben", "Ana"])) == ["notes-b", "work-a", "trip-a", "trip-b"]
    assert names(conv_list(client, key_a, start="2024-06-01T00:00:00Z", end="2024-06-10T00:00:00Z")) == ["work-a"]
    assert names(conv_list(client, key_a, text="boots")) == ["notes-b", "trip-a"]
    assert names(conv_list(client, key_a, prefix="trip-")) == ["trip-a", "trip-b"]
    # the counts and times are those of the events that pass the filters
    travel = conv_list(client, key_a, where=json.dumps({"project": "travel"}), speaker="Ana")["conversations"]
    assert [(c["conversation_id"], c["events"], c["last_at"]) for c in travel] == [("trip-a", 2, "2024-05-02T09:00:00Z")]


@pytest.mark.parametrize("params, field", [
    ({"start": "0.5"}, "start"), ({"end": "1700000000"}, "end"), ({"where": "[1]"}, "where"),
    ({"where": "{nope"}, "where"), ({"start": "2024-02-01T00:00:00Z", "end": "2024-01-01T00:00:00Z"}, "start"),
    ({"limit": 1001}, "limit"), ({"colour": "red"}, "colour"),
])
def test_a_bad_listing_filter_is_a_422_naming_it(client, two_tenants, params, field):
    r = client.get("/v1/conversations", headers=auth(two_tenants[0]), params=params)
    assert r.status_code == 422, r.text
    assert field in r.text


def test_conversation_search_body_matches_the_listing(client, two_tenants):
    key_a = two_tenants[0]
    body = {"where": {"project": "travel"}, "text": "Alps", "time_range": {"start": "2024-01-01T00:00:00Z"}}
    r = client.post("/v1/conversations/search", headers=auth(key_a), json=body)
    assert r.status_code == 200, r.text
    got = [c["conversation_id"] for c in r.json()["conversations"]]
    assert got == ["trip-a", "trip-b"]
    listed = conv_list(client, key_a, where=json.dumps(body["where"]), text="Alps", start="2024-01-01T00:00:00Z")
    assert listed["conversations"] == r.json()["conversations"]
    bad = client.post("/v1/conversations/search", headers=auth(key_a), json={"where": {"a": 1}, "colour": "red"})
    assert bad.status_code == 422 and "colour" in bad.text


def test_conversations_page_by_cursor(client, two_tenants):
    key_a = two_tenants[0]
    whole = [c["conversation_id"] for c in conv_list(client, key_a)["conversations"]]
    pages, _ = walk(client, key_a, "/v1/conversations", {"limit": 1},
                    lambda b: [c["conversation_id"] for c in b["conversations"]])
    assert [len(p) for p in pages] == [1, 1, 1, 1] and sum(pages, []) == whole
    filtered, _ = walk(client, key_a, "/v1/conversations/search", {}, lambda b: [c["conversation_id"] for c in
                       b["conversations"]], method="post", body={"limit": 1, "where": {"project": "travel"}})
    assert sum(filtered, []) == ["trip-a", "trip-b"]


def test_a_conversation_with_equal_last_times_pages_without_loss(client, make_tenant):
    _, key = make_tenant()
    rows = [(f"c{i}", "1", "Ana", f"note {i}", "2024-01-01T00:00:00Z", {}) for i in range(5)]
    post(client, key, rows)
    pages, _ = walk(client, key, "/v1/conversations", {"limit": 2},
                    lambda b: [c["conversation_id"] for c in b["conversations"]])
    assert sum(pages, []) == ["c0", "c1", "c2", "c3", "c4"]


def test_events_page_by_cursor(client, two_tenants):
    key_a, _, ids_a, _ = two_tenants
    pages, _ = walk(client, key_a, "/v1/conversations/trip-a/events", {"limit": 2},
                    lambda b: [e["id"] for e in b["events"]])
    assert sum(pages, []) == [ids_a[("trip-a", e)] for e in ("1", "2", "3")]


def test_the_sdk_filters_and_pages(client, two_tenants):
    import asyncio

    import httpx

    from app.api.main import app
    from palimpsest.client import AsyncPalimpsest, ValidationError

    key_a, _, ids_a, _ = two_tenants

    async def run() -> tuple:
        async with AsyncPalimpsest("http://sdk.test", api_key=key_a, transport=httpx.ASGITransport(app=app)) as pal:
            out = await pal.query(QUESTION, where={"user": "u1"}, speakers=["Ana"], top_k=20)
            convs = [c.conversation_id async for c in pal.iter_conversations(page_size=1, where={"user": "u2"})]
            page = await pal.list_conversations(text="boots", limit=1)
            try:
                await pal.list_conversations(limit=1, cursor=page.next_cursor, text="hiking")
            except ValidationError as exc:  # 422: another listing's filters
                refused = (exc.status_code, json.dumps(exc.body))
            return out, convs, page, refused

    out, convs, page, refused = asyncio.run(run())
    assert {it.id for it in out.items} <= meta(ids_a, lambda c, s, at, md: md["user"] == "u1" and s == "Ana")
    assert out.items
    assert convs == ["notes-b", "trip-b"]
    assert [c.conversation_id for c in page.conversations] == ["notes-b"] and page.next_cursor
    assert refused[0] == 422 and "cursor" in refused[1], refused
