"""SQL for a tenant's backup: its verbatim events, read in pages (`app.transfer` writes them as JSON
Lines; a restore goes back through ingest, so it has no SQL of its own here)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, select, tuple_

from app.storage.models import Event


def tenant_events(conn: Connection, tenant_id: int, batch: int = 1000) -> Iterator[Any]:
    """The tenant's events in (conversation, time, id) order, streamed by keyset pagination, `batch`
    rows a statement. Each row has the event's columns (`metadata` the JSON object) and `supersedes`:
    the `event_id` of the event it corrects, None for an original."""
    old = Event.__table__.alias("old")  # a correction names the event_id it supersedes
    q = select(
        Event.id, Event.conversation_id, Event.event_id, Event.speaker, Event.recipient, Event.role, Event.content,
        Event.occurred_at, Event.metadata_, old.c.event_id.label("supersedes"),
    ).outerjoin(old, old.c.id == Event.supersedes_id).where(Event.tenant_id == tenant_id)
    order = (Event.conversation_id, Event.occurred_at, Event.id)
    last: tuple | None = None
    while True:
        page = q if last is None else q.where(tuple_(*order) > tuple_(*last))
        rows = conn.execute(page.order_by(*order).limit(batch)).all()
        if not rows:
            return
        yield from rows
        last = (rows[-1].conversation_id, rows[-1].occurred_at, rows[-1].id)
