"""Cursor paging of the layer lists (/episodes, /timeline, /speakers, /graph): walking the pages gives the
whole list once, in order; a layer cursor is bound to its conversation and filters."""
from __future__ import annotations

import pytest

from tests.support import auth
from tests.integration.filters_paging_support import (  # noqa: F401  (two_tenants: a fixture)
    two_tenants,
    walk,
    first_cursor,
    refused,
)


@pytest.fixture(scope="module")
def layered(engine, client):
    from tests.integration.layers_wiring_support import build_all, post_conversation
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
