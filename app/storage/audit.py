"""Erasure: what an erasure would take (counts per table) and the audit log of those that happened.

The counts are read with the same scope the deletes use (`app.services.forget`), so a dry run
answers exactly what the erasure then removes. The tables holding per-event rows are found in the
catalog (every foreign key to `events.id` with ON DELETE CASCADE), so a table a later migration adds
is counted without a change here; conversation-level tables are the ones `layer_runs` deletes.

The audit log keeps who (the key), when, what (the scope) and the counts: never the erased words,
never event ids.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, insert, select, text

from app.storage.layer_runs import CONVERSATION_TABLES
from app.storage.models import ApiKey, ErasureAudit, Event

_CASCADE_FKS = """
SELECT c.conrelid::regclass::text AS tbl, array_agg(a.attname::text ORDER BY a.attname) AS cols
FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
WHERE c.contype = 'f' AND c.confrelid = 'events'::regclass AND c.confdeltype = 'c'
GROUP BY 1 ORDER BY 1
"""


def conversation_event_pks(conn: Connection, tenant_id: int, conversation_id: str) -> list[int]:
    return list(conn.execute(select(Event.id).where(Event.tenant_id == tenant_id,
                                                    Event.conversation_id == conversation_id)).scalars())


def speaker_event_pks(conn: Connection, tenant_id: int, speaker: str,
                      conversation_id: str | None) -> tuple[list[int], list[str]]:
    """The events a speaker wrote (in one conversation, or in all when `conversation_id` is None)
    and the conversations they are in."""
    q = select(Event.id, Event.conversation_id).where(Event.tenant_id == tenant_id, Event.speaker == speaker)
    if conversation_id is not None:
        q = q.where(Event.conversation_id == conversation_id)
    rows = conn.execute(q).all()
    return [r[0] for r in rows], sorted({r[1] for r in rows})


def counts(conn: Connection, tenant_id: int, event_pks: Sequence[int],
           conversation_ids: Sequence[str]) -> dict[str, int]:
    """Rows per table that go when these events are deleted and the conversation-level rows of
    these conversations are dropped (tables with no row left out)."""
    pks, convs = list(event_pks), list(conversation_ids)
    out: dict[str, int] = {"events": len(pks)}
    conversation_tables = {t.__tablename__ for t in CONVERSATION_TABLES}
    if pks:
        for table, cols in conn.execute(text(_CASCADE_FKS)).all():
            if table in conversation_tables or table == "events":
                continue
            where = " OR ".join(f'"{c}" = ANY(:p)' for c in cols)
            out[table] = int(conn.execute(text(f"SELECT count(*) FROM {table} WHERE {where}"), {"p": pks}).scalar_one())
    if convs:
        for t in CONVERSATION_TABLES:
            out[t.__tablename__] = int(conn.execute(
                select(func.count()).select_from(t).where(t.tenant_id == tenant_id, t.conversation_id.in_(convs))
            ).scalar_one())
    return {k: v for k, v in out.items() if v}


def record(conn: Connection, tenant_id: int, key_id: int, action: str, *, conversation_id: str | None,
           speaker: str | None, all_conversations: bool, conversations: int, table_counts: dict[str, int],
           request_id: str | None = None) -> int:
    """Write one audit row (the key's prefix and name are copied: they outlive a revocation)."""
    key = conn.execute(select(ApiKey.prefix, ApiKey.name).where(ApiKey.id == key_id)).first()
    return conn.execute(insert(ErasureAudit).values(
        tenant_id=tenant_id, key_id=key_id, key_prefix=key.prefix if key else "", key_name=key.name if key else "",
        request_id=request_id, action=action, conversation_id=conversation_id, speaker=speaker,
        all_conversations=all_conversations, conversations=conversations, counts=table_counts,
    ).returning(ErasureAudit.id)).scalar_one()


def entries(conn: Connection, tenant_id: int, limit: int, before_id: int | None = None) -> list[dict[str, Any]]:
    """The tenant's audit rows, newest first, `limit` of them, older than `before_id` when given."""
    a = ErasureAudit
    q = select(a.id, a.at, a.key_id, a.key_prefix, a.key_name, a.request_id, a.action, a.conversation_id,
               a.speaker, a.all_conversations, a.conversations, a.counts).where(a.tenant_id == tenant_id)
    if before_id is not None:
        q = q.where(a.id < before_id)
    return [dict(r._mapping) for r in conn.execute(q.order_by(a.id.desc()).limit(limit))]


def delete_events(conn: Connection, tenant_id: int, event_pks: Sequence[int]) -> int:
    """Delete these events of the tenant (per-event rows go by cascade); returns how many."""
    pks = list(event_pks)
    if not pks:
        return 0
    return conn.execute(Event.__table__.delete().where(Event.tenant_id == tenant_id, Event.id.in_(pks))).rowcount
