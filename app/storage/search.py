"""SQL for candidate generation: full-text (tsvector) and dense (pgvector) signals.

Both return (event pk, score) best first, scoped to a tenant and optional filters. Gated-out
events are excluded from retrieval but stay in the log.
"""
from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

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


def _filters(scope: Scope, alias: str = "e") -> tuple[str, dict]:
    clauses = [f"{alias}.tenant_id = :tenant_id", f"({alias}.gate_status IS NULL OR {alias}.gate_status <> 'gated_out')"]
    params: dict = {"tenant_id": scope.tenant_id}
    if scope.conversation_id is not None:
        clauses.append(f"{alias}.conversation_id = :conversation_id")
        params["conversation_id"] = scope.conversation_id
    if scope.speakers:
        clauses.append(f"{alias}.speaker = ANY(:speakers)")
        params["speakers"] = list(scope.speakers)
    if scope.start is not None:
        clauses.append(f"{alias}.occurred_at >= :start")
        params["start"] = scope.start
    if scope.end is not None:
        clauses.append(f"{alias}.occurred_at <= :end")
        params["end"] = scope.end
    return " AND ".join(clauses), params


# The events matching any of the finding terms (an OR over the GIN index; a question rarely shares
# all its words with the evidence), best `limit` by cover density, and their frequencies of every
# query term, read out of their tsvectors in the database (unnest) rather than shipping and parsing
# whole tsvectors; length() is BM25's document length (distinct lexemes).
_LEXICAL_TF_SQL = """
WITH m AS (
    SELECT e.id, e.search_tsv
    FROM events e
    WHERE {filters} AND e.search_tsv @@ CAST(:match AS tsquery)
    ORDER BY ts_rank_cd(e.search_tsv, CAST(:match AS tsquery), 1) DESC, e.id
    LIMIT :limit
)
SELECT m.id, length(m.search_tsv), u.lexeme, coalesce(array_length(u.positions, 1), 1)
FROM m, unnest(m.search_tsv) u
WHERE u.lexeme = ANY(:terms)
"""

_SCOPE_STATS_SQL = "SELECT count(*), coalesce(avg(length(e.search_tsv)), 0) FROM events e WHERE {filters}"


def query_lexemes(conn: Connection, query: str) -> list[str]:
    """The stemmed, stop-word-free terms of a question, as full-text search sees them."""
    row = conn.execute(text("SELECT websearch_to_tsquery('english', :q)::text"), {"q": query}).scalar_one()
    return sorted({lex.replace("''", "'") for lex in _LEXEME.findall(row or "")})  # as unnest(tsvector) spells them


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
    key = (scope.tenant_id, scope.conversation_id, scope.speakers, scope.start, scope.end)
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


def dense_candidates(
    conn: Connection, scope: Scope, vector: np.ndarray, model: str, limit: int, ef_search: int | None = None
) -> list[tuple[int, float]]:
    """`ef_search` None: the `hnsw_ef_search` setting (chosen by bench/hnsw_sweep.py)."""
    where, params = _filters(scope)
    conv = "AND em.conversation_id = :conversation_id" if scope.conversation_id is not None else ""
    params.update(vec=np.asarray(vector, dtype=np.float32), model=model, limit=limit)
    set_hnsw(conn, ef_search)
    return [(r[0], float(r[1])) for r in conn.execute(text(_DENSE_SQL.format(conv=conv, filters=where)), params)]


def set_hnsw(conn: Connection, ef_search: int | None = None) -> None:
    """HNSW scan settings for the rest of the transaction, in one round trip: iterative scans
    (pgvector >= 0.8) and the candidate list size."""
    if ef_search is None:
        from app.settings import get_settings

        ef_search = get_settings().hnsw_ef_search
    conn.execute(text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                      "set_config('hnsw.ef_search', :ef, true)"), {"ef": str(int(ef_search))})


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
