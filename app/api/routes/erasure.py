"""Erasure, deliberately: forget a conversation or a speaker (admin scope, dry run, audit log).

- `DELETE /v1/conversations/{id}`: the conversation's events and everything derived from them.
- `DELETE /v1/speakers/{name}?conversation_id=...` (or `?all_conversations=true`): the events the
  speaker wrote there; their conversations rebuild without them. Neither or both: 422.
- `?dry_run=true` on either: the counts per table, nothing deleted, nothing recorded.
- `GET /v1/audit/erasures`: who erased what and when, with the counts (never the words), newest first.

All need the `admin` scope: a read/write key (an agent's) cannot erase.
"""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from sqlalchemy import Connection

from app.api import paging
from app.api.deps import DB, admin, only_query_params
from app.api.erasure_schemas import AuditEntry, AuditPage, ErasureOut
from app.api.error_models import ROUTE_ERRORS, ErrorOut
from app.api.schemas import NO_NUL
from app.services.forget import Erasure, ScopeRequired, erase_conversation, erase_speaker
from app.storage import audit
from app.storage.tenants import Principal

_ERRORS = {**ROUTE_ERRORS, 403: {"model": ErrorOut, "description": "The API key lacks the `admin` scope"}}
_DRY_RUN = Query(False, description="Answer what would be deleted (counts per table) and delete nothing.")

router = APIRouter(prefix="/v1/conversations", tags=["erasure"], responses=_ERRORS)
speakers_router = APIRouter(prefix="/v1/speakers", tags=["erasure"], responses=_ERRORS)
audit_router = APIRouter(prefix="/v1/audit", tags=["erasure"], responses=_ERRORS)


def _out(e: Erasure) -> ErasureOut:
    return ErasureOut(dry_run=e.dry_run, action=e.action, conversation_id=e.conversation_id, speaker=e.speaker,
                      all_conversations=e.all_conversations, deleted_events=e.events, conversations=e.conversations,
                      counts=e.counts, audit_id=e.audit_id)


def _request_id(request: Request) -> str | None:
    rid = request.headers.get("x-request-id")
    return rid[:128] if rid and rid.isprintable() else None


@router.delete("/{conversation_id}", response_model=ErasureOut, dependencies=[only_query_params("dry_run")],
               summary="Forget a conversation: its events and everything derived from them (admin)")
def delete_conversation(conversation_id: str, request: Request, dry_run: bool = _DRY_RUN,
                        who: Principal = Depends(admin), conn: Connection = DB) -> ErasureOut:
    done = erase_conversation(conn, who, conversation_id, dry_run=dry_run, request_id=_request_id(request))
    if done is None:
        raise HTTPException(404, f"conversation {conversation_id!r} not found")
    return _out(done)


@speakers_router.delete(
    "/{speaker}", response_model=ErasureOut,
    dependencies=[only_query_params("conversation_id", "all_conversations", "dry_run")],
    summary="Forget a speaker in one conversation, or in all with all_conversations=true (admin)",
)
def delete_speaker(
    speaker: str, request: Request,
    conversation_id: str | None = Query(None, min_length=1, max_length=256, pattern=NO_NUL,
                                        description="The conversation to erase the speaker from."),
    all_conversations: bool = Query(False, description="Erase the speaker from every conversation of the tenant "
                                    "(required when no conversation_id is given: role names such as `user` "
                                    "speak in every conversation)."),
    dry_run: bool = _DRY_RUN,
    who: Principal = Depends(admin), conn: Connection = DB,
) -> ErasureOut:
    try:
        done = erase_speaker(conn, who, speaker, conversation_id=conversation_id,
                             all_conversations=all_conversations, dry_run=dry_run, request_id=_request_id(request))
    except ScopeRequired:
        both = conversation_id is not None
        raise HTTPException(422, detail=[{
            "field": "all_conversations" if both else "conversation_id", "type": "erasure_scope",
            "message": "give conversation_id or all_conversations=true, not both" if both else
            "required: name the conversation to erase the speaker from, or pass all_conversations=true "
            "to erase them from every conversation"}]) from None
    if done is None:
        where = f" in conversation {conversation_id!r}" if conversation_id is not None else ""
        raise HTTPException(404, f"speaker {speaker!r} not found{where}")
    return _out(done)


@audit_router.get("/erasures", response_model=AuditPage, dependencies=[only_query_params("limit", "cursor")],
                  summary="The erasure audit log: who erased what, when, how many rows (admin)")
def erasures(limit: int = paging.limit_query(100, what="entries"), cursor: str | None = paging.cursor_query(),
             who: Principal = Depends(admin), conn: Connection = DB) -> AuditPage:
    pos = paging.decode(cursor, who.tenant_id, "audit/erasures", None)
    if pos is not None and not isinstance(pos, int):
        raise paging.invalid("malformed cursor")
    rows = audit.entries(conn, who.tenant_id, limit + 1, before_id=pos)
    more = len(rows) > limit
    rows = rows[:limit]
    nxt = paging.encode(who.tenant_id, "audit/erasures", None, rows[-1]["id"]) if more else None
    return AuditPage(entries=[AuditEntry(**r) for r in rows], next_cursor=nxt)
