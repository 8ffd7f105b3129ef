"""SQL for the indexing outbox and the embeddings it produces (worker side)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
from sqlalchemy import Connection, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.models import Embedding, IndexingState, schema_index


def pending_among(conn: Connection, layer: str, pks: list[int]) -> list[int]:
    """Those of `pks` whose `layer` work is not done yet (a redelivered task finds none)."""
    if not pks:
        return []
    res = conn.execute(
        select(IndexingState.event_pk).where(
            IndexingState.layer == layer, IndexingState.event_pk.in_(pks), IndexingState.done_at.is_(None)
        )
    )
    return [r[0] for r in res]


def mark_enqueued(conn: Connection, layer: str, pks: list[int]) -> None:
    if pks:
        conn.execute(
            update(IndexingState)
            .where(IndexingState.layer == layer, IndexingState.event_pk.in_(pks))
            .values(enqueued_at=func.now())
        )


def mark_done(conn: Connection, layer: str, pks: list[int]) -> None:
    if pks:
        conn.execute(
            update(IndexingState)
            .where(IndexingState.layer == layer, IndexingState.event_pk.in_(pks), IndexingState.done_at.is_(None))
            .values(done_at=func.now(), last_error=None)
        )


def mark_failed(conn: Connection, layer: str, pks: list[int], error: str) -> None:
    if pks:
        conn.execute(
            update(IndexingState)
            .where(IndexingState.layer == layer, IndexingState.event_pk.in_(pks), IndexingState.done_at.is_(None))
            .values(attempts=IndexingState.attempts + 1, last_error=error[:2000])
        )


def claim_stale(conn: Connection, stale_after_s: float, limit: int = 5000) -> dict[str, list[int]]:
    """Pending rows never enqueued or enqueued long ago, per layer; stamped as enqueued now.

    SKIP LOCKED lets two sweepers (two beat instances by mistake) share the work without doubling it.
    """
    cutoff = datetime.now(timezone.utc) - timedelta(seconds=stale_after_s)
    rows = conn.execute(
        select(IndexingState.layer, IndexingState.event_pk)
        .where(
            IndexingState.done_at.is_(None),
            (IndexingState.enqueued_at.is_(None)) | (IndexingState.enqueued_at < cutoff),
        )
        .order_by(IndexingState.event_pk)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    by_layer: dict[str, list[int]] = {}
    for layer, pk in rows:
        by_layer.setdefault(layer, []).append(pk)
    for layer, pks in by_layer.items():
        mark_enqueued(conn, layer, pks)
    return by_layer


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


def mark_layer_done(conn: Connection, tenant_id: int, layer: str, after_pk: int) -> int:
    """Mark `layer`'s outbox rows of the tenant's events after `after_pk` done (their work was done
    in bulk, outside the workers); returns how many."""
    res = conn.execute(
        update(IndexingState)
        .where(IndexingState.tenant_id == tenant_id, IndexingState.layer == layer,
               IndexingState.event_pk > after_pk, IndexingState.done_at.is_(None))
        .values(enqueued_at=func.coalesce(IndexingState.enqueued_at, func.now()), done_at=func.now())
    )
    return res.rowcount
