"""SQL for a turn's findable text (`event_signals.findable`, migration 0012; issue #17 item 6).

What a turn means often lives beside it: "Yes, in May!" answers "Did you make it to Paris?". Each
event gets, as a field of its own (its verbatim content is untouched), its session's date in the
words a question uses ("8 May 2023 ; May 2023 ; Monday") and, with `previous` (the setting
`findable_previous`, off by default: it measured worse on BEAM), the turn before it in its
conversation (the turn it answers). Resolved dates and entity names are the graph layer's
`search_extra`.

Written with the event's vector (`app.services.layers.embed_pending`, one statement per batch, the
previous turn read through `ix_events_conversation_time`), rewritten for whole conversations after
a forget or a language change (`refresh`: the next turn may quote a deleted one), and searched as
the `findable` retrieval signal (`findable_candidates`), in the event's own text-search
configuration. No LLM: it reads what is stored.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

from app.storage.candidates import CURRENT_VERSION, SEARCH_CONFIG_SQL, Scope, filter_clauses

_DAY = "e.occurred_at AT TIME ZONE 'UTC'"
# the previous turn's content (NULL without `previous`: concat_ws skips it), then the session's date three ways
FINDABLE_TEXT = (f"concat_ws(' ; ', p.content, to_char({_DAY}, 'FMDD FMMonth YYYY'), "
                 f"to_char({_DAY}, 'FMMonth YYYY'), to_char({_DAY}, 'FMDay'))")
_PREVIOUS = """
    LEFT JOIN LATERAL (
        SELECT p.content FROM events p
        WHERE p.tenant_id = e.tenant_id AND p.conversation_id = e.conversation_id
          AND (p.occurred_at, p.id) < (e.occurred_at, e.id)
        ORDER BY p.occurred_at DESC, p.id DESC
        LIMIT 1
    ) p ON true"""
_NO_PREVIOUS = "\n    LEFT JOIN LATERAL (SELECT NULL::text AS content) p ON true"

_WRITE_SQL = f"""
INSERT INTO event_signals (event_pk, tenant_id, conversation_id, findable, findable_tsv)
SELECT t.id, t.tenant_id, t.conversation_id, t.txt, to_tsvector(t.search_config, t.txt)
FROM (
    SELECT e.id, e.tenant_id, e.conversation_id, e.search_config, {FINDABLE_TEXT} AS txt
    FROM events e{{previous}}
    WHERE {{where}}
) t
ON CONFLICT (event_pk) DO UPDATE
SET findable = excluded.findable, findable_tsv = excluded.findable_tsv, updated_at = now()
"""


def _sql(where: str, previous: bool) -> str:
    return _WRITE_SQL.format(where=where, previous=_PREVIOUS if previous else _NO_PREVIOUS)


def write(conn: Connection, pks: Sequence[int], previous: bool = False) -> None:
    """The findable text of these events (any tenant: the embed worker's batch)."""
    if pks:
        conn.execute(text(_sql("e.id = ANY(:pks)", previous)), {"pks": list(pks)})


def refresh(conn: Connection, tenant_id: int, conversation_ids: Sequence[str], previous: bool = False) -> None:
    """Rewrite the findable text of every event of these conversations (after some of their events
    were deleted, or their language changed: with `previous`, a turn's text quotes the one before)."""
    convs = list(conversation_ids)
    if convs:
        conn.execute(text(_sql("e.tenant_id = :t AND e.conversation_id = ANY(:convs)", previous)),
                     {"t": tenant_id, "convs": convs})


# Any of the question's terms (OR: the evidence rarely shares all of them), ranked by cover density.
_CANDIDATES_SQL = """
WITH q AS (
    SELECT replace(websearch_to_tsquery({config}, :query)::text, ' & ', ' | ')::tsquery AS tsq
)
SELECT s.event_pk, ts_rank_cd(s.findable_tsv, q.tsq, 1) AS score
FROM event_signals s JOIN events e ON e.id = s.event_pk, q
WHERE {filters} AND s.findable_tsv @@ q.tsq
ORDER BY score DESC, s.event_pk
LIMIT :limit
"""


def findable_candidates(conn: Connection, scope: Scope, query: str, limit: int = 100) -> list[tuple[int, float]]:
    """Events whose findable text (the turn they answer, their session's date) matches the question,
    best first, within the scope and its filters."""
    clauses = ["s.tenant_id = :t", "(e.gate_status IS NULL OR e.gate_status <> 'gated_out')",
               CURRENT_VERSION.format(alias="e")]
    params: dict[str, Any] = {"t": scope.tenant_id, "c": scope.conversation_id, "query": query, "limit": limit}
    if scope.conversation_id is not None:
        clauses.append("s.conversation_id = :c")
    more, extra = filter_clauses(scope, "e")
    sql = _CANDIDATES_SQL.format(config=SEARCH_CONFIG_SQL, filters=" AND ".join(clauses + more))
    return [(r[0], float(r[1])) for r in conn.execute(text(sql), params | extra)]
