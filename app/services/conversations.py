"""What the API reads about a tenant's conversations: their list (filtered, page by page), one
event, a conversation's events page by page, how far the background layers are behind (indexing lag
per layer), and what the layers derived (episodes, the assertion timeline, speaker profiles, the
memory graph around an entity with the run that built it), whole or page by page. Forgetting a conversation or a speaker is `app.services.forget`'s.

A derived view of a conversation the tenant does not have raises `UnknownConversation` (the API's
404); one whose layer has not run yet is empty, with no layer version.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from app.domain.layer_registry import LAYERS
from app.domain.retrieval.neighbourhood import GraphView, edge_cap
from app.services.graph import neighbourhood
from app.storage import events as event_store
from app.storage import conversations as conversation_store
from app.storage import graph as graph_store
from app.storage.candidates import Scope
from app.storage.episodes import (
    AssertionView,
    ContradictionView,
    EpisodeView,
    assertions_page,
    contradictions_page,
    episodes_for,
    episodes_page,
    timeline_for,
)
from app.storage.events import EventRow
from app.storage.layer_runs import current_version, runs_for
from app.storage.profiles import profiles_for


class UnknownConversation(LookupError):
    """The tenant has no event in this conversation."""


def require(conn: Connection, tenant_id: int, conversation_id: str) -> None:
    if not event_store.conversation_exists(conn, tenant_id, conversation_id):
        raise UnknownConversation(conversation_id)


def event(conn: Connection, tenant_id: int, pk: int) -> EventRow | None:
    return event_store.get_event(conn, tenant_id, pk)


def events_page(conn: Connection, tenant_id: int, conversation_id: str, limit: int,
                after: tuple[Any, int] | None) -> tuple[list[EventRow], bool]:
    """Up to `limit` events in time order after the cursor (occurred_at, id), and whether more follow."""
    rows = event_store.list_conversation(conn, tenant_id, conversation_id, limit + 1, after)
    return rows[:limit], len(rows) > limit


def episodes(conn: Connection, tenant_id: int, conversation_id: str,
             layer_version: str | None) -> tuple[str | None, list[EpisodeView]]:
    require(conn, tenant_id, conversation_id)
    return episodes_for(conn, tenant_id, conversation_id, layer_version)


def timeline(conn: Connection, tenant_id: int, conversation_id: str, layer_version: str | None, *,
             entity: str | None, attribute: str | None
             ) -> tuple[str | None, list[AssertionView], list[ContradictionView]]:
    require(conn, tenant_id, conversation_id)
    return timeline_for(conn, tenant_id, conversation_id, layer_version, entity=entity, attribute=attribute)


def profiles(conn: Connection, tenant_id: int, conversation_id: str, layer_version: str | None, *,
             include_vectors: bool) -> tuple[str | None, list[dict[str, Any]]]:
    require(conn, tenant_id, conversation_id)
    return profiles_for(conn, tenant_id, conversation_id, layer_version, include_vectors=include_vectors)


def indexing_status(conn: Connection, tenant_id: int, conversation_id: str) -> tuple[int, dict[str, int]]:
    """The conversation's event count, and per background layer how many events still wait for it
    (every layer of the registry is listed, 0 when none wait)."""
    events, pending = event_store.conversation_status(conn, tenant_id, conversation_id)
    return events, {layer: pending.get(layer, 0) for layer in LAYERS}


def graph_view(conn: Connection, tenant_id: int, conversation_id: str, entity: str | None, limit: int, *,
               query: str | None, depth: int, layer_version: str | None) -> tuple[GraphView, dict[str, Any]]:
    """The graph around `entity` (or the entities `query` names), and what to say about it: the
    seeds, its size, whether it was cut at `limit`, and the stats of the graph run that built it."""
    require(conn, tenant_id, conversation_id)
    view = neighbourhood(conn, tenant_id, conversation_id, [entity] if entity else None, limit,
                         query=query, depth=depth, layer_version=layer_version)
    run = next((r for r in runs_for(conn, tenant_id, conversation_id, "graph")
                if r.layer_version == view.layer_version), None)
    stats = {"seeds": view.seeds, "nodes": len(view.nodes), "edges": len(view.edges), "truncated": view.truncated,
             "conversation": run.stats if run else {}}
    return view, stats


# ---------------------------------------------------------------- pages (the API's cursor-paged lists)
# Each takes the position the previous page ended at (None: the first page) and returns the rows,
# the position to continue from, and whether more follow. A derived list's pages all read the layer
# version the first page read (the cursor carries it), so a rebuild finishing meanwhile does not mix
# two versions in one listing.

GRAPH_WALK_MAX = 2000  # a graph listing's pages cover at most this many nodes of one walk


def conversations_page(conn: Connection, scope: Scope, limit: int, *, search: str | None, prefix: str | None,
                       after: tuple[Any, str] | None) -> tuple[list[conversation_store.ConversationRow], bool]:
    """The tenant's conversations with an event passing the scope's filters, most recently active
    first, after the cursor (last event time, conversation id); and whether more follow."""
    rows = conversation_store.list_conversations(conn, scope, limit + 1, search=search, prefix=prefix, after=after)
    return rows[:limit], len(rows) > limit


def episodes_paged(conn: Connection, tenant_id: int, conversation_id: str, version: str | None, after: int | None,
                   limit: int) -> tuple[str | None, list[EpisodeView], bool]:
    """(version read, up to `limit` episodes after index `after`, more follow)."""
    require(conn, tenant_id, conversation_id)
    version = version or current_version(conn, tenant_id, conversation_id, "consolidate")
    if version is None:
        return None, [], False
    rows = episodes_page(conn, tenant_id, conversation_id, version, after, limit + 1)
    return version, rows[:limit], len(rows) > limit


def timeline_paged(conn: Connection, tenant_id: int, conversation_id: str, version: str | None, *,
                   after_assertion: tuple | None, after_contradiction: tuple | None, assertions_done: bool,
                   contradictions_done: bool, limit: int, entity: str | None, attribute: str | None
                   ) -> tuple[str | None, list[AssertionView], bool, list[ContradictionView], bool]:
    """(version, up to `limit` assertions after theirs, more assertions follow, up to `limit`
    contradictions after theirs, more contradictions follow): the two lists page side by side."""
    require(conn, tenant_id, conversation_id)
    version = version or current_version(conn, tenant_id, conversation_id, "consolidate")
    if version is None:
        return None, [], False, [], False
    a = [] if assertions_done else assertions_page(conn, tenant_id, conversation_id, version, after=after_assertion,
                                                   limit=limit + 1, entity=entity, attribute=attribute)
    c = [] if contradictions_done else contradictions_page(
        conn, tenant_id, conversation_id, version, after=after_contradiction, limit=limit + 1, entity=entity,
        attribute=attribute)
    return version, a[:limit], len(a) > limit, c[:limit], len(c) > limit


def profiles_paged(conn: Connection, tenant_id: int, conversation_id: str, version: str | None, offset: int,
                   limit: int, *, include_vectors: bool) -> tuple[str | None, list[dict[str, Any]], bool]:
    """(version, up to `limit` speaker profiles in name order from `offset`, more follow). A
    conversation has few speakers: they are read whole and sliced."""
    version, rows = profiles(conn, tenant_id, conversation_id, version, include_vectors=include_vectors)
    return version, rows[offset: offset + limit], len(rows) > offset + limit


def graph_paged(conn: Connection, tenant_id: int, conversation_id: str, entity: str | None, limit: int, *,
                query: str | None, depth: int, layer_version: str | None, offset: int
                ) -> tuple[GraphView, dict[str, Any], bool]:
    """One page of a breadth-first walk: the walk grown to `offset + limit` nodes, its nodes from
    `offset` on, and the edges whose later-reached end is among them (each edge is on one page: the
    page that shows its second node). Also the stats `graph_view` gives, and whether more follow."""
    end = min(offset + limit, GRAPH_WALK_MAX)
    # one node more than the page's end says whether the walk goes on (a walk of n nodes is the
    # first n nodes of a longer one: seeds best first, each hop's nodes best edge first)
    view, stats = graph_view(conn, tenant_id, conversation_id, entity, end + 1, query=query, depth=depth,
                             layer_version=layer_version)
    cut = len(view.nodes) > end
    order = {n["key"]: i for i, n in enumerate(view.nodes) if i < end}
    page_nodes = view.nodes[offset:end]
    # every edge between a node of this page and one of this or an earlier page (the walk itself
    # reads only the edges of the hops it made): one read of the edges touching the page's nodes
    touching = graph_store.edges_touching(conn, tenant_id, conversation_id, view.layer_version,
                                          [n["key"] for n in page_nodes], edge_cap(limit, light=False)) \
        if page_nodes else []
    seen: set[tuple[str, str, str]] = set()
    page_edges = []
    for e in touching:
        ends = (order.get(e["src"]), order.get(e["dst"]))
        if None in ends or not offset <= max(ends) < end or (e["src"], e["dst"], e["type"]) in seen:
            continue
        seen.add((e["src"], e["dst"], e["type"]))
        page_edges.append(e)
    page = GraphView(view.layer_version, [k for k in view.seeds if k in order], page_nodes, page_edges, cut,
                     view.stats)
    stats = stats | {"seeds": page.seeds, "nodes": len(page_nodes), "edges": len(page_edges), "truncated": cut,
                     "offset": offset}
    return page, stats, cut and end < GRAPH_WALK_MAX
