"""SQL for the query's reads of its candidates, once the searches have found them.

`candidate_rows`: every candidate event with its per-event signals (and, for a knowledge-update
question, the later events that superseded them) in one statement, so fusion, reweight, rerank and
assembly run in memory. `episode_summaries`: the summaries of the episodes that stand in for direct
evidence the token budget could not hold, at each conversation's current consolidation, in one
statement.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime

from sqlalchemy import Connection, text

from app.storage.events import EVENT_COLUMNS, EventRow
from app.storage.signals import EventSignalsView

_EVENT_SELECT = ", ".join(f"e.{c.expression.name}" for c in EVENT_COLUMNS)
_SIGNAL_SELECT = ("s.event_pk, s.conversation_id, s.surprise, s.surprise_facts, s.salience, s.importance, "
                  "s.episode_index, s.superseded_by_event_pk, s.entities, s.resolved_dates, s.time_mentions, "
                  "s.search_extra, s.heat, s.heat_stage, s.access_count, s.last_access_at, s.graph_version")
_N_EVENT = len(EVENT_COLUMNS)

# The candidates, plus (when asked) the events that superseded one of them: the id array grows by a
# sub-select rather than a second round trip. `= ANY` of one array keeps the statement's text fixed.
_ROWS_SQL = """
SELECT {cols}
FROM events e {join}
WHERE e.tenant_id = :t AND e.id = ANY({ids})
"""
_SIGNALS_JOIN = "LEFT JOIN event_signals s ON s.event_pk = e.id AND s.tenant_id = e.tenant_id"
_WITH_NEWER = ("CAST(:ids AS bigint[]) || ARRAY(SELECT x.superseded_by_event_pk FROM event_signals x "
               "WHERE x.tenant_id = :t AND x.event_pk = ANY(CAST(:ids AS bigint[])) "
               "AND x.superseded_by_event_pk IS NOT NULL)")


def candidate_rows(conn: Connection, tenant_id: int, pks: Iterable[int], *, signals: bool = True,
                   superseding: bool = False) -> tuple[dict[int, EventRow], dict[int, EventSignalsView]]:
    """(event pk -> row, event pk -> per-event signals for those that have a signals row) of the
    tenant's events among `pks`; with `superseding`, also the events that superseded any of them."""
    ids = sorted({int(p) for p in pks})
    if not ids:
        return {}, {}
    sql = _ROWS_SQL.format(cols=_EVENT_SELECT + (", " + _SIGNAL_SELECT if signals else ""),
                           join=_SIGNALS_JOIN if signals else "",
                           ids=_WITH_NEWER if superseding else "CAST(:ids AS bigint[])")
    rows: dict[int, EventRow] = {}
    sig: dict[int, EventSignalsView] = {}
    for r in conn.execute(text(sql), {"t": tenant_id, "ids": ids}).all():
        rows[r[0]] = EventRow(*r[:_N_EVENT])
        if signals and r[_N_EVENT] is not None:
            s = r[_N_EVENT:]
            sig[r[0]] = EventSignalsView(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], tuple(s[8] or ()),
                                         tuple(s[9] or ()), list(s[10] or []), s[11], s[12], s[13], s[14] or 0,
                                         s[15], s[16])
    return rows, sig


# The version read is the conversation's consolidation computed last (as `layer_runs.current_version`).
_SUMMARIES_SQL = """
SELECT ep.conversation_id, ep.idx, ep.start_at, ep.end_at, ep.summary
FROM episodes ep
WHERE ep.tenant_id = :t
  AND (ep.conversation_id, ep.idx) IN (SELECT * FROM unnest(CAST(:convs AS text[]), CAST(:idx AS int[])))
  AND ep.layer_version = (SELECT r.layer_version FROM layer_runs r WHERE r.tenant_id = :t
                          AND r.conversation_id = ep.conversation_id AND r.layer = 'consolidate'
                          ORDER BY r.computed_at DESC LIMIT 1)
"""


def episode_summaries(conn: Connection, tenant_id: int, episodes: Collection[tuple[str, int]]
                      ) -> dict[tuple[str, int], tuple[datetime, datetime, str]]:
    """(conversation, episode index) -> (start, end, summary), for the episodes asked for that the
    conversation's current consolidation holds."""
    if not episodes:
        return {}
    keys = sorted(set(episodes))
    res = conn.execute(text(_SUMMARIES_SQL), {"t": tenant_id, "convs": [c for c, _ in keys],
                                              "idx": [int(i) for _, i in keys]})
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in res}
