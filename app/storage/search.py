"""SQL for candidate generation: full-text (tsvector) and dense (pgvector) signals.

Both return (event pk, score) best first, scoped to a tenant and optional filters. Gated-out
events are excluded from retrieval but stay in the log.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import Connection, text


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
    conn: Connection, scope: Scope, vector: np.ndarray, model: str, limit: int, ef_search: int = 200
) -> list[tuple[int, float]]:
    where, params = _filters(scope)
    conv = "AND em.conversation_id = :conversation_id" if scope.conversation_id is not None else ""
    params.update(vec=np.asarray(vector, dtype=np.float32), model=model, limit=limit)
    conn.execute(text("SET LOCAL hnsw.iterative_scan = 'relaxed_order'"))
    conn.execute(text(f"SET LOCAL hnsw.ef_search = {int(ef_search)}"))
    return [(r[0], float(r[1])) for r in conn.execute(text(_DENSE_SQL.format(conv=conv, filters=where)), params)]
