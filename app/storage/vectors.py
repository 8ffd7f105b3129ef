"""SQL for the stored event vectors (`embeddings`, one per event and model) and their HNSW index."""
from __future__ import annotations

import numpy as np
from sqlalchemy import Connection, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.models import Embedding, schema_index


def upsert_embeddings(
    conn: Connection, model: str, rows: list[tuple[int, int, str]], vectors: np.ndarray
) -> None:
    """rows are (event pk, tenant_id, conversation_id); a re-run for the same model changes nothing."""
    if not rows:
        return
    # executemany pages of one compiled statement (a `.values(list)` would compile a bind per value)
    conn.execute(
        pg_insert(Embedding).on_conflict_do_nothing(index_elements=["event_pk", "model"]),
        [{"event_pk": pk, "model": model, "tenant_id": t, "conversation_id": c, "embedding": vec}
         for (pk, t, c), vec in zip(rows, vectors)],
    )


def count_embeddings(conn: Connection, model: str, pks: list[int]) -> int:
    return conn.execute(
        select(func.count()).select_from(Embedding).where(Embedding.model == model, Embedding.event_pk.in_(pks))
    ).scalar_one()


def conversation_vectors(conn: Connection, tenant_id: int, conversation_id: str, model: str) -> dict[int, np.ndarray]:
    """event pk -> vector, for the conversation's events embedded with `model`."""
    res = conn.execute(
        select(Embedding.event_pk, Embedding.embedding).where(
            Embedding.tenant_id == tenant_id, Embedding.conversation_id == conversation_id, Embedding.model == model
        )
    )
    return {r[0]: np.asarray(r[1], dtype=np.float32) for r in res}


def delete_embeddings(conn: Connection, tenant_id: int, conversation_id: str, model: str) -> int:
    """A conversation's vectors for one model (an embed rebuild recomputes them)."""
    return conn.execute(delete(Embedding).where(
        Embedding.tenant_id == tenant_id, Embedding.conversation_id == conversation_id, Embedding.model == model,
    )).rowcount


# ---------------------------------------------------------------- the dense index, for bulk loads

DENSE_INDEX = "ix_embeddings_hnsw"


def drop_dense_index(conn: Connection) -> None:
    """Drop the HNSW index before a bulk load of vectors: inserting a million rows into the graph one
    by one is far slower than building it once afterwards (`build_dense_index`). Dense search
    falls back to an exact scan meanwhile, so do this only where no query needs it."""
    conn.exec_driver_sql(f"DROP INDEX IF EXISTS {DENSE_INDEX}")


def build_dense_index(conn: Connection, maintenance_work_mem: str = "2GB") -> None:
    """(Re)create the HNSW index exactly as the schema declares it (m, ef_construction of migration
    0003). `maintenance_work_mem` should hold the graph (~2 KB per 384-d vector): pgvector builds
    many times faster when it fits, and says so in a NOTICE when it does not."""
    conn.execute(select(func.set_config("maintenance_work_mem", maintenance_work_mem, True)))
    schema_index(DENSE_INDEX).create(conn, checkfirst=True)


def vectors_for(conn: Connection, pks: list[int], model: str) -> dict[int, np.ndarray]:
    """event pk -> vector, for those of `pks` embedded with `model` (an incremental layer's batch and tail)."""
    if not pks:
        return {}
    res = conn.execute(select(Embedding.event_pk, Embedding.embedding).where(
        Embedding.event_pk.in_(list(pks)), Embedding.model == model))
    return {r[0]: np.asarray(r[1], dtype=np.float32) for r in res}


# ---------------------------------------------------------------- nearest earlier events (the gate)

_NEAREST_EARLIER = text("""
SELECT q.event_pk, n.event_pk, n.d
FROM embeddings q
LEFT JOIN LATERAL (
    SELECT e.event_pk, e.embedding <=> q.embedding AS d
    FROM embeddings e JOIN events ev ON ev.id = e.event_pk
    WHERE e.tenant_id = q.tenant_id AND e.conversation_id = q.conversation_id AND e.model = q.model
      AND e.event_pk < q.event_pk
      AND (ev.gate_status IS NULL OR ev.gate_status <> 'gated_out')
      AND NOT EXISTS (SELECT 1 FROM events nv WHERE nv.supersedes_id = ev.id)
    ORDER BY e.embedding <=> q.embedding
    LIMIT :k
) n ON true
WHERE q.tenant_id = :tenant AND q.conversation_id = :conv AND q.model = :model AND q.event_pk = ANY(:pks)
""")


def nearest_earlier(conn: Connection, tenant_id: int, conversation_id: str, model: str, pks: list[int], k: int,
                    ef_search: int | None = None, spare: int = 3) -> dict[int, list[tuple[int, float]]]:
    """event pk -> its nearest earlier events as [(pk, cosine similarity)], most similar first (equal
    similarities: the earlier pk first), at most `k`: for each of `pks` with a vector of `model`, the
    conversation's events with a smaller pk that are admitted (not gated out) and not superseded by a
    correction, by one pgvector nearest-neighbour query per event (a LATERAL join over the batch; an event with no earlier one has []). The
    planner picks the HNSW index (iterative scans, `ef_search` candidates; approximate) or an exact
    scan of the conversation's rows (exact); either way only the batch's neighbours leave the
    database, never the conversation's vectors. An event of `pks` without a vector is absent. `spare`
    more rows are read so that ties at the k-th place are broken by pk, not by the index's order."""
    if not pks or k <= 0:
        return {}
    if ef_search is not None:  # for this transaction only; `relaxed_order`: results re-sorted below
        conn.execute(text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                          "set_config('hnsw.ef_search', :ef, true)"), {"ef": str(int(ef_search))})
    res = conn.execute(_NEAREST_EARLIER, {"tenant": tenant_id, "conv": conversation_id, "model": model,
                                          "pks": list(pks), "k": k + spare})
    found: dict[int, list[tuple[int, float]]] = {}
    for q, n, d in res:
        found.setdefault(int(q), [])
        if n is not None:
            found[int(q)].append((int(n), 1.0 - float(d)))
    return {pk: sorted(near, key=lambda t: (-t[1], t[0]))[:k] for pk, near in found.items()}
