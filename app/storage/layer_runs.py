"""SQL for layer runs and versions (`layer_runs`), and for a conversation's derived slices as a whole.

Conversation-level layers are written as one slice per (tenant, conversation, layer_version): a
writer deletes the slice and inserts the new one in the caller's transaction (`delete_slice`,
`insert_slice`), so readers see the old slice or the new one, never half of each, and another
version's slice is left alone (a rebuild with a new version runs beside the old rows; readers
prefer the version they are asked for, else the one computed last: `current_version`).

Also here: the advisory lock that serialises one layer's work on one conversation, the deletes
that drop a conversation's derived rows (forgetting, pruning old versions), and the per-layer
counts of the current rows (reports).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import Connection, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.models import (
    AssertionRow,
    ContradictionRow,
    EpisodeRow,
    GraphEdge,
    GraphNode,
    LayerRun,
    LayerState,
    SpeakerProfileRow,
)

# Conversation-level tables: deleted explicitly with their conversation (no single event owns a row).
CONVERSATION_TABLES = (EpisodeRow, AssertionRow, ContradictionRow, SpeakerProfileRow, GraphNode, GraphEdge,
                       LayerRun, LayerState)
# The slices each conversation-level layer writes (per-event signals are rewritten in place instead).
LAYER_TABLES = {"consolidate": (EpisodeRow, AssertionRow, ContradictionRow), "engrams": (SpeakerProfileRow,),
                "graph": (GraphNode, GraphEdge)}


def lock_conversation(conn: Connection, layer: str, tenant_id: int, conversation_id: str) -> None:
    """Serialise one layer's work on one conversation (held until the transaction ends)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
                 {"k": f"layer:{layer}:{tenant_id}:{conversation_id}"})


# ---------------------------------------------------------------- runs and versions

def record_run(conn: Connection, tenant_id: int, conversation_id: str, layer: str, layer_version: str,
               events: int, seconds: float, stats: dict[str, Any]) -> None:
    stmt = pg_insert(LayerRun).values(
        tenant_id=tenant_id, conversation_id=conversation_id, layer=layer, layer_version=layer_version,
        computed_at=func.now(), events=events, seconds=round(seconds, 4), stats=stats,
    )
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["tenant_id", "conversation_id", "layer", "layer_version"],
        set_={"computed_at": func.now(), "events": stmt.excluded.events, "seconds": stmt.excluded.seconds,
              "stats": stmt.excluded.stats},
    ))


@dataclass(frozen=True)
class RunInfo:
    layer: str
    layer_version: str
    computed_at: datetime
    events: int
    seconds: float
    stats: dict[str, Any]


def runs_for(conn: Connection, tenant_id: int, conversation_id: str, layer: str | None = None) -> list[RunInfo]:
    q = select(LayerRun.layer, LayerRun.layer_version, LayerRun.computed_at, LayerRun.events, LayerRun.seconds,
               LayerRun.stats).where(LayerRun.tenant_id == tenant_id, LayerRun.conversation_id == conversation_id)
    if layer is not None:
        q = q.where(LayerRun.layer == layer)
    return [RunInfo(*r) for r in conn.execute(q.order_by(LayerRun.layer, LayerRun.computed_at.desc()))]


def pick_version(conn: Connection, tenant_id: int, conversation_id: str, layer: str, prefer: str | None = None) -> RunInfo | None:
    """The run to read: `prefer` when it has been computed for the conversation, else the latest."""
    runs = runs_for(conn, tenant_id, conversation_id, layer)
    for r in runs:
        if r.layer_version == prefer:
            return r
    return max(runs, key=lambda r: r.computed_at) if runs else None


def current_version(conn: Connection, tenant_id: int, conversation_id: str, layer: str,
                    prefer: str | None = None) -> str | None:
    """The version readers of `layer` read for the conversation (see `pick_version`); None before any run."""
    run = pick_version(conn, tenant_id, conversation_id, layer, prefer)
    return run.layer_version if run else None


def drop_other_versions(conn: Connection, tenant_id: int, conversation_id: str, layer: str, keep: str) -> int:
    """After a rebuild: delete the conversation's slices of `layer` written by other versions."""
    n = 0
    for t in LAYER_TABLES.get(layer, ()):
        n += conn.execute(delete(t).where(t.tenant_id == tenant_id, t.conversation_id == conversation_id,
                                          t.layer_version != keep)).rowcount
    n += conn.execute(delete(LayerRun).where(
        LayerRun.tenant_id == tenant_id, LayerRun.conversation_id == conversation_id, LayerRun.layer == layer,
        LayerRun.layer_version != keep)).rowcount
    conn.execute(delete(LayerState).where(
        LayerState.tenant_id == tenant_id, LayerState.conversation_id == conversation_id, LayerState.layer == layer,
        LayerState.layer_version != keep))
    return n


# ---------------------------------------------------------------- slices

def delete_slice(conn: Connection, table, tenant_id: int, conversation_id: str, version: str) -> None:  # noqa: ANN001
    """Delete one version's slice of a conversation-level table."""
    conn.execute(delete(table).where(table.tenant_id == tenant_id, table.conversation_id == conversation_id,
                                     table.layer_version == version))


def insert_slice(conn: Connection, table, tenant_id: int, conversation_id: str, version: str,  # noqa: ANN001
                 rows: list[dict], batch: int = 2000) -> None:
    """Insert rows (dicts of the table's columns, without tenant/conversation/version) into one slice."""
    scope = {"tenant_id": tenant_id, "conversation_id": conversation_id, "layer_version": version}
    rows = [{**r, **scope} for r in rows]
    for i in range(0, len(rows), batch):
        conn.execute(pg_insert(table), rows[i : i + batch])


def delete_conversation_rows(conn: Connection, tenant_id: int, conversation_ids: Sequence[str]) -> None:
    """Every conversation-level derived row of these conversations, every version (per-event rows
    go with their events by cascade)."""
    convs = list(conversation_ids)
    if not convs:
        return
    for t in CONVERSATION_TABLES:
        conn.execute(delete(t).where(t.tenant_id == tenant_id, t.conversation_id.in_(convs)))


# ---------------------------------------------------------------- counts (reports, the closing note)

def layer_counts(conn: Connection, tenant_id: int, conversation_id: str | None = None) -> dict[str, Any]:
    """Per-layer counts of the current rows (latest version per conversation)."""
    params: dict[str, Any] = {"t": tenant_id}
    cf = ""
    if conversation_id is not None:
        cf = "AND conversation_id = :c"
        params["c"] = conversation_id

    def one(sql: str) -> int:
        return int(conn.execute(text(sql), params).scalar_one())

    latest = ("(tenant_id, conversation_id, layer_version) IN (SELECT DISTINCT ON (conversation_id) tenant_id, "
              "conversation_id, layer_version FROM layer_runs WHERE tenant_id = :t AND layer = '{layer}' "
              "ORDER BY conversation_id, computed_at DESC)")
    out: dict[str, Any] = {
        "episodes": one(f"SELECT count(*) FROM episodes WHERE tenant_id = :t {cf} AND " + latest.format(layer="consolidate")),
        "episodes_by_boundary": {r[0]: int(r[1]) for r in conn.execute(text(
            f"SELECT boundary, count(*) FROM episodes WHERE tenant_id = :t {cf} AND "
            + latest.format(layer="consolidate") + " GROUP BY 1"), params)},
        "assertions": one(f"SELECT count(*) FROM assertions WHERE tenant_id = :t {cf} AND " + latest.format(layer="consolidate")),
        "contradictions": one(f"SELECT count(*) FROM contradictions WHERE tenant_id = :t {cf} AND "
                              + latest.format(layer="consolidate")),
        "speaker_profiles": one(f"SELECT count(*) FROM speaker_profiles WHERE tenant_id = :t {cf} AND "
                                + latest.format(layer="engrams")),
        "nodes_by_kind": {r[0]: int(r[1]) for r in conn.execute(text(
            f"SELECT kind, count(*) FROM graph_nodes WHERE tenant_id = :t {cf} AND " + latest.format(layer="graph")
            + " GROUP BY 1"), params)},
        "entities_by_type": {r[0]: int(r[1]) for r in conn.execute(text(
            f"SELECT data->>'kind', count(*) FROM graph_nodes WHERE tenant_id = :t {cf} AND kind = 'entity' AND "
            + latest.format(layer="graph") + " GROUP BY 1"), params)},
        "edges_by_type": {r[0]: int(r[1]) for r in conn.execute(text(
            f"SELECT type, count(*) FROM graph_edges WHERE tenant_id = :t {cf} AND " + latest.format(layer="graph")
            + " GROUP BY 1"), params)},
        "events_with_surprise": one(f"SELECT count(*) FROM event_signals WHERE tenant_id = :t {cf} AND surprise IS NOT NULL"),
        "mean_surprise": float(conn.execute(text(
            f"SELECT coalesce(avg(surprise), 0) FROM event_signals WHERE tenant_id = :t {cf}"), params).scalar_one()),
        "events_with_resolved_dates": one(
            f"SELECT count(*) FROM event_signals WHERE tenant_id = :t {cf} AND cardinality(resolved_dates) > 0"),
        "superseded_events": one(
            f"SELECT count(*) FROM event_signals WHERE tenant_id = :t {cf} AND superseded_by_event_pk IS NOT NULL"),
    }
    row = conn.execute(text(
        "SELECT count(*) FILTER (WHERE m->>'kind' IN ('relative', 'vague')), "
        "count(*) FILTER (WHERE m->>'kind' IN ('relative', 'vague') AND (m->>'resolved')::boolean), "
        "count(*) FILTER (WHERE m->>'kind' = 'relative'), "
        "count(*) FILTER (WHERE m->>'kind' = 'relative' AND (m->>'resolved')::boolean), count(*) "
        f"FROM event_signals s, jsonb_array_elements(coalesce(s.time_mentions, '[]'::jsonb)) m "
        f"WHERE s.tenant_id = :t {cf.replace('conversation_id', 's.conversation_id')}"), params).one()
    out["time_mentions"] = {
        "total": int(row[4]), "relative_or_vague": int(row[0]), "relative_or_vague_resolved": int(row[1]),
        "relative": int(row[2]), "relative_resolved": int(row[3]),
        "share_resolved_incl_vague": round(row[1] / row[0], 4) if row[0] else 0.0,
        "share_relative_resolved": round(row[3] / row[2], 4) if row[2] else 0.0,
    }
    return out
