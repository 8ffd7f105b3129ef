"""`where` on metadata (jsonb containment, GIN index of migration 0007), speakers and a time range
on /v1/query, across a tenant's conversations, through the HTTP API as a client meets them; a tenant
never sees another's data through a filter; what a filter costs (statements, the index)."""
from __future__ import annotations

import json

import pytest

from tests.support import auth
from tests.integration.filters_paging_support import (  # noqa: F401  (two_tenants: a fixture)
    QUESTION,
    two_tenants,
    query,
    meta,
)


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
