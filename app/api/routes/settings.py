"""The tenant as the service sees it (`GET /v1/status`) and its language (`PUT /v1/settings/language`).

`/v1/status` says what the tenant's language changes: the text-search configuration, and which
background layers run or are skipped (with the reason), for the tenant and for each conversation
with its own language. Setting the tenant's language needs `admin` (it re-indexes and rebuilds
every conversation that crosses between English and another language); a conversation's, `write`.
"""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy import Connection

from app.api.deps import DB, only_query_params, principal, reader
from app.api.erasure_schemas import LanguageIn, LanguageOut, StatusOut
from app.api.error_models import ROUTE_ERRORS
from app.services import language
from app.settings import get_settings
from app.storage.tenants import Principal

router = APIRouter(tags=["settings"], responses=ROUTE_ERRORS)


@router.get("/v1/status", response_model=StatusOut, dependencies=[only_query_params()],
            summary="The tenant, the key's scopes, its language and which layers run for it")
def status(who: Principal = Depends(reader), conn: Connection = DB) -> StatusOut:
    info = language.status(conn, who.tenant_id)
    return StatusOut(tenant=who.tenant_name, scopes=list(who.scopes),
                     embedding_model=get_settings().embedding_model_name, **info)


@router.put("/v1/settings/language", response_model=LanguageOut, dependencies=[only_query_params()],
            summary="Set the tenant's language (admin) or one conversation's (write)")
def set_language(body: LanguageIn, who: Principal = Depends(principal), conn: Connection = DB) -> LanguageOut:
    needed = "write" if body.conversation_id is not None else "admin"
    if needed not in who.scopes and "admin" not in who.scopes:
        raise HTTPException(403, f"this API key lacks the '{needed}' scope")
    try:
        out = language.set_language(conn, who.tenant_id, body.language, body.conversation_id)
    except ValueError as exc:
        raise HTTPException(422, detail=[{"field": "language", "type": "value_error", "message": str(exc)}]) from None
    return LanguageOut(**out)
