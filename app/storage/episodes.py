"""SQL for the consolidation layer's slices (L4): episodes, the assertion timeline and contradictions.

Written as one slice per (tenant, conversation, layer_version) (`replace_consolidation`); read at a
pinned version, else a preferred one, else the one computed last (`app.storage.layer_runs`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterable

from sqlalchemy import Connection, bindparam, delete, func, select, tuple_, update

from app.storage.layer_runs import current_version, delete_slice, insert_slice
from app.storage.models import AssertionRow, ContradictionRow, EpisodeRow
from app.storage.signals import signals_for


def replace_consolidation(
    conn: Connection, tenant_id: int, conversation_id: str, version: str,
    episodes: list[dict], assertions: list[dict], contradictions: list[dict],
) -> None:
    """Rows are dicts with the table's columns, without tenant/conversation/version."""
    for table, rows in ((EpisodeRow, episodes), (AssertionRow, assertions), (ContradictionRow, contradictions)):
        delete_slice(conn, table, tenant_id, conversation_id, version)
        insert_slice(conn, table, tenant_id, conversation_id, version, rows)


def extend_consolidation(
    conn: Connection, tenant_id: int, conversation_id: str, version: str, reopened_from: int,
    episodes: list[dict], assertions: list[dict], contradictions: list[dict], superseded: dict[str, str],
) -> None:
    """An incremental run: the episodes from index `reopened_from` on are replaced by `episodes`; the
    new assertions and contradictions are added; `superseded` (assertion key -> the key of the later
    one) links earlier assertions to the batch's."""
    e = EpisodeRow
    conn.execute(delete(e).where(e.tenant_id == tenant_id, e.conversation_id == conversation_id,
                                 e.layer_version == version, e.idx >= reopened_from))
    insert_slice(conn, EpisodeRow, tenant_id, conversation_id, version, episodes)
    insert_slice(conn, AssertionRow, tenant_id, conversation_id, version, assertions)
    insert_slice(conn, ContradictionRow, tenant_id, conversation_id, version, contradictions)
    if superseded:
        a = AssertionRow
        conn.execute(update(a).where(a.tenant_id == bindparam("t"), a.conversation_id == bindparam("c"),
                                     a.layer_version == bindparam("v"), a.key == bindparam("k"))
                     .values(superseded_by_key=bindparam("by")).execution_options(synchronize_session=False),
                     [{"t": tenant_id, "c": conversation_id, "v": version, "k": k, "by": by}
                      for k, by in superseded.items()])


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
    version = layer_version or current_version(conn, tenant_id, conversation_id, "consolidate", prefer)
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
    valid_from: date | None = None  # the day a dated claim takes effect (None: the day it was said)


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
    version = layer_version or current_version(conn, tenant_id, conversation_id, "consolidate", prefer)
    if version is None:
        return None, [], []
    a, c = AssertionRow, ContradictionRow
    qa = select(a.key, a.event_pk, a.entity, a.attribute, a.value, a.asserted_at, a.negated, a.superseded_by_key,
               a.valid_from).where(
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


def assertion_rows(conn: Connection, tenant_id: int, conversation_id: str, version: str,
                   after_id: int = 0) -> list[dict]:
    """The assertions of one version, every column a fold reads them back with and the row id, in
    time order (the graph's evolution edges). `after_id`: only the rows inserted after the row of
    that id (ids grow with each insert and one conversation's consolidation runs one at a time, under
    its advisory lock; an incremental consolidation only adds assertions)."""
    a = AssertionRow
    q = (select(a.id, a.key, a.event_pk, a.entity, a.attribute, a.value, a.value_key, a.asserted_at, a.negated,
                a.surface, a.valid_from)
         .where(a.tenant_id == tenant_id, a.conversation_id == conversation_id, a.layer_version == version))
    if after_id:
        q = q.where(a.id > after_id)
    return [dict(r._mapping) for r in conn.execute(q.order_by(a.asserted_at, a.event_pk, a.key))]


def assertion_kept(conn: Connection, tenant_id: int, conversation_id: str, version: str, row_id: int) -> bool:
    """Whether the assertion row `row_id` is still in the slice (a full consolidation rewrites every
    row under new ids; an incremental one deletes none)."""
    a = AssertionRow
    return conn.execute(select(a.id).where(a.id == row_id, a.tenant_id == tenant_id,
                                           a.conversation_id == conversation_id, a.layer_version == version)).first() is not None


def episodes_after(conn: Connection, tenant_id: int, conversation_id: str, version: str, after_id: int
                   ) -> tuple[list[tuple[int, EpisodeView]], int | None]:
    """(row id, episode) of the episode rows inserted after the row `after_id`, in order, and the
    slice's last episode index (None: no episode). An incremental consolidation deletes the episodes
    from its reopened index on and inserts them again, so the slice is the episodes before the
    smallest index read plus those read."""
    e = EpisodeRow
    where = (e.tenant_id == tenant_id, e.conversation_id == conversation_id, e.layer_version == version)
    res = conn.execute(select(e.id, e.idx, e.start_at, e.end_at, e.speakers, e.boundary, e.summary, e.event_pks,
                              e.summary_event_pks).where(*where, e.id > after_id).order_by(e.idx))
    rows = [(r[0], EpisodeView(r[1], r[2], r[3], list(r[4]), r[5], r[6], list(r[7]), list(r[8]))) for r in res]
    last = conn.execute(select(func.max(e.idx)).where(*where)).scalar()
    return rows, last


def contradictions_for(conn: Connection, tenant_id: int, conversation_id: str, prefer: str | None = None) -> list[ContradictionView]:
    return timeline_for(conn, tenant_id, conversation_id, prefer=prefer)[2]


# ---------------------------------------------------------------- pages (the API's cursor-paged reads)


def episodes_page(conn: Connection, tenant_id: int, conversation_id: str, version: str, after: int | None,
                  limit: int) -> list[EpisodeView]:
    """Up to `limit` episodes of one version after the episode index `after`, in order."""
    e = EpisodeRow
    q = (select(e.idx, e.start_at, e.end_at, e.speakers, e.boundary, e.summary, e.event_pks, e.summary_event_pks)
         .where(e.tenant_id == tenant_id, e.conversation_id == conversation_id, e.layer_version == version))
    if after is not None:
        q = q.where(e.idx > after)
    res = conn.execute(q.order_by(e.idx).limit(limit))
    return [EpisodeView(r[0], r[1], r[2], list(r[3]), r[4], r[5], list(r[6]), list(r[7])) for r in res]


def assertions_page(conn: Connection, tenant_id: int, conversation_id: str, version: str, *,
                    after: tuple[datetime, int, str] | None, limit: int, entity: str | None = None,
                    attribute: str | None = None) -> list[AssertionView]:
    """Up to `limit` assertions of one version in time order (time, event, key) after `after`."""
    a = AssertionRow
    q = select(a.key, a.event_pk, a.entity, a.attribute, a.value, a.asserted_at, a.negated, a.superseded_by_key,
               a.valid_from).where(
        a.tenant_id == tenant_id, a.conversation_id == conversation_id, a.layer_version == version)
    if entity is not None:
        q = q.where(func.lower(a.entity) == entity.lower())
    if attribute is not None:
        q = q.where(a.attribute == attribute)
    if after is not None:
        q = q.where(tuple_(a.asserted_at, a.event_pk, a.key) > tuple_(*after))
    return [AssertionView(*r) for r in conn.execute(q.order_by(a.asserted_at, a.event_pk, a.key).limit(limit))]


def contradictions_page(conn: Connection, tenant_id: int, conversation_id: str, version: str, *,
                        after: tuple[datetime, str] | None, limit: int, entity: str | None = None,
                        attribute: str | None = None) -> list[ContradictionView]:
    """Up to `limit` contradictions of one version in order of the later time (then key) after `after`."""
    c = ContradictionRow
    q = select(c.key, c.entity, c.attribute, c.earlier_event_pk, c.later_event_pk, c.earlier_value, c.later_value,
               c.earlier_at, c.later_at, c.kind).where(
        c.tenant_id == tenant_id, c.conversation_id == conversation_id, c.layer_version == version)
    if entity is not None:
        q = q.where(func.lower(c.entity) == entity.lower())
    if attribute is not None:
        q = q.where(c.attribute == attribute)
    if after is not None:
        q = q.where(tuple_(c.later_at, c.key) > tuple_(*after))
    return [ContradictionView(*r) for r in conn.execute(q.order_by(c.later_at, c.key).limit(limit))]
