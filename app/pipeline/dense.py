"""Stage 7: the dense signal (pgvector cosine search over the event embeddings)."""
from __future__ import annotations

import numpy as np
from sqlalchemy import Connection

from app.storage.search import Scope, dense_candidates


def dense_signal(
    conn: Connection, scope: Scope, query_vector: np.ndarray, model: str, limit: int
) -> list[tuple[int, float]]:
    return dense_candidates(conn, scope, query_vector, model, limit)
