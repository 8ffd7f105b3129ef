"""SQL for candidate generation: full-text (tsvector) and dense (pgvector) signals.

Both return (event pk, score) best first, scoped to a tenant and optional filters. Gated-out
events are excluded from retrieval but stay in the log.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import re

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


# websearch_to_tsquery parses like a search box (stemming, stop words, quoted phrases) but ANDs
# the terms; a question rarely shares all its words with the evidence, so the top-level ANDs are
# turned into ORs and ts_rank_cd rewards the events that cover more of them.
_LEXICAL_SQL = """
WITH q AS (
    SELECT replace(websearch_to_tsquery('english', :query)::text, ' & ', ' | ')::tsquery AS tsq
)
SELECT e.id, ts_rank_cd(e.search_tsv, q.tsq, 1) AS score
FROM events e, q
WHERE {filters} AND e.search_tsv @@ q.tsq
ORDER BY score DESC, e.id
LIMIT :limit
"""


_LEXICAL_DOCS_SQL = """
WITH q AS (
    SELECT replace(websearch_to_tsquery('english', :query)::text, ' & ', ' | ')::tsquery AS tsq
)
SELECT e.id, e.search_tsv::text
FROM events e, q
WHERE {filters} AND e.search_tsv @@ q.tsq
ORDER BY ts_rank_cd(e.search_tsv, q.tsq, 1) DESC, e.id
LIMIT :limit
"""

_SCOPE_STATS_SQL = "SELECT count(*), coalesce(avg(length(e.search_tsv)), 0) FROM events e WHERE {filters}"


def query_lexemes(conn: Connection, query: str) -> list[str]:
    """The stemmed, stop-word-free terms of a question, as full-text search sees them."""
    row = conn.execute(text("SELECT websearch_to_tsquery('english', :q)::text"), {"q": query}).scalar_one()
    return sorted(set(_LEXEME.findall(row or "")))


def lexical_documents(conn: Connection, scope: Scope, query: str, limit: int) -> list[tuple[int, str]]:
    """Events matching any query term, with their tsvector text (lexemes and positions).

    The cap keeps the best `limit` by cover density; within one conversation it is rarely reached.
    """
    where, params = _filters(scope)
    params.update(query=query, limit=limit)
    return [(r[0], r[1]) for r in conn.execute(text(_LEXICAL_DOCS_SQL.format(filters=where)), params)]


def scope_stats(conn: Connection, scope: Scope) -> tuple[int, float]:
    """(number of events, mean distinct lexemes per event) in the scope: BM25's N and avgdl."""
    where, params = _filters(scope)
    n, avg = conn.execute(text(_SCOPE_STATS_SQL.format(filters=where)), params).one()
    return int(n), float(avg)


def lexical_candidates(conn: Connection, scope: Scope, query: str, limit: int) -> list[tuple[int, float]]:
    where, params = _filters(scope)
    params.update(query=query, limit=limit)
    return [(r[0], float(r[1])) for r in conn.execute(text(_LEXICAL_SQL.format(filters=where)), params)]


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
