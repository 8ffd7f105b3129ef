"""The FastAPI application: routes, error shapes, and the model warm-up at start."""
from __future__ import annotations

import threading
from pathlib import Path
from contextlib import asynccontextmanager

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from sqlalchemy.exc import DBAPIError, OperationalError

from app.api.routes import answer, conversations, events, health, layers, query
from app.api.limits import BodySizeLimit
from app.api.mcp import mount_mcp
from app.api.observability import RequestContext, metrics_endpoint, register_collectors
from app.logging import configure_logging
from app.runtime import install as install_runtime
from app.settings import get_settings

log = structlog.get_logger(__name__)


def _warm_model(app: FastAPI) -> None:
    from app.adapters.embedder import get_embedder

    try:
        get_embedder().encode(["warm-up"])
        app.state.model_state = "ok"
    except Exception as exc:  # noqa: BLE001 - /readyz reports it
        app.state.model_state = f"error: {exc}"
        log.error("model_load_failed", error=str(exc))


@asynccontextmanager
async def lifespan(app: FastAPI):
    configure_logging()
    if getattr(app.state, "model_state", None) != "ok":
        app.state.model_state = "loading"
        # Load the model beside the server: /healthz answers at once, /readyz once the model is in.
        threading.Thread(target=_warm_model, args=(app,), daemon=True, name="model-warmup").start()
    yield


def _field(loc: tuple) -> str:
    # The first element says where the value came from (body, query, path); the rest is the field.
    parts = [str(p) for p in (loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc)]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "body"


def create_app() -> FastAPI:
    install_runtime()  # no URL configured: storage falls back on the embedded server (app/runtime.py)
    app = FastAPI(
        title="Palimpsest",
        version="0.1.0",
        description="Memory for AI agents: every event kept verbatim, evidence reconstructed at query time.",
        lifespan=lifespan,
    )
    app.add_middleware(BodySizeLimit, max_bytes=get_settings().max_body_bytes)
    app.add_middleware(RequestContext)  # outermost: times and tags everything, rejections included
    register_collectors()
    app.add_route("/metrics", metrics_endpoint, include_in_schema=False)
    # The memory explorer: static files, no build step; it talks to the API with the user's key.
    app.mount("/ui", StaticFiles(directory=Path(__file__).resolve().parents[1] / "ui", html=True), name="ui")
    for r in (health.router, events.router, conversations.router, conversations.speakers_router, query.router,
              answer.router, layers.router):
        app.include_router(r)
    mount_mcp(app)  # MCP tools at /mcp, same API keys; runs its session manager inside the lifespan

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return JSONResponse({"error": "invalid_request", "detail": errors}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # One error shape everywhere: {"error": ..., "detail": ...}
        codes = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
                 409: "conflict", 413: "payload_too_large", 422: "invalid_request", 429: "rate_limited",
                 501: "not_configured", 502: "bad_gateway", 503: "unavailable"}
        return JSONResponse({"error": codes.get(exc.status_code, "error"), "detail": exc.detail},
                            status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(OperationalError)
    @app.exception_handler(DBAPIError)
    async def _db_down(_request: Request, exc: DBAPIError) -> JSONResponse:
        if isinstance(exc, OperationalError) or exc.connection_invalidated:
            log.warning("database_unavailable", error=str(exc.orig))
            return JSONResponse({"error": "unavailable", "detail": "database unavailable; retry"},
                                status_code=503, headers={"Retry-After": "2"})
        log.error("database_error", error=str(exc.orig))
        return JSONResponse({"error": "internal", "detail": "database error"}, status_code=500)

    def openapi() -> dict:
        # Document the 422 body this service really sends (see _invalid) instead of FastAPI's default.
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            from app.api.schemas import ValidationErrorOut

            spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            ours = ValidationErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas = spec.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(ours.pop("$defs", {}))
            schemas["HTTPValidationError"] = ours
            schemas.pop("ValidationError", None)
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi
    return app


app = create_app()
