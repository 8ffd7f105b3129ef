"""Liveness and readiness."""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

from app.storage.db import get_engine

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process is up")
def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", summary="Database, broker and model are ready", responses={503: {"description": "not ready"}})
def readyz(request: Request) -> JSONResponse:
    checks: dict[str, str] = {}
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - readiness reports, never raises
        checks["database"] = f"error: {type(exc).__name__}"
    try:
        from workers.celery_app import celery

        with celery.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        checks["broker"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["broker"] = f"error: {type(exc).__name__}"
    model_state = getattr(request.app.state, "model_state", "loading")
    checks["model"] = model_state
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status_code=200 if ready else 503, headers=None if ready else {"Retry-After": "2"})
