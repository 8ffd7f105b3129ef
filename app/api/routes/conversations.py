"""A tenant's conversations: the list, the background work's lag, and forgetting (a conversation or a speaker)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Query
from sqlalchemy import Connection

from app.api.deps import DB, only_query_params, reader, writer
from app.api.schemas import ROUTE_ERRORS, ConversationList, ConversationStatus, ConversationSummary
from app.services.conversations import conversations, indexing_status
from app.services.forget import forget_conversation, forget_speaker
from app.storage.tenants import Principal

router = APIRouter(prefix="/v1/conversations", tags=["conversations"], responses=ROUTE_ERRORS)


@router.get("", response_model=ConversationList, summary="The tenant's conversations, most recently active first",
            dependencies=[only_query_params("limit")])
def list_conversations(
    limit: int = Query(200, ge=1, le=1000), who: Principal = Depends(reader), conn: Connection = DB
) -> ConversationList:
    rows = conversations(conn, who.tenant_id, limit)
    return ConversationList(conversations=[
        ConversationSummary(conversation_id=c, events=n, first_at=a, last_at=b) for c, n, a, b in rows
    ])


@router.get("/{conversation_id}/status", response_model=ConversationStatus, summary="Indexing lag per layer",
            dependencies=[only_query_params()])
def status(conversation_id: str, who: Principal = Depends(reader), conn: Connection = DB) -> ConversationStatus:
    events, pending = indexing_status(conn, who.tenant_id, conversation_id)
    return ConversationStatus(conversation_id=conversation_id, events=events, pending=pending)


@router.delete("/{conversation_id}", summary="Forget a conversation: its events and everything derived from them")
def delete_conversation(conversation_id: str, who: Principal = Depends(writer), conn: Connection = DB) -> dict:
    n = forget_conversation(conn, who.tenant_id, conversation_id)
    if n == 0:
        raise HTTPException(404, f"conversation {conversation_id!r} not found")
    return {"deleted_events": n}


speakers_router = APIRouter(prefix="/v1/speakers", tags=["conversations"], responses=ROUTE_ERRORS)


@speakers_router.delete("/{speaker}", summary="Forget a speaker: every event they wrote and what was derived")
def delete_speaker(speaker: str, who: Principal = Depends(writer), conn: Connection = DB) -> dict:
    n, conversations = forget_speaker(conn, who.tenant_id, speaker)
    if n == 0:
        raise HTTPException(404, f"speaker {speaker!r} not found")
    return {"deleted_events": n, "conversations": conversations}
