"""SQL for candidate generation: what each retrieval signal asks PostgreSQL for.

Full-text (tsvector: the question's lexemes, term frequencies, the scope's statistics), dense
(pgvector), the derived text the layers wrote (`search_extra`), the question's time window, and
the speakers of a conversation. Each returns (event pk, score) best first, scoped to a tenant and
optional filters (`Scope`); gated-out events are excluded from retrieval but stay in the log.
No scoring here: BM25 is `app.domain.retrieval.lexical`, fusion and the rest `app.domain.retrieval`.

The vector searches expect the transaction's HNSW scan settings (`set_hnsw`, or `HNSW_SETTINGS`
folded into a statement of the caller's): the query service sets them once per query.
"""
from __future__ import annotations

import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from sqlalchemy import Connection, text

_LEXEME = re.compile(r"'((?:[^']|'')+)'")


@dataclass(frozen=True)
class Scope:
    tenant_id: int
    conversation_id: str | None = None
    speakers: tuple[str, ...] | None = None
    start: datetime | None = None
    end: datetime | None = None
    # metadata filter: canonical JSON text of an object the event's metadata must contain (`@>`,
    # served by the GIN index of migration 0007); `app.domain.filters.where_json` writes it
    where: str | None = None


# Retrieval reads the newest version of a corrected event (the older ones stay in the log): migration 0006.
CURRENT_VERSION = "NOT EXISTS (SELECT 1 FROM events v WHERE v.supersedes_id = {alias}.id)"


def _filters(scope: Scope, alias: str = "e", keyed_by: str | None = None) -> tuple[str, dict]:
    """The scope as one WHERE condition over the event `alias`: its tenant and conversation (read
    from `keyed_by`, a row joined to the event that carries them too, when given: `event_signals`),
    not gated out, the current version, and the request's filters."""
    key = keyed_by or alias
    clauses = [f"{key}.tenant_id = :tenant_id", f"({alias}.gate_status IS NULL OR {alias}.gate_status <> 'gated_out')",
               CURRENT_VERSION.format(alias=alias)]
    params: dict = {"tenant_id": scope.tenant_id}
    if scope.conversation_id is not None:
        clauses.append(f"{key}.conversation_id = :conversation_id")
        params["conversation_id"] = scope.conversation_id
    more, extra = filter_clauses(scope, alias)
    return " AND ".join(clauses + more), params | extra


def filter_clauses(scope: Scope, alias: str = "e", prefix: str = "") -> tuple[list[str], dict]:
    """The request's event filters (speakers, time range, metadata) as SQL clauses and parameters;
    none at all when the scope has no filter. `prefix` names the parameters apart from a statement's
    own (`:{prefix}start`)."""
    clauses: list[str] = []
    params: dict = {}
    if scope.speakers:
        clauses.append(f"{alias}.speaker = ANY(:{prefix}speakers)")
        params[prefix + "speakers"] = list(scope.speakers)
    if scope.start is not None:
        clauses.append(f"{alias}.occurred_at >= :{prefix}start")
        params[prefix + "start"] = scope.start
    if scope.end is not None:
        clauses.append(f"{alias}.occurred_at <= :{prefix}end")
        params[prefix + "end"] = scope.end
    if scope.where is not None:
        clauses.append(f"{alias}.metadata @> CAST(:{prefix}where AS jsonb)")
        params[prefix + "where"] = scope.where
    return clauses, params


def in_filters(conn: Connection, scope: Scope, pks: Collection[int]) -> set[int]:
    """Which of these events of the scope's tenant pass the request's filters (speakers, time range,
    metadata): all of them, with no statement, when the scope has none."""
    clauses, params = filter_clauses(scope)
    if not clauses or not pks:
        return set(pks)
    sql = "SELECT e.id FROM events e WHERE e.tenant_id = :tenant_id AND e.id = ANY(:pks) AND " + " AND ".join(clauses)
    return set(conn.execute(text(sql), params | {"tenant_id": scope.tenant_id, "pks": list(pks)}).scalars())


# The events matching any of the finding terms (an OR over the GIN index; a question rarely shares
# all its words with the evidence), best `limit` by cover density, and their frequencies of every
# query term, read out of their tsvectors in the database (unnest) rather than shipping and parsing
# whole tsvectors; length() is BM25's document length (distinct lexemes).
# Cover density is computed only when more than `limit` match (within a conversation they rarely do:
# ranking 458 long turns of a BEAM-size conversation cost 9 ms, to keep them all), and each tsvector
# is cut to the query's terms before it is unnested (setweight marks them, ts_filter keeps what is
# marked, their positions whole: a long turn has ~130 other lexemes, and unnesting them all cost
# 36 ms), then filtered on the terms as before, whatever weights the stored vector had. (ts_filter drops
# a lexeme without positions; `search_tsv` is generated by to_tsvector, which gives every lexeme some.)
_LEXICAL_TF_SQL = """
WITH f AS MATERIALIZED (
    SELECT e.id, e.search_tsv
    FROM events e
    WHERE {filters} AND e.search_tsv @@ CAST(:match AS tsquery)
), m AS (
    SELECT f.id, f.search_tsv FROM f WHERE (SELECT count(*) FROM f) <= :limit
    UNION ALL
    (SELECT f.id, f.search_tsv FROM f WHERE (SELECT count(*) FROM f) > :limit
     ORDER BY ts_rank_cd(f.search_tsv, CAST(:match AS tsquery), 1) DESC, f.id
     LIMIT :limit)
)
SELECT m.id, length(m.search_tsv), u.lexeme, coalesce(array_length(u.positions, 1), 1)
FROM m, unnest(ts_filter(setweight(m.search_tsv, 'A', CAST(:terms AS text[])), '{{a}}')) u
WHERE u.lexeme = ANY(:terms)
"""

_SCOPE_STATS_SQL = "SELECT count(*), coalesce(avg(length(e.search_tsv)), 0) FROM events e WHERE {filters}"


# The text-search configuration a question is read with: its conversation's language, else its
# tenant's (`english`, or `simple` for every other language: app.domain.language, migration 0008).
# Parameters :t (tenant) and :c (conversation, or NULL for a tenant-wide question).
SEARCH_CONFIG_SQL = ("coalesce((SELECT cs.search_config FROM conversation_settings cs WHERE cs.tenant_id = :t "
                     "AND cs.conversation_id = :c), (SELECT tn.search_config FROM tenants tn WHERE tn.id = :t), "
                     "'english'::regconfig)")


def query_lexemes(conn: Connection, query: str, scope: Scope | None = None) -> list[str]:
    """The stemmed, stop-word-free terms of a question, as full-text search sees them (in the
    scope's language; English without a scope)."""
    if scope is None:
        sql, params = "SELECT websearch_to_tsquery('english', :q)::text", {"q": query}
    else:
        sql = f"SELECT websearch_to_tsquery({SEARCH_CONFIG_SQL}, :q)::text"
        params = {"q": query, "t": scope.tenant_id, "c": scope.conversation_id}
    return _lexemes(conn.execute(text(sql), params).scalar_one())


def _lexemes(tsquery: str | None) -> list[str]:
    """The distinct lexemes of a tsquery's text, as unnest(tsvector) spells them."""
    return sorted({lex.replace("''", "'") for lex in _LEXEME.findall(tsquery or "")})


def lexical_term_frequencies(conn: Connection, scope: Scope, terms: Sequence[str], limit: int,
                             finding: Sequence[str] | None = None) -> tuple[dict[int, dict[str, int]], dict[int, int]]:
    """For the events holding any of the `finding` terms (default: all `terms`): ({pk: {term:
    frequency}}, {pk: distinct lexemes}), frequencies counted for every term.

    The cap keeps the best `limit` by cover density; within one conversation it is rarely reached.
    """
    if not terms:
        return {}, {}
    where, params = _filters(scope)
    match = " | ".join(_tsquery_literal(t) for t in (finding or terms))
    params.update(match=match, limit=limit, terms=list(terms))
    tfs: dict[int, dict[str, int]] = {}
    lengths: dict[int, int] = {}
    for pk, dl, lexeme, tf in conn.execute(text(_LEXICAL_TF_SQL.format(filters=where)), params):
        tfs.setdefault(pk, {})[lexeme] = int(tf)
        lengths[pk] = int(dl)
    return tfs, lengths


def _tsquery_literal(lexeme: str) -> str:
    """A lexeme as a quoted tsquery operand (backslash and quote escaped), matched as it is."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def lexeme_shares(conn: Connection, max_age_s: float = 600.0) -> dict[str, float]:
    """The share of events holding each of the most common lexemes, from PostgreSQL's own statistics
    on `events.search_tsv` (ANALYZE samples them: no scan here); empty before the first ANALYZE.
    Reused for `max_age_s` in this process."""
    global _SHARES
    now = time.monotonic()
    if _SHARES is not None and now - _SHARES[0] < max_age_s:
        return _SHARES[1]
    row = conn.execute(text(
        "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
        "WHERE schemaname = current_schema() AND tablename = 'events' AND attname = 'search_tsv'")).first()
    shares = dict(zip(row[0], (float(f) for f in row[1]))) if row and row[0] and row[1] else {}
    _SHARES = (now, shares)
    return shares


_SHARES: tuple[float, dict[str, float]] | None = None


def scope_stats(conn: Connection, scope: Scope, max_age_s: float | None = None) -> tuple[int, float]:
    """(number of events, mean distinct lexemes per event) in the scope: BM25's N and avgdl.

    Counting them reads every event of the scope, which grows with the tenant; they also barely move
    from one query to the next, so each scope's pair is reused for `max_age_s` (the
    `lexical_stats_ttl_s` setting; 0 counts every time).
    """
    if max_age_s is None:
        from app.settings import get_settings

        max_age_s = get_settings().lexical_stats_ttl_s
    key = (scope.tenant_id, scope.conversation_id, scope.speakers, scope.start, scope.end, scope.where)
    now = time.monotonic()
    hit = _STATS.get(key)
    if hit is not None and now - hit[0] < max_age_s:
        return hit[1]
    where, params = _filters(scope)
    n, avg = conn.execute(text(_SCOPE_STATS_SQL.format(filters=where)), params).one()
    if len(_STATS) >= _STATS_MAX:
        _STATS.clear()  # many distinct scopes (time ranges): start over rather than grow
    _STATS[key] = (now, (int(n), float(avg)))
    return int(n), float(avg)


_STATS: dict[tuple, tuple[float, tuple[int, float]]] = {}  # per process: scope -> (when, (N, avgdl))
_STATS_MAX = 4096


# Iterative HNSW scans (pgvector >= 0.8) keep scanning until enough rows pass the filters,
# so a narrow conversation filter does not starve the result; relaxed order is re-sorted outside.
_DENSE_SQL = """
SELECT id, 1 - dist AS score FROM (
    SELECT e.id, em.embedding <=> :vec AS dist
    FROM embeddings em JOIN events e ON e.id = em.event_pk
    WHERE em.model = :model AND em.tenant_id = :tenant_id {conv} AND {filters}
    ORDER BY em.embedding <=> :vec
    LIMIT :limit
) s ORDER BY dist, id
"""


def dense_candidates(conn: Connection, scope: Scope, vector: np.ndarray, model: str,
                     limit: int) -> list[tuple[int, float]]:
    """The `limit` events closest in meaning to `vector` (HNSW; the scan settings are the caller's)."""
    where, params = _filters(scope)
    conv = "AND em.conversation_id = :conversation_id" if scope.conversation_id is not None else ""
    params.update(vec=np.asarray(vector, dtype=np.float32), model=model, limit=limit)
    return [(r[0], float(r[1])) for r in conn.execute(text(_DENSE_SQL.format(conv=conv, filters=where)), params)]


# Iterative scans (pgvector >= 0.8) and the candidate list size, for the rest of the transaction.
HNSW_SETTINGS = "set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', :ef, true)"


def hnsw_ef(ef_search: int | None = None) -> str:
    """The `:ef` parameter of `HNSW_SETTINGS`: `ef_search`, else the `hnsw_ef_search` setting
    (chosen by bench/hnsw_sweep.py)."""
    if ef_search is None:
        from app.settings import get_settings

        ef_search = get_settings().hnsw_ef_search
    return str(int(ef_search))


def set_hnsw(conn: Connection, ef_search: int | None = None) -> None:
    """HNSW scan settings for the rest of the transaction, in one round trip."""
    conn.execute(text(f"SELECT {HNSW_SETTINGS}"), {"ef": hnsw_ef(ef_search)})


def event_vectors(conn: Connection, tenant_id: int, pks: Sequence[int], model: str) -> list[np.ndarray]:
    """The stored vectors of these events (those that have one), in the order given."""
    if not pks:
        return []
    rows = dict(conn.execute(text("SELECT event_pk, embedding::vector FROM embeddings WHERE tenant_id = :t "
                                  "AND model = :m AND event_pk = ANY(:p)"),
                             {"t": tenant_id, "m": model, "p": list(pks)}).all())
    return [_as_array(rows[pk]) for pk in pks if pk in rows]


def _as_array(v) -> np.ndarray:  # noqa: ANN001 - pgvector's Vector, or an array
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32)


def conversation_speakers(conn: Connection, tenant_id: int, conversation_id: str) -> list[str]:
    """The speakers the engram layer has profiled in a conversation (one row each: no scan of the log)."""
    return list(conn.execute(text("SELECT DISTINCT speaker FROM speaker_profiles WHERE tenant_id = :t "
                                  "AND conversation_id = :c"), {"t": tenant_id, "c": conversation_id}).scalars())


# ---------------------------------------------------------------- lexical over derived text
# The derived text is written by the English rule layers (skipped for other languages: they leave
# none), so it is indexed and searched in 'english'.

_EXTRA_SQL = """
WITH q AS (
    SELECT replace(websearch_to_tsquery('english', :query)::text, ' & ', ' | ')::tsquery AS tsq
)
SELECT s.event_pk, ts_rank_cd(s.search_extra_tsv, q.tsq, 1) AS score
FROM event_signals s JOIN events e ON e.id = s.event_pk, q
WHERE {filters} AND s.search_extra_tsv @@ q.tsq
ORDER BY score DESC, s.event_pk
LIMIT :limit
"""


def search_extra_candidates(conn: Connection, scope: Scope, query: str, limit: int = 100) -> list[tuple[int, float]]:
    """Events whose derived text (resolved absolute dates, entity names and aliases) matches the
    query: "What happened on 6 May 2023?" finds "... last Saturday" said on 8 May. Best first, within
    the scope and its filters (the `limit` best of those that pass them)."""
    where, params = _filters(scope, keyed_by="s")
    params.update(query=query, limit=limit)
    return [(r[0], float(r[1])) for r in conn.execute(text(_EXTRA_SQL.format(filters=where)), params)]


# ---------------------------------------------------------------- the question's time window

_WINDOW_SQL = """
SELECT e.id, 1 - (em.embedding <=> :vec) AS score
FROM events e JOIN embeddings em ON em.event_pk = e.id AND em.model = :model
{join}
WHERE e.tenant_id = :tenant_id {conv}
  AND (e.gate_status IS NULL OR e.gate_status <> 'gated_out')
  AND NOT EXISTS (SELECT 1 FROM events v WHERE v.supersedes_id = e.id)
  AND ({when}){filters}
ORDER BY em.embedding <=> :vec, e.id
LIMIT :limit
"""


def window_candidates(conn: Connection, scope: Scope, vector: np.ndarray, model: str, start: datetime,
                      end: datetime, limit: int = 100) -> list[tuple[int, float]]:
    """Events inside the question's time window [start, end), closest in meaning first (HNSW with
    iterative scans, so a time filter does not starve the result: the caller's `set_hnsw`), within
    the scope and its filters (the `limit` closest of those that pass them; the request's time range
    bounds when an event was said, as everywhere).

    Inside a conversation "inside" also means talking about a date in the window (the graph layer's
    resolved dates: "last Saturday" said on 8 May is about 6 May); across a tenant only the time an
    event was said counts (the HNSW scan filters it; no per-event signals are joined).
    """
    params: dict[str, Any] = {"tenant_id": scope.tenant_id, "vec": np.asarray(vector, dtype=np.float32),
                              "model": model, "start": start, "end": end, "limit": limit}
    more, extra = filter_clauses(scope, "e", prefix="f_")  # none without a filter: the statement as it was
    params.update(extra)
    filters = "".join(f"\n  AND {c}" for c in more)
    said = "e.occurred_at >= :start AND e.occurred_at < :end"
    if scope.conversation_id is None:
        sql = _WINDOW_SQL.format(join="", conv="", when=said, filters=filters)
    else:
        params.update(conversation_id=scope.conversation_id, start_d=start.date(), end_d=end.date())
        about = ("EXISTS (SELECT 1 FROM unnest(s.resolved_dates) d WHERE d >= :start_d AND "
                 "(d < :end_d OR (d = :start_d AND :start_d = :end_d)))")
        sql = _WINDOW_SQL.format(join="LEFT JOIN event_signals s ON s.event_pk = e.id",
                                 conv="AND e.conversation_id = :conversation_id", when=f"({said}) OR {about}",
                                 filters=filters)
    return [(r[0], float(r[1])) for r in conn.execute(text(sql), params)]


# ---------------------------------------------------------------- before the searches, in one round trip

@dataclass(frozen=True)
class Preliminaries:
    lexemes: list[str] | None = None  # the question's stemmed terms (None: not asked)
    reference_time: datetime | None = None  # when the scope last heard something
    speakers: list[str] | None = None  # the conversation's profiled speakers
    graph_version: str | None = None  # the graph layer's version to read (the latest run)
    english: bool | None = None  # whether the scope's language is English (None: not asked)


def preliminaries(conn: Connection, scope: Scope, *, query: str | None = None, reference: bool = False,
                  speakers: bool = False, graph: bool = False, hnsw: bool = False,
                  language: bool = False) -> Preliminaries:
    """What the searches need before they run, as one statement: the question's lexemes (`query`),
    the scope's latest event time (`reference`: relative dates are read from it), the conversation's
    speakers and its graph version (the run computed last), whether the scope's language is English
    (`language`), and the HNSW scan settings for the rest of the transaction (`hnsw`). No statement at
    all when nothing is asked."""
    cols: list[str] = []
    params: dict[str, Any] = {"t": scope.tenant_id, "c": scope.conversation_id}
    conv = " AND conversation_id = :c" if scope.conversation_id is not None else ""
    if query is not None:
        cols.append(f"websearch_to_tsquery({SEARCH_CONFIG_SQL}, :q)::text")  # the scope's language
        params["q"] = query
    if reference:
        cols.append(f"(SELECT max(occurred_at) FROM events WHERE tenant_id = :t{conv})")
    if speakers:
        cols.append("(SELECT array_agg(DISTINCT speaker) FROM speaker_profiles WHERE tenant_id = :t"
                    " AND conversation_id = :c)")
    if graph:
        cols.append("(SELECT layer_version FROM layer_runs WHERE tenant_id = :t AND conversation_id = :c"
                    " AND layer = 'graph' ORDER BY computed_at DESC LIMIT 1)")
    if language:
        cols.append(f"({SEARCH_CONFIG_SQL}) = 'english'::regconfig")
    if hnsw:
        cols.append(HNSW_SETTINGS)
        params["ef"] = hnsw_ef()
    if not cols:
        return Preliminaries()
    row = iter(conn.execute(text("SELECT " + ", ".join(cols)), params).one())
    return Preliminaries(
        lexemes=_lexemes(next(row)) if query is not None else None,
        reference_time=next(row) if reference else None,
        speakers=list(next(row) or []) if speakers else None,
        graph_version=next(row) if graph else None,
        english=bool(next(row)) if language else None,
    )
