"""Cursors: an edited cursor, or one from another listing or another tenant, answers 422 naming
`cursor`; every list endpoint documents its `limit` and `cursor` in the OpenAPI schema."""
from __future__ import annotations

from tests.support import auth
from tests.integration.filters_paging_support import (  # noqa: F401  (two_tenants: a fixture)
    two_tenants,
    first_cursor,
    refused,
)


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
