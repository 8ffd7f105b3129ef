"""Job: embed newly written events (one vector per event and model).

Idempotent: only events whose outbox row for `embed` is still pending are embedded, and the
upsert ignores a vector that already exists, so a redelivered task changes nothing.
"""
from __future__ import annotations

import structlog

from app.models.embedder import get_embedder
from app.storage import events as event_store
from app.storage import indexing
from app.storage.db import get_engine
from workers.celery_app import celery, retry_policy

log = structlog.get_logger(__name__)
LAYER = "embed"


def embed_text(speaker: str, content: str) -> str:
    # The speaker's name is part of what a question asks about ("what did Ana say about ...").
    return f"{speaker}: {content}"


def embed_pending(pks: list[int]) -> int:
    engine = get_engine()
    with engine.connect() as conn:
        todo = indexing.pending_among(conn, LAYER, pks)
        rows = event_store.conversation_events_for_embedding(conn, todo)
    if not rows:
        return 0
    embedder = get_embedder()
    vectors = embedder.encode([embed_text(sp, content) for _, _, _, sp, content in rows])
    with engine.begin() as conn:
        indexing.upsert_embeddings(conn, embedder.name, [(pk, t, c) for pk, t, c, _, _ in rows], vectors)
        indexing.mark_done(conn, LAYER, [r[0] for r in rows])
    return len(rows)


@celery.task(name="palimpsest.embed", bind=True, **retry_policy())
def embed_events(self, pks: list[int]) -> int:
    try:
        n = embed_pending(pks)
    except Exception as exc:
        with get_engine().begin() as conn:
            indexing.mark_failed(conn, LAYER, pks, repr(exc))
        raise
    log.info("embedded", events=n, requested=len(pks), attempt=self.request.retries)
    return n
