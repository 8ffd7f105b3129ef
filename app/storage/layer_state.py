"""SQL for the incremental layers' state (`layer_state`, migration 0009): per (tenant, conversation,
layer, layer_version), the layer's folded state, how many admitted events it has folded, and the
watermark (occurred_at, events.id) of the last of them.

The state itself is opaque here: JSON data, zlib-compressed (a layer's state grows with what the
conversation has said, not with its length alone: seen fingerprints, vocabulary counts). Also here:
the check that the log up to the watermark is still what was folded (`folded_count`), and the
admitted events of a batch in time order (`admitted_rows`).
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import Connection, delete, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.events import EVENT_COLUMNS, EventRow, exists_newer_version
from app.storage.models import Event, LayerState


@dataclass(frozen=True)
class StoredState:
    events: int  # admitted events folded so far
    last_at: datetime | None  # the watermark: the last folded event's (occurred_at, id)
    last_pk: int | None
    data: dict[str, Any]


def encode(data: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 1)


def decode(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob).decode("utf-8"))


def load(conn: Connection, tenant_id: int, conversation_id: str, layer: str, version: str,
         lock: bool = True) -> StoredState | None:
    t = LayerState
    q = select(t.events, t.last_at, t.last_pk, t.state).where(
        t.tenant_id == tenant_id, t.conversation_id == conversation_id, t.layer == layer, t.layer_version == version)
    r = conn.execute(q.with_for_update() if lock else q).first()
    if r is None:
        return None
    return StoredState(int(r[0]), r[1], r[2], decode(r[3]))


def save(conn: Connection, tenant_id: int, conversation_id: str, layer: str, version: str, events: int,
         last_at: datetime | None, last_pk: int | None, data: dict[str, Any]) -> int:
    """Upsert the state; returns its stored size in bytes."""
    blob = encode(data)
    stmt = pg_insert(LayerState).values(
        tenant_id=tenant_id, conversation_id=conversation_id, layer=layer, layer_version=version,
        events=events, last_at=last_at, last_pk=last_pk, state=blob, updated_at=func.now())
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["tenant_id", "conversation_id", "layer", "layer_version"],
        set_={"events": stmt.excluded.events, "last_at": stmt.excluded.last_at, "last_pk": stmt.excluded.last_pk,
              "state": stmt.excluded.state, "updated_at": func.now()},
    ))
    return len(blob)


def drop(conn: Connection, tenant_id: int, conversation_ids: Sequence[str], layer: str | None = None,
         keep_version: str | None = None) -> int:
    """Forget the states of these conversations (one layer's, or all; all versions but `keep_version`)."""
    t = LayerState
    q = delete(t).where(t.tenant_id == tenant_id, t.conversation_id.in_(list(conversation_ids)))
    if layer is not None:
        q = q.where(t.layer == layer)
    if keep_version is not None:
        q = q.where(t.layer_version != keep_version)
    return conn.execute(q).rowcount


def _admitted():  # noqa: ANN202
    """What the layers read of the log (`events.conversation_log`): not gated out, not superseded."""
    return ((Event.gate_status.is_(None)) | (Event.gate_status != "gated_out")) & ~exists_newer_version(Event.id)


def folded_count(conn: Connection, tenant_id: int, conversation_id: str, last_at: datetime | None,
                 last_pk: int | None) -> int:
    """Admitted events of the conversation at or before the watermark (index range on
    (tenant, conversation, occurred_at)): equal to the state's count unless the log changed under it."""
    if last_at is None or last_pk is None:
        return 0
    q = select(func.count()).select_from(Event).where(
        Event.tenant_id == tenant_id, Event.conversation_id == conversation_id, _admitted(),
        Event.occurred_at <= last_at, tuple_(Event.occurred_at, Event.id) <= tuple_(last_at, last_pk))
    return int(conn.execute(q).scalar_one())


def admitted_rows(conn: Connection, tenant_id: int, conversation_id: str, pks: Sequence[int]) -> list[EventRow]:
    """The admitted events among `pks` in this conversation, in time order (then id)."""
    if not pks:
        return []
    q = select(*EVENT_COLUMNS).where(Event.tenant_id == tenant_id, Event.conversation_id == conversation_id,
                                     Event.id.in_(list(pks)), _admitted())
    return [EventRow(*r) for r in conn.execute(q.order_by(Event.occurred_at, Event.id))]


def admitted_count(conn: Connection, tenant_id: int, conversation_id: str) -> int:
    q = select(func.count()).select_from(Event).where(
        Event.tenant_id == tenant_id, Event.conversation_id == conversation_id, _admitted())
    return int(conn.execute(q).scalar_one())
