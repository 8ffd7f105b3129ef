"""The FastAPI application: routes, error shapes, and the model warm-up at start."""
from __future__ import annotations

import gc
import threading
from pathlib import Path
from contextlib import asynccontextmanager

import structlog
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DBAPIError, OperationalError

from app.api.routes import answer, conversations, erasure, events, health, layers, query
from app.api.routes import settings as settings_routes
from app.api.docs import mount_docs
from app.api.errors import document as document_errors
from app.api.errors import error_response
from app.api.errors import install as install_errors
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
        # The model's (and the libraries') many long-lived objects go to the permanent generation, so
        # a full collection no longer walks them: each one took 100-400 ms of some query's time.
        gc.freeze()
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


def create_app() -> FastAPI:
    install_runtime()  # no URL configured: storage falls back on the embedded server (app/runtime.py)
    app = FastAPI(
        title="Palimpsest",
        version="0.1.0",
        description="Memory for AI agents: every event kept verbatim, evidence reconstructed at query time.",
        lifespan=lifespan,
        docs_url=None,  # served by app/api/docs.py from packaged assets, not a CDN
        redoc_url=None,
    )
    mount_docs(app)
    app.add_middleware(BodySizeLimit, max_bytes=get_settings().max_body_bytes)
    app.add_middleware(RequestContext)  # outermost: times and tags everything, rejections included
    register_collectors()
    app.add_route("/metrics", metrics_endpoint, include_in_schema=False)
    # The memory explorer: static files, no build step; it talks to the API with the user's key.
    app.mount("/ui", StaticFiles(directory=Path(__file__).resolve().parents[1] / "ui", html=True), name="ui")
    for r in (health.router, events.router, conversations.router, query.router, answer.router, layers.router,
              erasure.router, erasure.speakers_router, erasure.audit_router, settings_routes.router):
        app.include_router(r)
    mount_mcp(app)  # MCP tools at /mcp, same API keys; runs its session manager inside the lifespan

    install_errors(app)  # one error shape: {"error", "detail", "fields": [{"path", "message"}]}

    @app.exception_handler(OperationalError)
    @app.exception_handler(DBAPIError)
    async def _db_down(_request: Request, exc: DBAPIError) -> JSONResponse:
        if isinstance(exc, OperationalError) or exc.connection_invalidated:
            log.warning("database_unavailable", error=str(exc.orig))
            return error_response(503, "database unavailable; retry", headers={"Retry-After": "2"})
        log.error("database_error", error=str(exc.orig))
        return error_response(500, "database error")

    def openapi() -> dict:
        # Document the error body this service really sends (app/api/errors.py) instead of FastAPI's default.
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            app.openapi_schema = document_errors(spec)
        return app.openapi_schema

    app.openapi = openapi
    return app


app = create_app()
