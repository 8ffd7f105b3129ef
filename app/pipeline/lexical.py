"""Stage 6: the lexical signal — BM25 over PostgreSQL's full-text lexemes.

PostgreSQL finds the events that share any stemmed term with the question (GIN index) and hands
back their tsvectors; BM25 (k1 = 1.2, b = 0.75) then weighs each shared term by how rare it is in
the scope, which `ts_rank_cd` alone cannot do: "Denver" should count for more than "went".
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence

from sqlalchemy import Connection

from app.storage.search import Scope, lexical_documents, query_lexemes, scope_stats

_ENTRY = re.compile(r"'((?:[^']|'')+)'(?::([0-9A-D,]+))?")
K1, B = 1.2, 0.75


def parse_tsvector(tsv: str) -> dict[str, int]:
    """'denver':5 'move':3,9 -> {'denver': 1, 'move': 2} (term frequency = number of positions)."""
    return {m.group(1): (len(m.group(2).split(",")) if m.group(2) else 1) for m in _ENTRY.finditer(tsv)}


def bm25(
    terms: Sequence[str], docs: Sequence[tuple[int, dict[str, int]]], n_docs: int, avgdl: float
) -> list[tuple[int, float]]:
    """BM25 of each doc for the query terms; document frequencies come from `docs`, which must hold
    every document of the scope that contains any term (the SQL match guarantees it)."""
    df = {t: sum(1 for _, tf in docs if t in tf) for t in terms}
    n = max(n_docs, len(docs), 1)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    avgdl = avgdl or 1.0
    scored = []
    for pk, tf in docs:
        dl = len(tf)
        s = 0.0
        for t in terms:
            f = tf.get(t, 0)
            if f:
                s += idf[t] * f * (K1 + 1) / (f + K1 * (1 - B + B * dl / avgdl))
        scored.append((pk, s))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored


def lexical_signal(
    conn: Connection, scope: Scope, query: str, limit: int, max_docs: int = 2000
) -> list[tuple[int, float]]:
    if not query.strip():
        return []
    terms = query_lexemes(conn, query)
    if not terms:
        return []
    docs = [(pk, parse_tsvector(tsv)) for pk, tsv in lexical_documents(conn, scope, query, max_docs)]
    if not docs:
        return []
    n_docs, avgdl = scope_stats(conn, scope)
    return bm25(terms, docs, n_docs, avgdl)[:limit]
