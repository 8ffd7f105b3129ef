"""SQL for per-event signals (`event_signals`): one row per event, each layer owning a group of
columns with its own version column; a layer rewrites its group in place (`set_signal_group`).

The groups: consolidation (episode, superseded-by), surprise (sigma, salience, importance and the
heat fields), graph (entities, resolved dates, time mentions, derived search text). Heat is
written by the surprise layer, by a retrieval (`record_accesses`) and by the periodic refresh
(`set_heat`); what heat is lives in `app.domain.layers.heat`, when it is recomputed in
`app.services.heat`.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Iterable, Sequence

from sqlalchemy import Connection, exists, func, select, text, update
from sqlalchemy.orm import aliased
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.db import any_pk
from app.storage.models import Event, EventSignals

CONSOLIDATION_COLUMNS = ("consolidation_version", "episode_index", "superseded_by_event_pk")
SURPRISE_COLUMNS = ("surprise_version", "surprise", "surprise_facts", "surprise_new_facts", "surprise_contradiction",
                    "salience", "importance", "heat", "heat_stage", "heat_record", "heat_updated_at")
# The surprise columns a recompute clears on events it did not score (heat keeps its accesses).
SURPRISE_SCORE_COLUMNS = ("surprise_version", "surprise", "surprise_facts", "surprise_new_facts",
                          "surprise_contradiction")
GRAPH_COLUMNS = ("graph_version", "entities", "resolved_dates", "time_mentions", "search_extra")


# ---------------------------------------------------------------- writes by the layers

def set_signal_group(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict],
                     columns: Sequence[str], cleared: Sequence[str] | None = None) -> None:
    """Write one layer's column group for the conversation's events in `rows` ({event_pk, *columns}),
    and set `cleared` (default: the whole group) to NULL on the conversation's rows not written."""
    if rows:
        stmt = pg_insert(EventSignals)
        stmt = stmt.on_conflict_do_update(
            index_elements=["event_pk"],
            set_={**{c: getattr(stmt.excluded, c) for c in columns}, "updated_at": func.now()},
        )
        # executemany of one compiled statement: the driver sends the rows in pages itself
        conn.execute(stmt, [{"tenant_id": tenant_id, "conversation_id": conversation_id, **r} for r in rows])
    if cleared is not None and not cleared:
        return  # an incremental write: the other rows stay as they are
    conn.execute(
        update(EventSignals)
        .where(EventSignals.tenant_id == tenant_id, EventSignals.conversation_id == conversation_id,
               EventSignals.event_pk.not_in([r["event_pk"] for r in rows]))
        .values(**{c: None for c in (columns if cleared is None else cleared)})
    )


def set_consolidation_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """rows: {event_pk, consolidation_version, episode_index, superseded_by_event_pk}."""
    set_signal_group(conn, tenant_id, conversation_id, rows, CONSOLIDATION_COLUMNS)


def add_consolidation_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """The consolidation group of some events only (an incremental run): the other rows are left alone."""
    set_signal_group(conn, tenant_id, conversation_id, rows, CONSOLIDATION_COLUMNS, cleared=())


def set_signal_values(conn: Connection, column: str, values: dict[int, Any]) -> None:
    """One column of the consolidation group for existing rows (event pk -> value): an incremental
    run moving an event to another episode, or recording the later event that superseded it."""
    if column not in CONSOLIDATION_COLUMNS or not values:
        return
    conn.execute(text(f"UPDATE event_signals SET {column} = :v, updated_at = now() WHERE event_pk = :pk"),
                 [{"pk": pk, "v": v} for pk, v in values.items()])


def set_surprise_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """rows: every SURPRISE_COLUMNS value plus event_pk (heat fields included: the record keeps its accesses)."""
    set_signal_group(conn, tenant_id, conversation_id, rows, SURPRISE_COLUMNS, SURPRISE_SCORE_COLUMNS)


def add_surprise_signals(conn: Connection, tenant_id: int, conversation_id: str, rows: list[dict]) -> None:
    """The surprise group of new events only (an incremental run): the other rows are left alone."""
    set_signal_group(conn, tenant_id, conversation_id, rows, SURPRISE_COLUMNS, cleared=())


def clear_derived_text(conn: Connection, tenant_id: int, conversation_ids: Sequence[str]) -> None:
    """Clear the per-event signals that could quote other events (consolidation and graph groups,
    and the surprise version so the layer recomputes), for forgetting."""
    convs = list(conversation_ids)
    if not convs:
        return
    conn.execute(
        update(EventSignals)
        .where(EventSignals.tenant_id == tenant_id, EventSignals.conversation_id.in_(convs))
        .values(**{c: None for c in CONSOLIDATION_COLUMNS + GRAPH_COLUMNS}, surprise_version=None)
    )


# ---------------------------------------------------------------- heat records

def heat_records(conn: Connection, tenant_id: int, conversation_id: str, lock: bool = True) -> dict[int, dict]:
    """event pk -> stored heat record (JSON) of the conversation's events that have one."""
    q = select(EventSignals.event_pk, EventSignals.heat_record).where(
        EventSignals.tenant_id == tenant_id, EventSignals.conversation_id == conversation_id,
        EventSignals.heat_record.is_not(None),
    ).order_by(EventSignals.event_pk)
    if lock:
        q = q.with_for_update()
    return {r[0]: r[1] for r in conn.execute(q)}


def heat_inputs(conn: Connection, tenant_id: int, pks: Sequence[int]) -> dict[int, tuple[dict | None, float | None]]:
    """event pk -> (heat record JSON, importance) of those events that have a signals row, locked
    for update (a retrieval is about to add a presentation)."""
    return {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            select(EventSignals.event_pk, EventSignals.heat_record, EventSignals.importance)
            .where(EventSignals.tenant_id == tenant_id, EventSignals.event_pk.in_(list(pks)))
            .order_by(EventSignals.event_pk)
            .with_for_update()
        )
    }


def record_accesses(conn: Connection, rows: list[dict]) -> None:
    """rows: {event_pk, tenant_id, conversation_id, heat, heat_stage, heat_record, last_access_at,
    heat_updated_at}; each counts one more access (a row is created for an event without one)."""
    if not rows:
        return
    stmt = pg_insert(EventSignals).values([{**r, "access_count": 1} for r in rows])
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["event_pk"],
        set_={"heat": stmt.excluded.heat, "heat_stage": stmt.excluded.heat_stage,
              "access_count": EventSignals.access_count + 1, "last_access_at": stmt.excluded.last_access_at,
              "heat_record": stmt.excluded.heat_record, "heat_updated_at": stmt.excluded.heat_updated_at},
    ))


def active_heat_records(conn: Connection, since: datetime, after: int, batch: int,
                        tenant_id: int | None = None) -> list[tuple[int, dict]]:
    """(event pk, heat record JSON) after `after`, in pk order, at most `batch`, of the events of
    conversations active since `since` (a layer ran on them, i.e. new events came in, or one of
    their events was retrieved)."""
    active_sql = (
        "SELECT tenant_id, conversation_id FROM layer_runs WHERE computed_at > :since "
        "UNION SELECT tenant_id, conversation_id FROM event_signals WHERE last_access_at > :since"
    )
    params: dict[str, Any] = {"since": since, "after": after, "batch": batch}
    tenant_filter = ""
    if tenant_id is not None:
        tenant_filter = "AND s.tenant_id = :tenant"
        params["tenant"] = tenant_id
    return [(r[0], r[1]) for r in conn.execute(text(
        f"SELECT s.event_pk, s.heat_record FROM event_signals s "
        f"JOIN ({active_sql}) a ON a.tenant_id = s.tenant_id AND a.conversation_id = s.conversation_id "
        f"WHERE s.heat_record IS NOT NULL AND s.event_pk > :after {tenant_filter} "
        f"ORDER BY s.event_pk LIMIT :batch"
    ), params).all()]


def set_heat(conn: Connection, pks: Sequence[int], heats: Sequence[float], stages: Sequence[str], now: datetime) -> None:
    """Overwrite the heat and stage of these events, computed at `now`."""
    conn.execute(text(
        "UPDATE event_signals s SET heat = v.heat, heat_stage = v.stage, heat_updated_at = :now "
        "FROM (SELECT unnest(CAST(:pks AS bigint[])) AS pk, unnest(CAST(:heats AS float8[])) AS heat, "
        "unnest(CAST(:stages AS text[])) AS stage) v WHERE s.event_pk = v.pk"
    ), {"pks": list(pks), "heats": list(heats), "stages": list(stages), "now": now})


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
    graph_version: str | None = None  # the graph layer's version that wrote `entities` ... `search_extra`


def signals_for(conn: Connection, tenant_id: int, pks: Iterable[int]) -> dict[int, EventSignalsView]:
    """Per-event signals of the given events (those that have any), keyed by event pk."""
    ids = sorted({int(p) for p in pks})
    if not ids:
        return {}
    s = EventSignals
    res = conn.execute(select(
        s.event_pk, s.conversation_id, s.surprise, s.surprise_facts, s.salience, s.importance, s.episode_index,
        s.superseded_by_event_pk, s.entities, s.resolved_dates, s.time_mentions, s.search_extra, s.heat,
        s.heat_stage, s.access_count, s.last_access_at, s.graph_version,
    ).where(s.tenant_id == tenant_id, s.event_pk == any_pk(ids))).all()
    out = {}
    for r in res:
        out[r[0]] = EventSignalsView(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], tuple(r[8] or ()),
                                     tuple(r[9] or ()), list(r[10] or []), r[11], r[12], r[13], r[14] or 0, r[15],
                                     r[16])
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


def time_mentions_before(conn: Connection, tenant_id: int, conversation_id: str, before: datetime,
                         limit: int = 400) -> list[tuple[datetime, dict, list[dict]]]:
    """(time, metadata, time mentions as the graph layer resolved them) of the conversation's events before
    `before` that name a day (a corrected event's latest version only), the latest `limit`, in time order: the
    days the conversation named before a turn."""
    s, e = EventSignals, Event
    newer = aliased(Event)
    res = conn.execute(select(e.occurred_at, e.metadata_, s.time_mentions).join(e, e.id == s.event_pk).where(
        s.tenant_id == tenant_id, s.conversation_id == conversation_id, e.tenant_id == tenant_id,
        e.occurred_at < before, s.time_mentions.contains([{"granularity": "day"}]),
        ~exists().where(newer.supersedes_id == e.id),
    ).order_by(e.occurred_at.desc(), e.id.desc()).limit(limit)).all()
    return [(r[0], r[1] or {}, list(r[2])) for r in reversed(res)]
