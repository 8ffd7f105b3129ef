"""Liveness and readiness."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from app.api.deps import dispatcher
from app.ports import Dispatcher
from app.storage.db import ping as ping_database

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process is up")
def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", summary="Database, broker and model are ready", responses={503: {"description": "not ready"}})
def readyz(request: Request, send: Dispatcher = Depends(dispatcher)) -> JSONResponse:
    checks: dict[str, str] = {}
    try:
        ping_database()
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - readiness reports, never raises
        checks["database"] = f"error: {type(exc).__name__}"
    try:
        send.ping()
        checks["broker"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["broker"] = f"error: {type(exc).__name__}"
    model_state = getattr(request.app.state, "model_state", "loading")
    checks["model"] = model_state
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status_code=200 if ready else 503, headers=None if ready else {"Retry-After": "2"})
