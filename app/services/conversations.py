"""What the API reads about a tenant's conversations: their list, one event, a conversation's events
page by page, how far the background layers are behind (indexing lag per layer), and what the layers
derived (episodes, the assertion timeline, speaker profiles, the memory graph around an entity with
the run that built it). Forgetting a conversation or a speaker is `app.services.forget`'s.

A derived view of a conversation the tenant does not have raises `UnknownConversation` (the API's
404); one whose layer has not run yet is empty, with no layer version.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from app.domain.layer_registry import LAYERS
from app.domain.retrieval.neighbourhood import GraphView
from app.services.graph import neighbourhood
from app.storage import events as event_store
from app.storage.episodes import AssertionView, ContradictionView, EpisodeView, episodes_for, timeline_for
from app.storage.events import EventRow
from app.storage.layer_runs import runs_for
from app.storage.profiles import profiles_for


class UnknownConversation(LookupError):
    """The tenant has no event in this conversation."""


def require(conn: Connection, tenant_id: int, conversation_id: str) -> None:
    if not event_store.conversation_exists(conn, tenant_id, conversation_id):
        raise UnknownConversation(conversation_id)


def conversations(conn: Connection, tenant_id: int, limit: int) -> list[tuple[str, int, Any, Any]]:
    """(conversation_id, events, first event time, last event time), most recently active first."""
    return event_store.list_conversations(conn, tenant_id, limit)


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
