"""The graph around a question or an entity, read hop by hop: the neighbourhood the query's graph
signal ranks, and the one `GET /v1/conversations/{id}/graph` shows.

Each hop is two statements (`app.storage.graph`: the edges touching the frontier, both ways, then
the nodes kept); which of them are kept is `app.domain.retrieval.neighbourhood`'s policy.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import Connection

from app.domain.retrieval.neighbourhood import GraphView, Neighbourhood, edge_cap, seed_names
from app.storage import graph as store
from app.storage.layer_runs import current_version


def entities_named_in(conn: Connection, tenant_id: int, conversation_id: str, text_or_names: str | Sequence[str],
                      layer_version: str | None = None, prefer: str | None = None, limit: int = 50) -> list[dict]:
    """Entity nodes whose name or an alias is named in the text (or equals one of the names):
    one GIN index lookup. Most mentioned first."""
    version = layer_version or current_version(conn, tenant_id, conversation_id, "graph", prefer)
    if version is None:
        return []
    return store.entities_named(conn, tenant_id, conversation_id, version, seed_names(text_or_names), limit)


def neighbourhood(
    conn: Connection, tenant_id: int, conversation_id: str, entity_names: Sequence[str] | None = None,
    limit: int = 40, *, query: str | None = None, depth: int = 2, layer_version: str | None = None,
    prefer: str | None = None, seeds: Sequence[str] | None = None, light: bool = False,
    prefer_events: Collection[int] = (),
) -> GraphView:
    """The graph around named entities (or entities named in `query`, or given seed node keys),
    breadth first to `depth` hops, at most `limit` nodes. With no names at all, the most mentioned
    entities are the seeds. `layer_version` pins the graph's version, else `prefer`, else the latest.

    `light` (the query path): edges without their JSON `meta`, nodes without `data`, and at most
    `2 * limit` edges per hop and direction, those reaching `prefer_events` (the events other
    signals found) first."""
    version = layer_version or current_version(conn, tenant_id, conversation_id, "graph", prefer)
    if version is None:
        return GraphView(version, [], [], [])
    limit = max(1, limit)
    seed_nodes: list[dict] = []
    if seeds:
        seed_nodes = store.nodes(conn, tenant_id, conversation_id, version, list(seeds))
    elif entity_names:
        seed_nodes = entities_named_in(conn, tenant_id, conversation_id, list(entity_names), version, limit=limit)
    elif query:
        seed_nodes = entities_named_in(conn, tenant_id, conversation_id, query, version, limit=limit)
    if not seed_nodes and not (seeds or entity_names or query):
        seed_nodes = store.top_entities(conn, tenant_id, conversation_id, version, min(limit, 5))
    walk = Neighbourhood(version, seed_nodes, limit, prefer_events)
    cap = edge_cap(walk.limit, light)
    for _ in range(max(0, depth)):
        if not walk.wants_hop():
            break
        edges = store.edges_touching(conn, tenant_id, conversation_id, version, walk.frontier, cap, light=light,
                                     prefer_events=prefer_events)
        wanted = walk.take_edges(edges)
        walk.add_nodes(store.nodes(conn, tenant_id, conversation_id, version, wanted, light=light))
    return walk.result()
