"""Seed a scale step from precomputed vectors: the events the API would not reach in bounded time.

`palimpsest bench scale --vectors DIR` grows each step in two parts. The events below the step's last
`--api-events` are written here, in-process, by the service's own writer (`write_batch`, 1,000 per
transaction, with their outbox rows, as the API writes them), and their vectors are COPYed from
`bench.scale_vectors`'s folder (computed by the service's embedder, on whatever device had the time;
each row checked against its text) with the HNSW index dropped and then built once. The last
`--api-events` of the step then go through the API and the worker as usual, so the step's ingest and
indexing rates are measured on a tenant that already holds its size; the queries follow.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import text

from app.domain.event import turn_text
from bench.scale_data import Corpus, Planted
from bench.scale_vectors import SeedVectors

WRITE_BATCH = 1000
INDEX_MEMORY = "4GB"  # the 1M-vector graph is ~2 GB; pgvector builds far faster when it fits


def check(vectors: SeedVectors, corpus: Corpus, model: str) -> None:
    meta = vectors.meta
    wanted = {"seed": corpus.seed, "assistant_share": corpus.assistant_share, "model": model}
    wrong = {k: (meta.get(k), v) for k, v in wanted.items() if meta.get(k) != v}
    if wrong:
        raise ValueError(f"{vectors.path} does not match this run (file, run): {wrong}")


def write_events(engine, tenant_id: int, corpus: Corpus, start: int, stop: int,
                 planted: list[Planted] | None = None) -> float:
    """Write events [start, stop) of the corpus as the API does: the service's writer, one transaction
    per `WRITE_BATCH`, outbox rows included (no tasks enqueued). Appends the planted facts among them
    to `planted`; returns the seconds spent writing (generating the events is not counted)."""
    from app.domain.layer_registry import LAYERS
    from app.services.ingest import write_batch
    from app.transfer import event_from_record

    seconds = 0.0
    batch = []
    for pos, (ev, p) in enumerate(corpus.events(start, stop), start + 1):
        if p is not None and planted is not None:
            planted.append(p)
        batch.append(event_from_record(ev))
        if len(batch) == WRITE_BATCH or pos == stop:
            t = time.perf_counter()
            with engine.begin() as conn:
                write_batch(conn, tenant_id, batch, list(LAYERS))
            seconds += time.perf_counter() - t
            batch = []
    return seconds


def seed(engine, dsn: str, corpus: Corpus, tenant_id: int, start: int, stop: int, vectors: SeedVectors,
         model: str, planted: list[Planted], log: Callable[[str], None]) -> dict[str, Any]:
    """Write events [start, stop) of the corpus with their vectors; returns the seconds of each part."""
    import psycopg
    from pgvector.psycopg import register_vector

    from app.storage import outbox
    from app.storage import vectors as vector_store
    from app.storage.db import refresh_statistics

    if stop > vectors.events:
        raise ValueError(f"{vectors.path} holds {vectors.events:,} vectors; seeding to {stop:,} needs more")
    out: dict[str, Any] = {"events": stop - start}
    with engine.begin() as conn:
        last_pk = conn.execute(text("SELECT coalesce(max(id), 0) FROM events WHERE tenant_id = :t"),
                               {"t": tenant_id}).scalar_one()
        vector_store.drop_dense_index(conn)

    try:
        t = time.perf_counter()  # wall time of this part, generating the events included
        write_events(engine, tenant_id, corpus, start, stop, planted)
        out["write_s"] = round(time.perf_counter() - t, 1)
        log(f"seeded {stop - start:,} events through the writer in {out['write_s']:.0f}s "
            f"({(stop - start) / out['write_s']:.0f} events/s)")

        t = time.perf_counter()
        with psycopg.connect(dsn) as pg:
            register_vector(pg)
            with pg.cursor() as cur:
                cur.execute("SELECT event_id, id FROM events WHERE tenant_id = %s AND id > %s", (tenant_id, last_pk))
                pks = dict(cur.fetchall())
                with cur.copy("COPY embeddings (event_pk, model, tenant_id, conversation_id, embedding) "
                              "FROM STDIN WITH (FORMAT BINARY)") as cp:
                    cp.set_types(["int8", "varchar", "int8", "varchar", "vector"])
                    for pos, (ev, _) in enumerate(corpus.events(start, stop), start):
                        vec = vectors.row(pos, turn_text(ev["speaker"], ev["content"]))
                        cp.write_row((pks[ev["event_id"]], model, tenant_id, ev["conversation_id"], vec))
        with engine.begin() as conn:
            out["outbox_marked"] = outbox.mark_layer_done(conn, tenant_id, "embed", last_pk)
        out["vectors_s"] = round(time.perf_counter() - t, 1)
        log(f"copied {stop - start:,} vectors in {out['vectors_s']:.0f}s")
    finally:  # a failed seed must not leave the tenant without its dense index
        t = time.perf_counter()
        with engine.begin() as conn:
            vector_store.build_dense_index(conn, INDEX_MEMORY)
        out["index_build_s"] = round(time.perf_counter() - t, 1)
    with engine.connect() as conn:
        out["index_vectors"] = conn.execute(text("SELECT count(*) FROM embeddings")).scalar_one()
    log(f"built the HNSW index over {out['index_vectors']:,} vectors in {out['index_build_s']:.0f}s")
    t = time.perf_counter()
    refresh_statistics(engine)
    out["analyze_s"] = round(time.perf_counter() - t, 1)
    return out
