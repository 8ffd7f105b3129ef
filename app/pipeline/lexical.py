"""Stage 6: the lexical signal (PostgreSQL full-text search over the verbatim content)."""
from __future__ import annotations

from sqlalchemy import Connection

from app.storage.search import Scope, lexical_candidates


def lexical_signal(conn: Connection, scope: Scope, query: str, limit: int) -> list[tuple[int, float]]:
    if not query.strip():
        return []
    return lexical_candidates(conn, scope, query, limit)
