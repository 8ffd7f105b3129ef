"""What the API shows about one conversation beyond its events: how far the background layers are
behind (indexing lag per layer) and the memory graph around an entity with the run that built it.
Forgetting a conversation or a speaker is `app.services.forget`'s.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from app.domain.layer_registry import LAYERS
from app.domain.retrieval.neighbourhood import GraphView
from app.services.graph import neighbourhood
from app.storage import events as event_store
from app.storage.layer_runs import runs_for


def indexing_status(conn: Connection, tenant_id: int, conversation_id: str) -> tuple[int, dict[str, int]]:
    """The conversation's event count, and per background layer how many events still wait for it
    (every layer of the registry is listed, 0 when none wait)."""
    events, pending = event_store.conversation_status(conn, tenant_id, conversation_id)
    return events, {layer: pending.get(layer, 0) for layer in LAYERS}


def graph_view(conn: Connection, tenant_id: int, conversation_id: str, entity: str | None, limit: int, *,
               query: str | None, depth: int, layer_version: str | None) -> tuple[GraphView, dict[str, Any]]:
    """The graph around `entity` (or the entities `query` names), and what to say about it: the
    seeds, its size, whether it was cut at `limit`, and the stats of the graph run that built it."""
    view = neighbourhood(conn, tenant_id, conversation_id, [entity] if entity else None, limit,
                         query=query, depth=depth, layer_version=layer_version)
    run = next((r for r in runs_for(conn, tenant_id, conversation_id, "graph")
                if r.layer_version == view.layer_version), None)
    stats = {"seeds": view.seeds, "nodes": len(view.nodes), "edges": len(view.edges), "truncated": view.truncated,
             "conversation": run.stats if run else {}}
    return view, stats
