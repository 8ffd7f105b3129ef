"""SQL for the memory graph (migration 0002): the graph layer's writes, and the lookups a
neighbourhood is grown from.

Written as one slice per (tenant, conversation, layer_version) (`replace_graph`), or, by an
incremental run, the nodes and edges that changed (`update_graph`), plus the graph's group of
per-event signals (`set_graph_signals`). The graph's fold keeps its closed facts, events and name
vectors apart from its state row, in chunks appended per batch (`add_fold_chunk`, `fold_chunks`):
rows of `layer_state` whose layer is "graph:<number>", so they go wherever a conversation's state
goes (erasure included). Read by index lookups only: entity names by GIN
(`entities_named`), nodes by primary key (`nodes`), edges by (scope, src) / (scope, dst)
(`edges_touching`).
Which nodes and edges a neighbourhood keeps is policy, in `app.domain.retrieval.neighbourhood`;
the breadth-first walk that calls these is `app.services.graph`.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import Any

from psycopg.types.json import Jsonb
from sqlalchemy import Connection, delete, select, text

from app.storage import layer_state
from app.storage.layer_runs import current_version, delete_slice, insert_slice
from app.storage.models import GraphEdge, GraphNode, LayerState
from app.storage.signals import GRAPH_COLUMNS, set_signal_group

# ---------------------------------------------------------------- writes (the graph layer)


_SCOPE = ("tenant_id", "conversation_id", "layer_version")
_NODE_COLUMNS = (("key", "text"), ("kind", "text"), ("label", "text"), ("names", "text[]"), ("event_pk", "int8"),
                 ("data", "jsonb"))
_EDGE_COLUMNS = (("src", "text"), ("dst", "text"), ("type", "text"), ("weight", "float8"), ("meta", "jsonb"),
                 ("src_event_pk", "int8"), ("dst_event_pk", "int8"))


def _copy(conn: Connection, table: str, columns: tuple[tuple[str, str], ...], tenant_id: int, conversation_id: str,
          version: str, rows: list[dict]) -> None:
    """Rows of one slice written with COPY, in the order given (a graph slice is tens of thousands
    of rows: a multi-row INSERT spent most of the write building and binding its parameters)."""
    if not rows:
        return
    names = [c for c, _ in columns]
    json_cols = {c for c, t in columns if t == "jsonb"}
    raw = conn.connection.driver_connection
    with raw.cursor() as cur, cur.copy(f"COPY {table} ({', '.join((*_SCOPE, *names))}) FROM STDIN") as cp:
        cp.set_types(["int8", "text", "text", *(t for _, t in columns)])
        for r in rows:
            cp.write_row((tenant_id, conversation_id, version,
                          *(Jsonb(r[c]) if c in json_cols and r[c] is not None else r[c] for c in names)))


def replace_graph(conn: Connection, tenant_id: int, conversation_id: str, version: str,
                  nodes: list[dict], edges: list[dict]) -> None:
    """nodes: {key, kind, label, names, event_pk, data}; edges: {src, dst, type, weight, meta,
    src_event_pk, dst_event_pk}."""
    delete_slice(conn, GraphEdge, tenant_id, conversation_id, version)
    delete_slice(conn, GraphNode, tenant_id, conversation_id, version)
    _copy(conn, "graph_nodes", _NODE_COLUMNS, tenant_id, conversation_id, version, nodes)
    _copy(conn, "graph_edges", _EDGE_COLUMNS, tenant_id, conversation_id, version, edges)


def update_graph(conn: Connection, tenant_id: int, conversation_id: str, version: str, node_keys: Sequence[str],
                 nodes: list[dict], edge_triples: Sequence[tuple[str, str, str]], edges: list[dict]) -> None:
    """An incremental write: the nodes of `node_keys` are deleted and `nodes` inserted; likewise every
    edge whose (src, dst, type) is in `edge_triples`, then `edges`. The rest of the slice stays."""
    scope = {"tenant": tenant_id, "conv": conversation_id, "version": version}
    if node_keys:
        conn.execute(text("DELETE FROM graph_nodes WHERE tenant_id = :tenant AND conversation_id = :conv "
                          "AND layer_version = :version AND key = ANY(:keys)"), {**scope, "keys": list(node_keys)})
    if edge_triples:
        srcs, dsts, types = (list(x) for x in zip(*edge_triples))
        conn.execute(text("DELETE FROM graph_edges g USING unnest(CAST(:srcs AS text[]), CAST(:dsts AS text[]), "
                          "CAST(:types AS text[])) AS t(src, dst, type) WHERE g.tenant_id = :tenant "
                          "AND g.conversation_id = :conv AND g.layer_version = :version AND g.src = t.src "
                          "AND g.dst = t.dst AND g.type = t.type"), {**scope, "srcs": srcs, "dsts": dsts, "types": types})
    insert_slice(conn, GraphNode, tenant_id, conversation_id, version, nodes)
    insert_slice(conn, GraphEdge, tenant_id, conversation_id, version, edges)


def set_graph_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict],
                      incremental: bool = False) -> None:
    """rows: {event_pk, graph_version, entities, resolved_dates, time_mentions, search_extra}. Not
    `incremental`: the group of the conversation's other events is cleared."""
    set_signal_group(conn, tenant_id, conversation_id, rows, GRAPH_COLUMNS, cleared=() if incremental else None)


def slice_rows(conn: Connection, tenant_id: int, conversation_id: str, version: str) -> tuple[list[dict], list[dict]]:
    """Every node and edge of one version's slice, as `replace_graph` takes them (a worker that
    assembled the graph again compares before writing)."""
    p = {"tenant": tenant_id, "conv": conversation_id, "version": version}
    scope = "WHERE tenant_id = :tenant AND conversation_id = :conv AND layer_version = :version"
    nodes = [{"key": r[0], "kind": r[1], "label": r[2], "names": r[3], "event_pk": r[4], "data": r[5]}
             for r in conn.execute(text(f"SELECT key, kind, label, names, event_pk, data FROM graph_nodes {scope}"), p)]
    edges = [{"src": r[0], "dst": r[1], "type": r[2], "weight": r[3], "meta": r[4], "src_event_pk": r[5],
              "dst_event_pk": r[6]}
             for r in conn.execute(text("SELECT src, dst, type, weight, meta, src_event_pk, dst_event_pk "
                                        f"FROM graph_edges {scope}"), p)]
    return nodes, edges


def graph_signals(conn: Connection, tenant_id: int, conversation_id: str) -> list[dict]:
    """The graph's column group of the conversation's per-event signals, as `set_graph_signals` takes it."""
    cols = ", ".join(GRAPH_COLUMNS)
    res = conn.execute(text(f"SELECT event_pk, {cols} FROM event_signals WHERE tenant_id = :tenant "
                            "AND conversation_id = :conv"), {"tenant": tenant_id, "conv": conversation_id})
    return [{"event_pk": r[0], **dict(zip(GRAPH_COLUMNS, r[1:]))} for r in res]


# ---------------------------------------------------------------- the fold's chunks

CHUNK_LAYER = "graph:"


def add_fold_chunk(conn: Connection, tenant_id: int, conversation_id: str, version: str, index: int,
                   data: dict) -> int:
    """Append chunk `index` (0, 1, ...) of the graph fold's data; returns its stored size in bytes."""
    return layer_state.save(conn, tenant_id, conversation_id, f"{CHUNK_LAYER}{index:08d}", version, 0, None, None,
                            data)


def fold_chunks(conn: Connection, tenant_id: int, conversation_id: str, version: str) -> list[dict]:
    """The chunks of one version, in order."""
    t = LayerState
    res = conn.execute(select(t.state).where(
        t.tenant_id == tenant_id, t.conversation_id == conversation_id, t.layer_version == version,
        t.layer.startswith(CHUNK_LAYER, autoescape=True)).order_by(t.layer))
    return [layer_state.decode(r[0]) for r in res]


def drop_fold_chunks(conn: Connection, tenant_id: int, conversation_id: str) -> None:
    """Every version's chunks of the conversation (before a full build writes its own)."""
    t = LayerState
    conn.execute(delete(t).where(t.tenant_id == tenant_id, t.conversation_id == conversation_id,
                                 t.layer.startswith(CHUNK_LAYER, autoescape=True)))


# ---------------------------------------------------------------- entity lookups


def _entity_rows(res) -> list[dict]:  # noqa: ANN001
    return [{"key": r[0], "kind": r[1], "label": r[2], "event_pk": r[3], "data": r[4]} for r in res]


def entities_named(conn: Connection, tenant_id: int, conversation_id: str, version: str, names: Sequence[str],
                   limit: int = 50) -> list[dict]:
    """Entity nodes whose name or an alias is one of `names` (normalised like entity names): one GIN
    index lookup. Most mentioned first."""
    if not names:
        return []
    n = GraphNode
    return _entity_rows(conn.execute(
        select(n.key, n.kind, n.label, n.event_pk, n.data)
        .where(n.tenant_id == tenant_id, n.conversation_id == conversation_id, n.layer_version == version,
               n.kind == "entity", n.names.overlap(list(names)))
        .order_by((n.data["mentions"].as_integer()).desc().nulls_last(), n.key)
        .limit(limit)
    ))


def top_entities(conn: Connection, tenant_id: int, conversation_id: str, version: str, limit: int) -> list[dict]:
    """The most mentioned entity nodes of the slice."""
    n = GraphNode
    return _entity_rows(conn.execute(
        select(n.key, n.kind, n.label, n.event_pk, n.data)
        .where(n.tenant_id == tenant_id, n.conversation_id == conversation_id, n.layer_version == version,
               n.kind == "entity")
        .order_by((n.data["mentions"].as_integer()).desc().nulls_last(), n.key)
        .limit(limit)
    ))


# ---------------------------------------------------------------- nodes and edges by key


def _node(r: Sequence[Any], light: bool) -> dict:
    return {"key": r[0], "kind": r[1], "label": r[2], "event_pk": r[3], "data": r[4] if not light else {}}


def nodes(conn: Connection, tenant_id: int, conversation_id: str, version: str, keys: list[str],
          light: bool = False) -> list[dict]:
    """The nodes of these keys, in the order given (keys the slice lacks are left out). `light`:
    without their JSON `data`."""
    if not keys:
        return []
    data = "" if light else ", data"
    res = conn.execute(text(f"SELECT key, kind, label, event_pk{data} FROM graph_nodes WHERE tenant_id = :tenant "
                            "AND conversation_id = :conv AND layer_version = :version AND key = ANY(:keys)"),
                       {"tenant": tenant_id, "conv": conversation_id, "version": version, "keys": list(keys)}).all()
    by_key = {r[0]: _node(r, light) for r in res}
    return [by_key[k] for k in keys if k in by_key]


# The edges whose src is one of :keys and those whose dst is, in one statement: two index range
# scans, each capped, the edges reaching a preferred event first when there are preferred events
# (the cap then keeps those; without, no ORDER BY: it could tempt the planner into walking the
# primary key, and the caller sorts). Every value is a bind parameter and the key and event lists
# are arrays (= ANY), so the statement's text never changes with the lists and psycopg prepares it
# once per shape.
_EDGES_SQL = """
(SELECT 0 AS dir, g.src, g.dst, g.type, g.weight, g.src_event_pk, g.dst_event_pk{meta}
 FROM graph_edges g
 WHERE g.tenant_id = :tenant AND g.conversation_id = :conv AND g.layer_version = :version
   AND g.src = ANY(CAST(:keys AS text[])){prefer_src}
 LIMIT :cap)
UNION ALL
(SELECT 1 AS dir, g.src, g.dst, g.type, g.weight, g.src_event_pk, g.dst_event_pk{meta}
 FROM graph_edges g
 WHERE g.tenant_id = :tenant AND g.conversation_id = :conv AND g.layer_version = :version
   AND g.dst = ANY(CAST(:keys AS text[])){prefer_dst}
 LIMIT :cap)
"""
_PREFER = "\n ORDER BY (g.{other}_event_pk = ANY(CAST(:prefer AS bigint[]))) DESC NULLS LAST"


@lru_cache(maxsize=None)
def _edges_sql(light: bool, preferring: bool) -> str:
    return _EDGES_SQL.format(meta="" if light else ", g.meta",
                             prefer_src=_PREFER.format(other="dst") if preferring else "",
                             prefer_dst=_PREFER.format(other="src") if preferring else "")


def edges_touching(conn: Connection, tenant_id: int, conversation_id: str, version: str, keys: list[str], cap: int,
                   light: bool = False, prefer_events: Collection[int] = ()) -> list[dict]:
    """The edges touching `keys`, at most `cap` per direction (those leaving them, then those
    reaching them): {src, dst, type, weight, src_event_pk, dst_event_pk} (+ `meta` unless `light`)."""
    params: dict[str, Any] = {"tenant": tenant_id, "conv": conversation_id, "version": version, "keys": list(keys),
                              "cap": cap}
    if prefer_events:
        params["prefer"] = sorted(prefer_events)
    out: list[tuple[int, dict]] = []
    for r in conn.execute(text(_edges_sql(light, bool(prefer_events))), params).all():
        e = {"src": r[1], "dst": r[2], "type": r[3], "weight": r[4], "src_event_pk": r[5], "dst_event_pk": r[6]}
        if not light:
            e["meta"] = r[7]
        out.append((r[0], e))
    # each branch's rows in the order its scan returned them; the src branch first (a stable sort)
    out.sort(key=lambda x: x[0])
    return [e for _, e in out]


def facet_point_events(conn: Connection, tenant_id: int, conversation_id: str, keys: Sequence[str],
                       layer_version: str | None = None, prefer: str | None = None) -> dict[str, int]:
    """Facet-point node key -> the event it was extracted from (at `layer_version`, else `prefer`,
    else the version computed last)."""
    version = layer_version or current_version(conn, tenant_id, conversation_id, "graph", prefer)
    if version is None or not keys:
        return {}
    n = GraphNode
    res = conn.execute(select(n.key, n.event_pk).where(
        n.tenant_id == tenant_id, n.conversation_id == conversation_id, n.layer_version == version,
        n.key.in_(list(keys)), n.event_pk.is_not(None)))
    return {r[0]: r[1] for r in res}
