"""Per-conversation views of the background work."""
from __future__ import annotations

from fastapi import APIRouter, Depends
from sqlalchemy import Connection

from app.api.deps import db, reader
from app.api.schemas import ConversationStatus
from app.storage import events as store
from app.storage.tenants import Principal
from workers.registry import LAYERS

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])


@router.get("/{conversation_id}/status", response_model=ConversationStatus, summary="Indexing lag per layer")
def status(conversation_id: str, who: Principal = Depends(reader), conn: Connection = Depends(db)) -> ConversationStatus:
    events, pending = store.conversation_status(conn, who.tenant_id, conversation_id)
    return ConversationStatus(
        conversation_id=conversation_id, events=events, pending={layer: pending.get(layer, 0) for layer in LAYERS}
    )
