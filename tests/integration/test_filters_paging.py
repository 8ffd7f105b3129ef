"""Query filters and cursor paging, through the HTTP API as a client meets them.

- `where` on metadata (jsonb containment, GIN index of migration 0007), speakers and a time range,
  across a tenant's conversations, for /v1/query and the conversation listing (GET and POST search);
- cursor paging of every list endpoint: conversations, a conversation's events, /episodes,
  /timeline, /graph, /speakers; walking the pages gives the whole list once, in order;
- a tenant never sees another's data through a filter or a cursor; an edited cursor, or one from
  another listing, answers 422 naming `cursor`;
- the limits are in the OpenAPI schema.
"""
from __future__ import annotations

import json

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


# ---------------------------------------------------------------- /v1/query filters


def test_where_filters_a_query_across_the_tenants_conversations(client, two_tenants):
    key_a, _, ids_a, _ = two_tenants
    everything = query(client, key_a)
    found_all = {it["id"] for it in everything["items"]}
    assert found_all & meta(ids_a, lambda c, s, at, md: md["user"] == "u2")  # unfiltered: both users

    out = query(client, key_a, where={"user": "u1"})
    u1 = meta(ids_a, lambda c, s, at, md: md["user"] == "u1")
    found = {it["id"] for it in out["items"]}
    assert found and found <= u1
    assert {it["conversation_id"] for it in out["items"]} == {"trip-a", "work-a"}  # across conversations
    # the context (evidence and the turns around it) keeps to the filter too
    assert {c["id"] for c in out["context_items"]} <= u1
    assert "Ben" not in out["context"]


def test_where_nested_array_and_number_semantics(client, two_tenants):
    key_a, _, ids_a, _ = two_tenants
    tagged = query(client, key_a, where={"tags": ["hiking"]})
    assert {it["id"] for it in tagged["items"]} == meta(ids_a, lambda c, s, at, md: "hiking" in md.get("tags", []))
    both = query(client, key_a, where={"tags": ["hiking", "alps"]})
    assert {it["event_id"] for it in both["items"]} == {"1"} and both["items"][0]["conversation_id"] == "trip-a"
    # 2 and 2.0 are the same JSON number; true is not 1
    prio = query(client, key_a, where={"priority": 2}, query="release Friday")
    assert {it["id"] for it in prio["items"]} == {ids_a[("work-a", "1")], ids_a[("work-a", "2")]}
    truthy = query(client, key_a, where={"priority": True}, query="hiking boots")
    assert {it["id"] for it in truthy["items"]} == {ids_a[("notes-b", "1")]}
    nothing = query(client, key_a, where={"user": "nobody"})
    assert nothing["items"] == [] and nothing["context_items"] == []


def test_where_combines_with_speakers_and_time_range(client, two_tenants):
    key_a, _, ids_a, _ = two_tenants
    out = query(client, key_a, where={"project": "travel"}, speakers=["Ana", "Ben"],
                time_range={"start": "2024-04-15T00:00:00Z", "end": "2024-12-31T00:00:00Z"})
    want = meta(ids_a, lambda c, s, at, md: md["project"] == "travel" and s in ("Ana", "Ben") and at >= "2024-04-15")
    assert {it["id"] for it in out["items"]} == want
    assert want == {ids_a[("trip-a", "1")], ids_a[("trip-a", "3")]}


def test_a_tenant_never_sees_another_through_a_filter(client, two_tenants):
    key_a, key_b, ids_a, ids_b = two_tenants
    for where in ({"user": "u1"}, {"user": "u2"}, {"project": "travel"}, {"tags": ["hiking"]}):
        out = query(client, key_a, where=where)
        assert {it["id"] for it in out["items"]} <= set(ids_a.values())
        assert "Tenant B secret" not in out["context"]
        out_b = query(client, key_b, where=where)
        assert {it["id"] for it in out_b["items"]} <= set(ids_b.values())
    listed = client.get("/v1/conversations", headers=auth(key_a), params={"where": json.dumps({"user": "u2"})}).json()
    assert {c["conversation_id"] for c in listed["conversations"]} == {"trip-b", "notes-b"}
    assert sum(c["events"] for c in listed["conversations"]) == 3  # A's three u2 events, none of B's


@pytest.mark.parametrize("where, field", [
    ("u1", "where"), (["u1"], "where"), ({"a": "x\u0000"}, "where"),
])
def test_a_bad_where_is_a_422_naming_it(client, two_tenants, where, field):
    key_a = two_tenants[0]
    r = client.post("/v1/query", headers=auth(key_a), json={"query": QUESTION, "where": where})
    assert r.status_code == 422, r.text
    assert field in r.text


def test_a_deep_where_is_refused(client, two_tenants):
    from app.settings import get_settings

    deep: dict = {}
    node = deep
    for _ in range(get_settings().max_metadata_depth + 1):
        node["k"] = {}
        node = node["k"]
    r = client.post("/v1/query", headers=auth(two_tenants[0]), json={"query": QUESTION, "where": deep})
    assert r.status_code == 422 and "where" in r.text


# ---------------------------------------------------------------- conversations: list, search, pages


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


# ---------------------------------------------------------------- cursors: tampering, other listings, tenants


def first_cursor(client, key, path="/v1/conversations", **params):
    r = client.get(path, headers=auth(key), params={"limit": 1, **params})
    assert r.status_code == 200, r.text
    assert r.json()["next_cursor"], r.json()
    return r.json()["next_cursor"]


def refused(r) -> None:
    assert r.status_code == 422, r.text
    assert "cursor" in r.text


def test_an_edited_cursor_is_a_422_naming_it(client, two_tenants):
    key_a = two_tenants[0]
    cursor = first_cursor(client, key_a)
    head, tail = cursor.split(".")
    flipped = head[:-1] + ("A" if head[-1] != "A" else "B")
    for bad in (f"{flipped}.{tail}", f"{head}.{tail[:-2]}", f"{head}.{tail}x", "abc.def"):
        refused(client.get("/v1/conversations", headers=auth(key_a), params={"limit": 1, "cursor": bad}))
    refused(client.get("/v1/conversations", headers=auth(key_a), params={"limit": 1, "cursor": "no dots here"}))


def test_a_cursor_of_another_tenant_or_listing_is_refused(client, two_tenants):
    key_a, key_b = two_tenants[0], two_tenants[1]
    cursor = first_cursor(client, key_a)
    # tenant B replays tenant A's cursor: refused, nothing of A's list is shown
    r = client.get("/v1/conversations", headers=auth(key_b), params={"limit": 1, "cursor": cursor})
    refused(r)
    # the same tenant with other filters, or on another endpoint
    refused(client.get("/v1/conversations", headers=auth(key_a),
                       params={"limit": 1, "cursor": cursor, "prefix": "trip-"}))
    refused(client.get("/v1/conversations/trip-a/events", headers=auth(key_a), params={"cursor": cursor}))
    refused(client.get("/v1/conversations/trip-a/episodes", headers=auth(key_a), params={"cursor": cursor}))
    # and an events cursor of one conversation does not page another
    ev = first_cursor(client, key_a, "/v1/conversations/trip-a/events")
    refused(client.get("/v1/conversations/trip-b/events", headers=auth(key_a), params={"cursor": ev}))
    refused(client.get("/v1/conversations/trip-a/events", headers=auth(key_b), params={"cursor": ev}))


def test_events_page_by_cursor(client, two_tenants):
    key_a, _, ids_a, _ = two_tenants
    pages, _ = walk(client, key_a, "/v1/conversations/trip-a/events", {"limit": 2},
                    lambda b: [e["id"] for e in b["events"]])
    assert sum(pages, []) == [ids_a[("trip-a", e)] for e in ("1", "2", "3")]


# ---------------------------------------------------------------- the layer lists


@pytest.fixture(scope="module")
def layered(engine, client):
    from tests.integration.test_layers_wiring import build_all, post_conversation
    from tests.support import new_tenant

    _, key = new_tenant(engine)
    pks = post_conversation(client, key, "paged")
    build_all(pks)
    return key


def layer(client, key, path, **params):
    r = client.get(f"/v1/conversations/paged/{path}", headers=auth(key), params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_episodes_page_by_cursor(client, layered):
    whole = layer(client, layered, "episodes")
    assert len(whole["episodes"]) >= 2 and whole["next_cursor"] is None
    pages, cursors = walk(client, layered, "/v1/conversations/paged/episodes", {"limit": 1},
                          lambda b: b["episodes"])
    assert sum(pages, []) == whole["episodes"] and all(len(p) == 1 for p in pages)
    head, tail = cursors[0].split(".")
    refused(client.get("/v1/conversations/paged/episodes", headers=auth(layered),
                       params={"cursor": head[::-1] + "." + tail}))


def test_timeline_pages_both_lists(client, layered):
    whole = layer(client, layered, "timeline")
    assert len(whole["assertions"]) >= 3 and whole["contradictions"]
    pages, _ = walk(client, layered, "/v1/conversations/paged/timeline", {"limit": 2},
                    lambda b: (b["assertions"], b["contradictions"]))
    assert sum((a for a, _ in pages), []) == whole["assertions"]
    assert sum((c for _, c in pages), []) == whole["contradictions"]
    only = layer(client, layered, "timeline", entity="ana")
    pages, _ = walk(client, layered, "/v1/conversations/paged/timeline", {"limit": 1, "entity": "ana"},
                    lambda b: b["assertions"])
    assert sum(pages, []) == only["assertions"]


def test_speakers_page_by_cursor(client, layered):
    whole = layer(client, layered, "speakers")
    assert [p["speaker"] for p in whole["speakers"]] == ["Ana", "Ben"]
    pages, _ = walk(client, layered, "/v1/conversations/paged/speakers", {"limit": 1},
                    lambda b: [p["speaker"] for p in b["speakers"]])
    assert pages == [["Ana"], ["Ben"]]


def test_graph_pages_are_slices_of_one_walk(client, layered):
    whole = layer(client, layered, "graph", limit=500)
    assert len(whole["nodes"]) > 6 and whole["next_cursor"] is None
    first = layer(client, layered, "graph", limit=3)
    assert [n["id"] for n in first["nodes"]] == [n["id"] for n in whole["nodes"]][:3]
    pages, _ = walk(client, layered, "/v1/conversations/paged/graph", {"limit": 3}, lambda b: b)
    nodes = [n["id"] for p in pages for n in p["nodes"]]
    assert nodes == [n["id"] for n in whole["nodes"]]
    # each edge once, on the page of its later-reached end, with its other end on that page or before
    edges = [(e["src"], e["dst"], e["type"]) for p in pages for e in p["edges"]]
    assert len(edges) == len(set(edges)) and set(edges) >= {(e["src"], e["dst"], e["type"]) for e in whole["edges"]}
    shown: set[str] = set()
    for p in pages:
        shown |= {n["id"] for n in p["nodes"]}
        on_page = {n["id"] for n in p["nodes"]}
        assert all({e["src"], e["dst"]} <= shown and {e["src"], e["dst"]} & on_page for e in p["edges"])
    assert [p["stats"]["offset"] for p in pages] == list(range(0, 3 * len(pages), 3))


def test_a_layer_cursor_is_bound_to_its_conversation_and_filters(client, layered, two_tenants):
    cursor = first_cursor(client, layered, "/v1/conversations/paged/timeline", entity="ana")
    refused(client.get("/v1/conversations/paged/timeline", headers=auth(layered),
                       params={"cursor": cursor, "entity": "ben", "limit": 1}))
    refused(client.get("/v1/conversations/paged/timeline", headers=auth(two_tenants[0]),
                       params={"cursor": cursor, "entity": "ana", "limit": 1}))


# ---------------------------------------------------------------- the schema


LISTS = {
    ("get", "/v1/conversations"): "conversations",
    ("get", "/v1/conversations/{conversation_id}/events"): "events",
    ("get", "/v1/conversations/{conversation_id}/episodes"): "episodes",
    ("get", "/v1/conversations/{conversation_id}/timeline"): "assertions",
    ("get", "/v1/conversations/{conversation_id}/graph"): "nodes",
    ("get", "/v1/conversations/{conversation_id}/speakers"): "speakers",
}


def test_every_list_endpoint_documents_its_limit_and_cursor(client):
    spec = client.get("/openapi.json").json()
    for (method, path), _ in LISTS.items():
        op = spec["paths"][path][method]
        params = {p["name"]: p["schema"] for p in op.get("parameters", [])}
        assert {"limit", "cursor"} <= set(params), path
        limit = params["limit"]
        assert limit.get("maximum") and limit.get("minimum") == 1, (path, limit)
        ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
        assert "next_cursor" in spec["components"]["schemas"][ref]["properties"], path
    search = spec["paths"]["/v1/conversations/search"]["post"]
    body = search["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    props = spec["components"]["schemas"][body]["properties"]
    assert props["limit"]["maximum"] == 1000 and "cursor" in props and "where" in props
    query = spec["components"]["schemas"]["QueryIn"]["properties"]
    assert "where" in query


# ---------------------------------------------------------------- cost: statements, the index


def test_a_filter_adds_no_statement_to_a_query(client, engine, two_tenants):
    """The filters go into the statements the query runs anyway (and the in-memory checks): a
    filtered query executes as many SQL statements as the same query without one."""
    from tests.integration.test_query_statements import statements

    key_a = two_tenants[0]
    counts = {}
    for name, extra in (("plain", {}), ("where", {"where": {"user": "u1"}}),
                        ("all", {"where": {"project": "travel"}, "speakers": ["Ana"],
                                 "time_range": {"start": "2024-01-01T00:00:00Z"}})):
        query(client, key_a, **extra)  # warm
        with statements(engine) as seen:
            query(client, key_a, **extra)
        counts[name] = len(seen)
    assert counts["where"] == counts["plain"] == counts["all"], counts


def test_the_metadata_filter_can_use_the_gin_index(engine):
    """Migration 0007's `jsonb_path_ops` GIN index serves `metadata @> :where`, the clause every
    filtered read adds (`app.storage.candidates.filter_clauses`); with scans ruled out (a test table
    is small enough to scan) the planner reads it."""
    from sqlalchemy import text

    from app.storage.candidates import Scope, filter_clauses

    clauses, params = filter_clauses(Scope(tenant_id=1, where='{"user":"u1"}'))
    with engine.connect() as conn:
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(r[0] for r in conn.execute(
            text(f"EXPLAIN SELECT count(*) FROM events e WHERE {' AND '.join(clauses)}"), params))
    assert "ix_events_metadata" in plan, plan


# ---------------------------------------------------------------- the SDK


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
