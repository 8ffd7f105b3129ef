"""SQL for the ingestion layers (migration 0002): per-event signals, episodes, the assertion
timeline and contradictions, speaker profiles, the memory graph, layer runs, heat, and the gate's
writes to `events`.

Conversation-level layers are written as one slice per (tenant, conversation, layer_version):
`replace_*` deletes the slice and inserts the new one in the caller's transaction, so readers see
the old slice or the new one, never half of each, and another version's slice is left alone (a
rebuild with a new version runs beside the old rows; readers prefer the version they are asked for,
else the one computed last). Per-event signals are one row per event (`event_signals`), each layer
owning a group of columns with its own version column; a layer rewrites its group in place.

Readers for the query side: `signals_for`, `episodes_for`, `episode_of`, `superseding`,
`timeline_for`, `contradictions_for`, `profiles_for`, `graph_neighbourhood`,
`entities_named_in`, `search_extra_candidates`, `window_candidates`, `bump_access`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from functools import lru_cache
from typing import Any, Collection, Iterable, Sequence

import numpy as np
from sqlalchemy import BigInteger, Connection, Text, any_, bindparam, delete, func, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.layers.heat import HeatRecord, bump as heat_bump, compute_heat, new_record
from app.layers.text import norm_name
from app.storage.db import any_pk
from app.storage.events import EVENT_COLUMNS, EventRow
from app.storage.search import set_hnsw
from app.storage.models import (
    AssertionRow,
    ContradictionRow,
    Embedding,
    EpisodeRow,
    Event,
    EventSignals,
    GraphEdge,
    GraphNode,
    IndexingState,
    LayerRun,
    SpeakerProfileRow,
    Tenant,
)

# Conversation-level tables: deleted explicitly with their conversation (no single event owns a row).
CONVERSATION_TABLES = (EpisodeRow, AssertionRow, ContradictionRow, SpeakerProfileRow, GraphNode, GraphEdge,
                       LayerRun)
GATE_MODES = ("off", "tag", "filter")
# The conversation-level layers that rebuild a conversation after some of its events were forgotten
# (the same names as workers.registry.REBUILT_AFTER_FORGET).
REBUILT_AFTER_FORGET = ("consolidate", "surprise", "engrams", "graph")


# ---------------------------------------------------------------- the log, as the layers read it

def conversation_log(conn: Connection, tenant_id: int, conversation_id: str, include_gated_out: bool = False) -> list[EventRow]:
    """Every event of a conversation in time order (then id: arrival order for equal times)."""
    q = select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id)
    if not include_gated_out:
        q = q.where((Event.gate_status.is_(None)) | (Event.gate_status != "gated_out"))
    return [EventRow(*r) for r in conn.execute(q.order_by(Event.occurred_at, Event.id))]


def conversation_vectors(conn: Connection, tenant_id: int, conversation_id: str, model: str) -> dict[int, np.ndarray]:
    res = conn.execute(
        select(Embedding.event_pk, Embedding.embedding).where(
            Embedding.tenant_id == tenant_id, Embedding.conversation_id == conversation_id, Embedding.model == model
        )
    )
    return {r[0]: np.asarray(r[1], dtype=np.float32) for r in res}


def conversations_of(conn: Connection, pks: list[int]) -> list[tuple[int, str]]:
    """The distinct (tenant, conversation) of the given events (worker side: any tenant)."""
    if not pks:
        return []
    res = conn.execute(
        select(Event.tenant_id, Event.conversation_id).where(Event.id.in_(pks)).distinct()
    )
    return sorted((r[0], r[1]) for r in res)


def conversation_exists(conn: Connection, tenant_id: int, conversation_id: str) -> bool:
    return conn.execute(
        select(Event.id).where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id).limit(1)
    ).first() is not None


def tenant_conversations(conn: Connection, tenant_id: int) -> list[str]:
    res = conn.execute(select(Event.conversation_id).where(Event.tenant_id == tenant_id).distinct())
    return sorted(r[0] for r in res)


# ---------------------------------------------------------------- outbox, per conversation

def lock_conversation(conn: Connection, layer: str, tenant_id: int, conversation_id: str) -> None:
    """Serialise one layer's work on one conversation (held until the transaction ends)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
                 {"k": f"layer:{layer}:{tenant_id}:{conversation_id}"})


def pending_in_conversation(conn: Connection, layer: str, tenant_id: int, conversation_id: str) -> list[int]:
    res = conn.execute(
        select(IndexingState.event_pk).where(
            IndexingState.tenant_id == tenant_id, IndexingState.conversation_id == conversation_id,
            IndexingState.layer == layer, IndexingState.done_at.is_(None),
        )
    )
    return sorted(r[0] for r in res)


def pending_layers(conn: Connection, tenant_id: int, conversation_id: str, layers: Sequence[str]) -> set[str]:
    """Which of `layers` still have work pending in the conversation."""
    if not layers:
        return set()
    res = conn.execute(
        select(IndexingState.layer).where(
            IndexingState.tenant_id == tenant_id, IndexingState.conversation_id == conversation_id,
            IndexingState.layer.in_(list(layers)), IndexingState.done_at.is_(None),
        ).distinct()
    )
    return {r[0] for r in res}


def first_pending(conn: Connection, convs: Sequence[tuple[int, str]], layers: Sequence[str]) -> dict[str, list[int]]:
    """layer -> one pending event pk per conversation that has work pending for it (enough to
    start a conversation-level task)."""
    if not convs or not layers:
        return {}
    res = conn.execute(
        select(IndexingState.layer, func.min(IndexingState.event_pk))
        .where(
            tuple_(IndexingState.tenant_id, IndexingState.conversation_id).in_(list(convs)),
            IndexingState.layer.in_(list(layers)), IndexingState.done_at.is_(None),
        )
        .group_by(IndexingState.layer, IndexingState.tenant_id, IndexingState.conversation_id)
    )
    out: dict[str, list[int]] = {}
    for layer, pk in res:
        out.setdefault(layer, []).append(pk)
    return out


def mark_conversation_done(conn: Connection, layer: str, tenant_id: int, conversation_id: str) -> None:
    """Every event of the conversation counts as done for `layer` (a forced rebuild): rows are
    created for events that never had one (ingested before the layer existed)."""
    conn.execute(text(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at, done_at) "
        "SELECT e.id, :layer, e.tenant_id, e.conversation_id, now(), now() FROM events e "
        "WHERE e.tenant_id = :t AND e.conversation_id = :c "
        "ON CONFLICT (event_pk, layer) DO UPDATE SET done_at = now(), last_error = NULL "
        "WHERE indexing_state.done_at IS NULL"
    ), {"layer": layer, "t": tenant_id, "c": conversation_id})


def mark_conversations_pending(conn: Connection, tenant_id: int, conversation_ids: Sequence[str], layers: Sequence[str]) -> int:
    """Make the conversations' events pending again for `layers` (they rebuild from the log). The
    rows are left un-enqueued, so the beat sweeper sends them on its next pass."""
    if not conversation_ids or not layers:
        return 0
    res = conn.execute(text(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at) "
        "SELECT e.id, l.layer, e.tenant_id, e.conversation_id, NULL FROM events e "
        "CROSS JOIN unnest(CAST(:layers AS text[])) AS l(layer) "
        "WHERE e.tenant_id = :t AND e.conversation_id = ANY(:convs) "
        "ON CONFLICT (event_pk, layer) DO UPDATE SET done_at = NULL, enqueued_at = NULL, attempts = 0, last_error = NULL"
    ), {"layers": list(layers), "t": tenant_id, "convs": list(conversation_ids)})
    return res.rowcount


def mark_events_pending(conn: Connection, tenant_id: int, pks: Sequence[int], layers: Sequence[str]) -> None:
    """Make these events pending (again) for `layers`; rows are created where missing."""
    if not pks or not layers:
        return
    conn.execute(text(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at) "
        "SELECT e.id, l.layer, e.tenant_id, e.conversation_id, NULL FROM events e "
        "CROSS JOIN unnest(CAST(:layers AS text[])) AS l(layer) "
        "WHERE e.tenant_id = :t AND e.id = ANY(:pks) "
        "ON CONFLICT (event_pk, layer) DO UPDATE SET done_at = NULL, enqueued_at = NULL, attempts = 0, last_error = NULL"
    ), {"layers": list(layers), "t": tenant_id, "pks": list(pks)})


def delete_embeddings(conn: Connection, tenant_id: int, conversation_id: str, model: str) -> int:
    """A conversation's vectors for one model (an embed rebuild recomputes them)."""
    return conn.execute(delete(Embedding).where(
        Embedding.tenant_id == tenant_id, Embedding.conversation_id == conversation_id, Embedding.model == model,
    )).rowcount


def conversations_named(conn: Connection, conversation_id: str | None, tenant_id: int | None) -> list[tuple[int, str]]:
    """(tenant, conversation) pairs with events, narrowed by either or both."""
    q = select(Event.tenant_id, Event.conversation_id).distinct()
    if tenant_id is not None:
        q = q.where(Event.tenant_id == tenant_id)
    if conversation_id is not None:
        q = q.where(Event.conversation_id == conversation_id)
    return sorted((r[0], r[1]) for r in conn.execute(q))


# ---------------------------------------------------------------- layer runs and versions

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


def drop_other_versions(conn: Connection, tenant_id: int, conversation_id: str, layer: str, keep: str) -> int:
    """After a rebuild: delete the conversation's slices of `layer` written by other versions."""
    tables = {"consolidate": (EpisodeRow, AssertionRow, ContradictionRow), "engrams": (SpeakerProfileRow,),
              "graph": (GraphNode, GraphEdge)}.get(layer, ())
    n = 0
    for t in tables:
        n += conn.execute(delete(t).where(t.tenant_id == tenant_id, t.conversation_id == conversation_id,
                                          t.layer_version != keep)).rowcount
    n += conn.execute(delete(LayerRun).where(
        LayerRun.tenant_id == tenant_id, LayerRun.conversation_id == conversation_id, LayerRun.layer == layer,
        LayerRun.layer_version != keep)).rowcount
    return n


def _delete_slice(conn: Connection, table, tenant_id: int, conversation_id: str, version: str) -> None:  # noqa: ANN001
    conn.execute(delete(table).where(table.tenant_id == tenant_id, table.conversation_id == conversation_id,
                                     table.layer_version == version))


def _insert(conn: Connection, table, rows: list[dict], batch: int = 2000) -> None:  # noqa: ANN001
    for i in range(0, len(rows), batch):
        conn.execute(pg_insert(table), rows[i : i + batch])


# ---------------------------------------------------------------- consolidation (L4)

def replace_consolidation(
    conn: Connection, tenant_id: int, conversation_id: str, version: str,
    episodes: list[dict], assertions: list[dict], contradictions: list[dict],
) -> None:
    """Rows are dicts with the table's columns, without tenant/conversation/version."""
    scope = {"tenant_id": tenant_id, "conversation_id": conversation_id, "layer_version": version}
    for table, rows in ((EpisodeRow, episodes), (AssertionRow, assertions), (ContradictionRow, contradictions)):
        _delete_slice(conn, table, tenant_id, conversation_id, version)
        _insert(conn, table, [{**r, **scope} for r in rows])


def _upsert_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict], columns: Sequence[str]) -> None:
    if not rows:
        return
    stmt = pg_insert(EventSignals)
    stmt = stmt.on_conflict_do_update(
        index_elements=["event_pk"],
        set_={**{c: getattr(stmt.excluded, c) for c in columns}, "updated_at": func.now()},
    )
    # executemany of one compiled statement: the driver sends the rows in pages itself
    conn.execute(stmt, [{"tenant_id": tenant_id, "conversation_id": conversation_id, **r} for r in rows])


def _clear_signals(conn: Connection, tenant_id: int, conversation_id: str, keep: list[int], columns: dict[str, Any]) -> None:
    """Reset a layer's column group on the conversation's rows it did not write this time."""
    conn.execute(
        update(EventSignals)
        .where(EventSignals.tenant_id == tenant_id, EventSignals.conversation_id == conversation_id,
               EventSignals.event_pk.not_in(keep))
        .values(**columns)
    )


CONSOLIDATION_COLUMNS = ("consolidation_version", "episode_index", "superseded_by_event_pk")
SURPRISE_COLUMNS = ("surprise_version", "surprise", "surprise_facts", "surprise_new_facts", "surprise_contradiction",
                    "salience", "importance", "heat", "heat_stage", "heat_record", "heat_updated_at")
GRAPH_COLUMNS = ("graph_version", "entities", "resolved_dates", "time_mentions", "search_extra")


def set_consolidation_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """rows: {event_pk, consolidation_version, episode_index, superseded_by_event_pk}."""
    _upsert_signals(conn, tenant_id, conversation_id, rows, CONSOLIDATION_COLUMNS)
    _clear_signals(conn, tenant_id, conversation_id, [r["event_pk"] for r in rows],
                   {c: None for c in CONSOLIDATION_COLUMNS})


# ---------------------------------------------------------------- surprise (L5) and heat

def heat_records(conn: Connection, tenant_id: int, conversation_id: str, lock: bool = True) -> dict[int, dict]:
    q = select(EventSignals.event_pk, EventSignals.heat_record).where(
        EventSignals.tenant_id == tenant_id, EventSignals.conversation_id == conversation_id,
        EventSignals.heat_record.is_not(None),
    ).order_by(EventSignals.event_pk)
    if lock:
        q = q.with_for_update()
    return {r[0]: r[1] for r in conn.execute(q)}


def set_surprise_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """rows: every SURPRISE_COLUMNS value plus event_pk (heat fields included: the record keeps its accesses)."""
    _upsert_signals(conn, tenant_id, conversation_id, rows, SURPRISE_COLUMNS)
    _clear_signals(conn, tenant_id, conversation_id, [r["event_pk"] for r in rows],
                   {c: None for c in ("surprise_version", "surprise", "surprise_facts", "surprise_new_facts",
                                      "surprise_contradiction")})


def memory_created_at(occurred_at: datetime, ingested_at: datetime) -> datetime:
    """When a memory formed: when it happened, but never after it was stored."""
    return min(occurred_at, ingested_at)


def bump_access(conn: Connection, tenant_id: int, pks: Iterable[int], at: datetime | None = None) -> dict[int, float]:
    """Retrieval touched these events: one more presentation each (ACT-R), heat recomputed now.

    Call it after a query returns, in any transaction. Events of other tenants are ignored; an
    event with no signals row yet gets one (importance 0.5 until the surprise layer sets it).
    Returns event pk -> new heat.
    """
    ids = sorted({int(p) for p in pks})
    if not ids:
        return {}
    at = at or datetime.now(timezone.utc)
    known = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            select(EventSignals.event_pk, EventSignals.heat_record, EventSignals.importance)
            .where(EventSignals.tenant_id == tenant_id, EventSignals.event_pk.in_(ids))
            .order_by(EventSignals.event_pk)
            .with_for_update()
        )
    }
    events = {
        r[0]: r
        for r in conn.execute(
            select(Event.id, Event.conversation_id, Event.occurred_at, Event.ingested_at)
            .where(Event.tenant_id == tenant_id, Event.id.in_(ids))
        )
    }
    rows = []
    out: dict[int, float] = {}
    for pk in ids:
        ev = events.get(pk)
        if ev is None:
            continue  # another tenant's, or deleted
        rec_d, importance = known.get(pk, (None, None))
        rec = HeatRecord.from_dict(rec_d) if rec_d else new_record(
            memory_created_at(ev.occurred_at, ev.ingested_at), importance if importance is not None else 0.5)
        rec, state = heat_bump(rec, at)
        out[pk] = state.heat
        rows.append({"event_pk": pk, "tenant_id": tenant_id, "conversation_id": ev.conversation_id,
                     "heat": state.heat, "heat_stage": state.stage.value, "access_count": 1,
                     "last_access_at": at, "heat_record": rec.to_dict(), "heat_updated_at": at})
    if rows:
        stmt = pg_insert(EventSignals).values(rows)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=["event_pk"],
            set_={"heat": stmt.excluded.heat, "heat_stage": stmt.excluded.heat_stage,
                  "access_count": EventSignals.access_count + 1, "last_access_at": stmt.excluded.last_access_at,
                  "heat_record": stmt.excluded.heat_record, "heat_updated_at": stmt.excluded.heat_updated_at},
        ))
    return out


def refresh_heat(conn: Connection, now: datetime | None = None, window_h: float = 72.0, batch: int = 5000,
                 tenant_id: int | None = None) -> int:
    """Recompute `heat` for the events of conversations active within `window_h` (a layer ran on
    them, i.e. new events came in, or one of their events was retrieved). Returns rows refreshed."""
    now = now or datetime.now(timezone.utc)
    active_sql = (
        "SELECT tenant_id, conversation_id FROM layer_runs WHERE computed_at > :since "
        "UNION SELECT tenant_id, conversation_id FROM event_signals WHERE last_access_at > :since"
    )
    params: dict[str, Any] = {"since": now - _hours(window_h)}
    tenant_filter = ""
    if tenant_id is not None:
        tenant_filter = "AND s.tenant_id = :tenant"
        params["tenant"] = tenant_id
    after, total = 0, 0
    while True:
        rows = conn.execute(text(
            f"SELECT s.event_pk, s.heat_record FROM event_signals s "
            f"JOIN ({active_sql}) a ON a.tenant_id = s.tenant_id AND a.conversation_id = s.conversation_id "
            f"WHERE s.heat_record IS NOT NULL AND s.event_pk > :after {tenant_filter} "
            f"ORDER BY s.event_pk LIMIT :batch"
        ), {**params, "after": after, "batch": batch}).all()
        if not rows:
            return total
        states = [compute_heat(HeatRecord.from_dict(r[1]), now) for r in rows]
        conn.execute(text(
            "UPDATE event_signals s SET heat = v.heat, heat_stage = v.stage, heat_updated_at = :now "
            "FROM (SELECT unnest(CAST(:pks AS bigint[])) AS pk, unnest(CAST(:heats AS float8[])) AS heat, "
            "unnest(CAST(:stages AS text[])) AS stage) v WHERE s.event_pk = v.pk"
        ), {"pks": [r[0] for r in rows], "heats": [s.heat for s in states], "stages": [s.stage.value for s in states],
            "now": now})
        total += len(rows)
        after = rows[-1][0]


def _hours(h: float):  # noqa: ANN202
    from datetime import timedelta

    return timedelta(hours=h)


# ---------------------------------------------------------------- engrams (L0)

def replace_profiles(conn: Connection, tenant_id: int, conversation_id: str, version: str, rows: list[dict]) -> None:
    """rows: {speaker, message_count, profile (JSON), style (256 floats)}."""
    _delete_slice(conn, SpeakerProfileRow, tenant_id, conversation_id, version)
    scope = {"tenant_id": tenant_id, "conversation_id": conversation_id, "layer_version": version}
    _insert(conn, SpeakerProfileRow, [{**r, **scope, "style": np.asarray(r["style"], dtype=np.float32)} for r in rows])


# ---------------------------------------------------------------- memory graph

def replace_graph(conn: Connection, tenant_id: int, conversation_id: str, version: str,
                  nodes: list[dict], edges: list[dict]) -> None:
    """nodes: {key, kind, label, names, event_pk, data}; edges: {src, dst, type, weight, meta,
    src_event_pk, dst_event_pk}."""
    scope = {"tenant_id": tenant_id, "conversation_id": conversation_id, "layer_version": version}
    _delete_slice(conn, GraphEdge, tenant_id, conversation_id, version)
    _delete_slice(conn, GraphNode, tenant_id, conversation_id, version)
    _insert(conn, GraphNode, [{**r, **scope} for r in nodes])
    _insert(conn, GraphEdge, [{**r, **scope} for r in edges])


def set_graph_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """rows: {event_pk, graph_version, entities, resolved_dates, time_mentions, search_extra}."""
    _upsert_signals(conn, tenant_id, conversation_id, rows, GRAPH_COLUMNS)
    _clear_signals(conn, tenant_id, conversation_id, [r["event_pk"] for r in rows], {c: None for c in GRAPH_COLUMNS})


# ---------------------------------------------------------------- gate (writes to events)

def tenant_gate_mode(conn: Connection, tenant_id: int, default: str = "off") -> str:
    """The tenant's effective gate mode: its own, or the server default when it says 'default'."""
    mode = conn.execute(select(Tenant.gate_mode).where(Tenant.id == tenant_id)).scalar()
    return mode if mode in GATE_MODES else default


def set_tenant_gate_mode(conn: Connection, tenant_id: int, mode: str) -> None:
    if mode not in GATE_MODES + ("default",):
        raise ValueError(f"unknown gate mode {mode!r}")
    conn.execute(update(Tenant).where(Tenant.id == tenant_id).values(gate_mode=mode))


def recent_contents(conn: Connection, tenant_id: int, conversation_ids: Sequence[str], n: int) -> dict[str, list[str]]:
    """Per conversation, the contents of its `n` latest admitted events, newest first (the
    neighbours novelty is measured against at ingest)."""
    if not conversation_ids or n <= 0:
        return {}
    res = conn.execute(text(
        "SELECT c.conv, r.content FROM unnest(CAST(:convs AS text[])) AS c(conv) "
        "JOIN LATERAL (SELECT e.content, e.occurred_at, e.id FROM events e "
        "  WHERE e.tenant_id = :t AND e.conversation_id = c.conv "
        "    AND (e.gate_status IS NULL OR e.gate_status <> 'gated_out') "
        "  ORDER BY e.occurred_at DESC, e.id DESC LIMIT :n) r ON true "
        "ORDER BY c.conv, r.occurred_at DESC, r.id DESC"
    ), {"convs": list(conversation_ids), "t": tenant_id, "n": n})
    out: dict[str, list[str]] = {}
    for conv, content in res:
        out.setdefault(conv, []).append(content)
    return out


def set_gate(conn: Connection, rows: list[dict]) -> None:
    """rows: {id, gate_novelty, gate_salience, gate_prediction_error, gate_score, gate_status}."""
    if not rows:
        return
    stmt = (
        update(Event)
        .where(Event.id == bindparam("pk"))
        .values(gate_novelty=bindparam("n"), gate_salience=bindparam("s"), gate_prediction_error=bindparam("p"),
                gate_score=bindparam("score"), gate_status=bindparam("status"))
    )
    conn.execute(stmt, [{"pk": r["id"], "n": r["gate_novelty"], "s": r["gate_salience"],
                         "p": r["gate_prediction_error"], "score": r["gate_score"], "status": r["gate_status"]}
                        for r in rows])


def gate_signals(conn: Connection, tenant_id: int, conversation_id: str | None = None) -> list[EventRow]:
    """Every event of a tenant (or one conversation), for re-gating."""
    q = select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id)
    if conversation_id is not None:
        q = q.where(Event.conversation_id == conversation_id)
    return [EventRow(*r) for r in conn.execute(q.order_by(Event.conversation_id, Event.occurred_at, Event.id))]


# ---------------------------------------------------------------- forgetting

def delete_conversation_rows(conn: Connection, tenant_id: int, conversation_ids: Sequence[str]) -> None:
    """Every conversation-level derived row of these conversations (per-event rows go by cascade)."""
    convs = list(conversation_ids)
    if not convs:
        return
    for t in CONVERSATION_TABLES:
        conn.execute(delete(t).where(t.tenant_id == tenant_id, t.conversation_id.in_(convs)))


def forget_derived(conn: Connection, tenant_id: int, conversation_ids: Sequence[str], layers: Sequence[str]) -> None:
    """After some of a conversation's events were deleted (a forgotten speaker): drop every
    conversation-level row that could hold their words (summaries, profiles, graph labels,
    assertions), clear the text-bearing per-event signals, and make the remaining events pending
    for the conversation-level layers so they rebuild without the deleted ones."""
    convs = list(conversation_ids)
    if not convs:
        return
    delete_conversation_rows(conn, tenant_id, convs)
    conn.execute(
        update(EventSignals)
        .where(EventSignals.tenant_id == tenant_id, EventSignals.conversation_id.in_(convs))
        .values(**{c: None for c in CONSOLIDATION_COLUMNS + GRAPH_COLUMNS},
                surprise_version=None)
    )
    mark_conversations_pending(conn, tenant_id, convs, layers)


# ---------------------------------------------------------------- readers

@dataclass(frozen=True)
class EventSignalsView:
    event_pk: int
    conversation_id: str
    surprise: float | None
    surprise_facts: int | None
    salience: float | None
    importance: float | None
    episode_index: int | None
    superseded_by: int | None
    entities: tuple[str, ...]
    resolved_dates: tuple[date, ...]
    time_mentions: list[dict]
    search_extra: str | None
    heat: float | None
    heat_stage: str | None
    access_count: int
    last_access_at: datetime | None


def signals_for(conn: Connection, tenant_id: int, pks: Iterable[int]) -> dict[int, EventSignalsView]:
    """Per-event signals of the given events (those that have any), keyed by event pk."""
    ids = sorted({int(p) for p in pks})
    if not ids:
        return {}
    s = EventSignals
    res = conn.execute(select(
        s.event_pk, s.conversation_id, s.surprise, s.surprise_facts, s.salience, s.importance, s.episode_index,
        s.superseded_by_event_pk, s.entities, s.resolved_dates, s.time_mentions, s.search_extra, s.heat,
        s.heat_stage, s.access_count, s.last_access_at,
    ).where(s.tenant_id == tenant_id, s.event_pk == any_pk(ids))).all()
    out = {}
    for r in res:
        out[r[0]] = EventSignalsView(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], tuple(r[8] or ()),
                                     tuple(r[9] or ()), list(r[10] or []), r[11], r[12], r[13], r[14] or 0, r[15])
    return out


def superseding(conn: Connection, tenant_id: int, pks: Iterable[int]) -> dict[int, int]:
    """event pk -> the later event whose assertion replaced one of this event's (knowledge updates)."""
    ids = sorted({int(p) for p in pks})
    if not ids:
        return {}
    res = conn.execute(select(EventSignals.event_pk, EventSignals.superseded_by_event_pk).where(
        EventSignals.tenant_id == tenant_id, EventSignals.event_pk == any_pk(ids),
        EventSignals.superseded_by_event_pk.is_not(None)))
    return {r[0]: r[1] for r in res}


@dataclass(frozen=True)
class EpisodeView:
    index: int
    start: datetime
    end: datetime
    speakers: list[str]
    boundary: str
    summary: str
    event_pks: list[int]
    summary_event_pks: list[int]


def episodes_for(conn: Connection, tenant_id: int, conversation_id: str, layer_version: str | None = None,
                 prefer: str | None = None) -> tuple[str | None, list[EpisodeView]]:
    """(version read, episodes in order). `layer_version` pins a version; else `prefer`, else the latest."""
    version = layer_version or _version(conn, tenant_id, conversation_id, "consolidate", prefer)
    if version is None:
        return None, []
    e = EpisodeRow
    res = conn.execute(select(e.idx, e.start_at, e.end_at, e.speakers, e.boundary, e.summary, e.event_pks,
                              e.summary_event_pks)
                       .where(e.tenant_id == tenant_id, e.conversation_id == conversation_id,
                              e.layer_version == version).order_by(e.idx))
    return version, [EpisodeView(r[0], r[1], r[2], list(r[3]), r[4], r[5], list(r[6]), list(r[7])) for r in res]


def episode_of(conn: Connection, tenant_id: int, pks: Iterable[int]) -> dict[int, int]:
    """event pk -> index of its episode (current consolidation)."""
    return {pk: s.episode_index for pk, s in signals_for(conn, tenant_id, pks).items() if s.episode_index is not None}


def episodes_containing(conn: Connection, tenant_id: int, pks: Iterable[int]) -> dict[int, tuple[str, EpisodeView]]:
    """event pk -> (conversation, its episode in the current consolidation), for events that have one.
    One read of the signals and one of the episodes per conversation involved (usually one)."""
    sig = signals_for(conn, tenant_id, pks)
    out: dict[int, tuple[str, EpisodeView]] = {}
    for conv in sorted({s.conversation_id for s in sig.values() if s.episode_index is not None}):
        _, episodes = episodes_for(conn, tenant_id, conv)
        by_index = {ep.index: ep for ep in episodes}
        for pk, s in sig.items():
            if s.conversation_id == conv and s.episode_index in by_index:
                out[pk] = (conv, by_index[s.episode_index])
    return out


def _version(conn: Connection, tenant_id: int, conversation_id: str, layer: str, prefer: str | None) -> str | None:
    run = pick_version(conn, tenant_id, conversation_id, layer, prefer)
    return run.layer_version if run else None


@dataclass(frozen=True)
class AssertionView:
    key: str
    event_pk: int
    entity: str
    attribute: str
    value: str
    time: datetime
    negated: bool
    superseded_by: str | None


@dataclass(frozen=True)
class ContradictionView:
    key: str
    entity: str
    attribute: str
    earlier_event_pk: int
    later_event_pk: int
    earlier_value: str
    later_value: str
    earlier_at: datetime
    later_at: datetime
    kind: str


def timeline_for(conn: Connection, tenant_id: int, conversation_id: str, layer_version: str | None = None,
                 prefer: str | None = None, entity: str | None = None, attribute: str | None = None,
                 ) -> tuple[str | None, list[AssertionView], list[ContradictionView]]:
    """(version, assertions in time order, contradictions), optionally for one entity / attribute."""
    version = layer_version or _version(conn, tenant_id, conversation_id, "consolidate", prefer)
    if version is None:
        return None, [], []
    a, c = AssertionRow, ContradictionRow
    qa = select(a.key, a.event_pk, a.entity, a.attribute, a.value, a.asserted_at, a.negated, a.superseded_by_key).where(
        a.tenant_id == tenant_id, a.conversation_id == conversation_id, a.layer_version == version)
    qc = select(c.key, c.entity, c.attribute, c.earlier_event_pk, c.later_event_pk, c.earlier_value, c.later_value,
                c.earlier_at, c.later_at, c.kind).where(
        c.tenant_id == tenant_id, c.conversation_id == conversation_id, c.layer_version == version)
    if entity is not None:
        qa = qa.where(func.lower(a.entity) == entity.lower())
        qc = qc.where(func.lower(c.entity) == entity.lower())
    if attribute is not None:
        qa = qa.where(a.attribute == attribute)
        qc = qc.where(c.attribute == attribute)
    assertions = [AssertionView(*r) for r in conn.execute(qa.order_by(a.asserted_at, a.event_pk, a.key))]
    contradictions = [ContradictionView(*r) for r in conn.execute(qc.order_by(c.later_at, c.key))]
    return version, assertions, contradictions


def contradictions_for(conn: Connection, tenant_id: int, conversation_id: str, prefer: str | None = None) -> list[ContradictionView]:
    return timeline_for(conn, tenant_id, conversation_id, prefer=prefer)[2]


def profiles_for(conn: Connection, tenant_id: int, conversation_id: str, layer_version: str | None = None,
                 prefer: str | None = None, include_vectors: bool = False) -> tuple[str | None, list[dict]]:
    """(version, profiles as JSON dicts by speaker name); `style_vector` only when asked for."""
    version = layer_version or _version(conn, tenant_id, conversation_id, "engrams", prefer)
    if version is None:
        return None, []
    p = SpeakerProfileRow
    cols = [p.speaker, p.profile] + ([p.style] if include_vectors else [])
    res = conn.execute(select(*cols).where(p.tenant_id == tenant_id, p.conversation_id == conversation_id,
                                           p.layer_version == version).order_by(p.speaker))
    out = []
    for r in res:
        prof = dict(r[1])
        if include_vectors:
            prof["style_vector"] = [float(x) for x in np.asarray(r[2])]
        out.append(prof)
    return version, out


# ---------------------------------------------------------------- graph readers

@dataclass
class GraphView:
    layer_version: str | None
    seeds: list[str]
    nodes: list[dict]  # {key, kind, label, event_pk, data}
    edges: list[dict]  # {src, dst, type, weight, meta}
    truncated: bool = False
    stats: dict[str, Any] = field(default_factory=dict)


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’&\.\-]*")


def name_candidates(query: str, max_n: int = 3) -> list[str]:
    """Every 1- to 3-word phrase of the text, normalised like entity names (for an index lookup)."""
    toks = _WORD.findall(query)
    out: set[str] = set()
    for n in range(1, max_n + 1):
        for i in range(len(toks) - n + 1):
            key = norm_name(" ".join(toks[i : i + n]))
            if key and len(key) > 1:
                out.add(key)
    return sorted(out)


def entities_named_in(conn: Connection, tenant_id: int, conversation_id: str, text_or_names: str | Sequence[str],
                      layer_version: str | None = None, prefer: str | None = None, limit: int = 50) -> list[dict]:
    """Entity nodes whose name or an alias is named in the text (or equals one of the names):
    one GIN index lookup. Most mentioned first."""
    version = layer_version or _version(conn, tenant_id, conversation_id, "graph", prefer)
    if version is None:
        return []
    cands = name_candidates(text_or_names) if isinstance(text_or_names, str) else sorted(
        {norm_name(n) for n in text_or_names if norm_name(n)})
    if not cands:
        return []
    n = GraphNode
    res = conn.execute(
        select(n.key, n.kind, n.label, n.event_pk, n.data)
        .where(n.tenant_id == tenant_id, n.conversation_id == conversation_id, n.layer_version == version,
               n.kind == "entity", n.names.overlap(cands))
        .order_by((n.data["mentions"].as_integer()).desc().nulls_last(), n.key)
        .limit(limit)
    )
    return [{"key": r[0], "kind": r[1], "label": r[2], "event_pk": r[3], "data": r[4]} for r in res]


def top_entities(conn: Connection, tenant_id: int, conversation_id: str, version: str, limit: int) -> list[dict]:
    n = GraphNode
    res = conn.execute(
        select(n.key, n.kind, n.label, n.event_pk, n.data)
        .where(n.tenant_id == tenant_id, n.conversation_id == conversation_id, n.layer_version == version,
               n.kind == "entity")
        .order_by((n.data["mentions"].as_integer()).desc().nulls_last(), n.key)
        .limit(limit)
    )
    return [{"key": r[0], "kind": r[1], "label": r[2], "event_pk": r[3], "data": r[4]} for r in res]


_EDGE_ORDER = {"belongs_to": 0, "involves_entity": 1, "evolution": 2, "causal": 3, "temporal": 4}


def graph_neighbourhood(
    conn: Connection, tenant_id: int, conversation_id: str, entity_names: Sequence[str] | None = None,
    limit: int = 40, *, query: str | None = None, depth: int = 2, layer_version: str | None = None,
    prefer: str | None = None, seeds: Sequence[str] | None = None, light: bool = False,
    prefer_events: Collection[int] = (),
) -> GraphView:
    """The graph around named entities (or entities named in `query`, or given seed node keys),
    breadth first to `depth` hops, at most `limit` nodes. Every step is an index lookup (entity
    names by GIN, edges by (scope, src) / (scope, dst), nodes by primary key); nothing else of
    the conversation is read. With no names at all, the most mentioned entities are the seeds.

    `light` (the query path): edges without their JSON `meta`, nodes without `data`, and at most
    `2 * limit` edges per hop and direction, those reaching `prefer_events` (the events other
    signals found) first. A speaker's entity touches most of a conversation; without the preference
    the `limit` would keep whichever neighbours sort first, not the ones that matter to this question."""
    version = layer_version or _version(conn, tenant_id, conversation_id, "graph", prefer)
    view = GraphView(version, [], [], [])
    if version is None:
        return view
    limit = max(1, limit)
    seed_nodes: list[dict] = []
    if seeds:
        seed_nodes = _nodes(conn, tenant_id, conversation_id, version, list(seeds))
    elif entity_names:
        seed_nodes = entities_named_in(conn, tenant_id, conversation_id, list(entity_names), version, limit=limit)
    elif query:
        seed_nodes = entities_named_in(conn, tenant_id, conversation_id, query, version, limit=limit)
    if not seed_nodes and not (seeds or entity_names or query):
        seed_nodes = top_entities(conn, tenant_id, conversation_id, version, min(limit, 5))
    nodes: dict[str, dict] = {}
    for s in seed_nodes[:limit]:
        nodes[s["key"]] = s
    view.seeds = list(nodes)
    frontier = list(nodes)
    edges: dict[tuple[str, str, str], dict] = {}
    rank = _edge_rank(set(prefer_events))
    for _ in range(max(0, depth)):
        if not frontier or len(nodes) >= limit:
            break
        found = _edges_touching(conn, tenant_id, conversation_id, version, frontier,
                                cap=2 * limit if light else max(200, 20 * limit), light=light,
                                prefer_events=prefer_events)
        found.sort(key=rank)
        wanted: dict[str, None] = {}  # insertion-ordered set: the best-sorted edges' nodes first
        for e in found:
            edges.setdefault((e["src"], e["dst"], e["type"]), e)
            for k in (e["src"], e["dst"]):
                if k not in nodes:
                    wanted[k] = None
        room = limit - len(nodes)
        if len(wanted) > room:
            view.truncated = True
        new = _nodes(conn, tenant_id, conversation_id, version, list(wanted)[:room], light=light)
        for n in new:
            nodes[n["key"]] = n
        frontier = [n["key"] for n in new]
    view.nodes = list(nodes.values())
    keep = set(nodes)
    view.edges = [e for e in edges.values() if e["src"] in keep and e["dst"] in keep]
    return view


def _edge_rank(preferred: set[int]):
    """Sort key for a hop's edges: those reaching a preferred event first, then by type, then by name
    (deterministic). A few thousand edges per query, so no helper calls inside the key."""
    order = _EDGE_ORDER
    if not preferred:
        return lambda e: (order.get(e["type"], 9), e["src"], e["dst"])
    return lambda e: (e["src_event_pk"] not in preferred and e["dst_event_pk"] not in preferred,
                      order.get(e["type"], 9), e["src"], e["dst"])


@lru_cache(maxsize=None)
def _edges_stmt(towards: str, light: bool, preferring: bool):
    """Edges whose `towards` end ("src" or "dst") is one of :keys, built once per shape: every value
    is a bind parameter, keys and events arrays (= ANY) rather than one placeholder per value, so the
    statement's text never changes and psycopg prepares it once."""
    g = GraphEdge
    col, other = (g.src, g.dst_event_pk) if towards == "src" else (g.dst, g.src_event_pk)
    cols = (g.src, g.dst, g.type, g.weight, g.src_event_pk, g.dst_event_pk) + (() if light else (g.meta,))
    stmt = select(*cols).where(
        g.tenant_id == bindparam("tenant"), g.conversation_id == bindparam("conv"),
        g.layer_version == bindparam("version"), col == any_(bindparam("keys", type_=ARRAY(Text))))
    if preferring:
        # the few thousand edges of the frontier are sorted in the database so the cap keeps the
        # preferred ones; without a preference no ORDER BY (it could tempt the planner into walking
        # the primary key; the caller sorts)
        stmt = stmt.order_by((other == any_(bindparam("prefer", type_=ARRAY(BigInteger)))).desc().nulls_last())
    return stmt.limit(bindparam("cap"))


def _edges_touching(conn: Connection, tenant_id: int, conversation_id: str, version: str, keys: list[str], cap: int,
                    light: bool = False, prefer_events: Collection[int] = ()) -> list[dict]:
    params: dict[str, Any] = {"tenant": tenant_id, "conv": conversation_id, "version": version, "keys": list(keys),
                              "cap": cap}
    if prefer_events:
        params["prefer"] = sorted(prefer_events)
    out = []
    for towards in ("src", "dst"):  # two index range scans rather than one OR
        for r in conn.execute(_edges_stmt(towards, light, bool(prefer_events)), params).all():
            e = {"src": r[0], "dst": r[1], "type": r[2], "weight": r[3], "src_event_pk": r[4], "dst_event_pk": r[5]}
            if not light:
                e["meta"] = r[6]
            out.append(e)
    return out


@lru_cache(maxsize=None)
def _nodes_stmt(light: bool):
    n = GraphNode
    cols = (n.key, n.kind, n.label, n.event_pk) + (() if light else (n.data,))
    return select(*cols).where(n.tenant_id == bindparam("tenant"), n.conversation_id == bindparam("conv"),
                               n.layer_version == bindparam("version"),
                               n.key == any_(bindparam("keys", type_=ARRAY(Text))))


def _nodes(conn: Connection, tenant_id: int, conversation_id: str, version: str, keys: list[str],
           light: bool = False) -> list[dict]:
    if not keys:
        return []
    res = conn.execute(_nodes_stmt(light),
                       {"tenant": tenant_id, "conv": conversation_id, "version": version, "keys": list(keys)}).all()
    by_key = {r[0]: {"key": r[0], "kind": r[1], "label": r[2], "event_pk": r[3], "data": r[4] if not light else {}}
              for r in res}
    return [by_key[k] for k in keys if k in by_key]


def facet_point_events(conn: Connection, tenant_id: int, conversation_id: str, keys: Sequence[str],
                       layer_version: str | None = None, prefer: str | None = None) -> dict[str, int]:
    """Facet-point node key -> the event it was extracted from."""
    version = layer_version or _version(conn, tenant_id, conversation_id, "graph", prefer)
    if version is None or not keys:
        return {}
    n = GraphNode
    res = conn.execute(select(n.key, n.event_pk).where(
        n.tenant_id == tenant_id, n.conversation_id == conversation_id, n.layer_version == version,
        n.key.in_(list(keys)), n.event_pk.is_not(None)))
    return {r[0]: r[1] for r in res}


# ---------------------------------------------------------------- lexical over derived text

_EXTRA_SQL = """
WITH q AS (
    SELECT replace(websearch_to_tsquery('english', :query)::text, ' & ', ' | ')::tsquery AS tsq
)
SELECT s.event_pk, ts_rank_cd(s.search_extra_tsv, q.tsq, 1) AS score
FROM event_signals s JOIN events e ON e.id = s.event_pk, q
WHERE s.tenant_id = :tenant_id {conv} AND s.search_extra_tsv @@ q.tsq
  AND (e.gate_status IS NULL OR e.gate_status <> 'gated_out')
ORDER BY score DESC, s.event_pk
LIMIT :limit
"""


def search_extra_candidates(conn: Connection, tenant_id: int, conversation_id: str | None, query: str,
                            limit: int = 100) -> list[tuple[int, float]]:
    """Events whose derived text (resolved absolute dates, entity names and aliases) matches the
    query: "What happened on 6 May 2023?" finds "... last Saturday" said on 8 May. Best first."""
    params: dict[str, Any] = {"tenant_id": tenant_id, "query": query, "limit": limit}
    conv = ""
    if conversation_id is not None:
        conv = "AND s.conversation_id = :conversation_id"
        params["conversation_id"] = conversation_id
    return [(r[0], float(r[1])) for r in conn.execute(text(_EXTRA_SQL.format(conv=conv)), params)]


# ---------------------------------------------------------------- the question's time window

_WINDOW_SQL = """
SELECT e.id, 1 - (em.embedding <=> :vec) AS score
FROM events e JOIN embeddings em ON em.event_pk = e.id AND em.model = :model
{join}
WHERE e.tenant_id = :tenant_id {conv}
  AND (e.gate_status IS NULL OR e.gate_status <> 'gated_out')
  AND ({when})
ORDER BY em.embedding <=> :vec, e.id
LIMIT :limit
"""


def window_candidates(conn: Connection, tenant_id: int, conversation_id: str | None, vector: np.ndarray,
                      model: str, start: datetime, end: datetime, limit: int = 100) -> list[tuple[int, float]]:
    """Events inside the question's time window [start, end), closest in meaning first.

    Inside a conversation "inside" also means talking about a date in the window (the graph layer's
    resolved dates: "last Saturday" said on 8 May is about 6 May); across a tenant only the time an
    event was said counts (the HNSW scan filters it; no per-event signals are joined).
    """
    params: dict[str, Any] = {"tenant_id": tenant_id, "vec": np.asarray(vector, dtype=np.float32), "model": model,
                              "start": start, "end": end, "limit": limit}
    set_hnsw(conn)  # iterative scans: a time filter must not starve the HNSW result
    said = "e.occurred_at >= :start AND e.occurred_at < :end"
    if conversation_id is None:
        sql = _WINDOW_SQL.format(join="", conv="", when=said)
    else:
        params.update(conversation_id=conversation_id, start_d=start.date(), end_d=end.date())
        about = ("EXISTS (SELECT 1 FROM unnest(s.resolved_dates) d WHERE d >= :start_d AND "
                 "(d < :end_d OR (d = :start_d AND :start_d = :end_d)))")
        sql = _WINDOW_SQL.format(join="LEFT JOIN event_signals s ON s.event_pk = e.id",
                                 conv="AND e.conversation_id = :conversation_id", when=f"({said}) OR {about}")
    return [(r[0], float(r[1])) for r in conn.execute(text(sql), params)]


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
