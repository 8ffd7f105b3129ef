"""Palimpsest as an MCP server: the memory as tools for agent hosts (official `mcp` SDK, v2).

The tools (`app.api.mcp_tools`) always go through the HTTP API's routes, by way of the Python SDK.
Two transports serve them:

- **Streamable HTTP, mounted in the API at `/mcp`** (`mount_mcp(app)`, which `create_app` calls).
  The same API keys: every MCP HTTP request must carry `Authorization: Bearer pal_...`; a missing or
  refused key is answered 401 before the MCP layer sees the request, and each tool call acts for the
  tenant of the key of the HTTP request that carried it (the SDK calls the API in-process through
  `httpx.ASGITransport` with that key). The server is *stateless* with JSON answers: any API
  replica can answer any MCP request, so no sticky sessions are needed behind a load balancer.
  Two servers run side by side: a key with the `admin` scope is served the one that has the
  destructive `forget` tool; every other key the one without it (it is not even listed).
- **stdio** (`run_stdio()`, the `palimpsest mcp` command): for agent hosts that start a local
  process. It reads `PALIMPSEST_URL` (default http://127.0.0.1:8000) and `PALIMPSEST_API_KEY`
  and talks to the HTTP API over the network through the SDK. stdout carries only the protocol.
  `forget` is offered only when that key has `admin` (asked of `GET /v1/status` at start).

The streamable HTTP session manager must run while the API runs: `mount_mcp` wraps the app's
lifespan to start it (a fresh one each time the lifespan starts) unless told not to, in which
case the app's own lifespan must enter `mcp_lifespan(app)`. This module never imports the app
(`app.api.main` imports it): the app is handed in.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from app.api.errors import error_body
from app.api.mcp_tools import build_server
from palimpsest.client import AsyncPalimpsest

if TYPE_CHECKING:
    from fastapi import FastAPI
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

MCP_PATH = "/mcp"
# A tool call's HTTP requests to the API in the same process: the host name is never resolved.
_INTERNAL_URL = "http://palimpsest-mcp.internal"


# ---------------------------------------------------------------- streamable HTTP, in the API


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and key.strip():
                return key.strip()
            return None
    return None


async def _json(send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    import json

    raw = json.dumps(body).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    hdrs += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": raw})


def _authenticate(key: str):  # -> Principal | None
    from app.storage import tenants
    from app.storage.db import get_engine

    with get_engine().connect() as conn:
        return tenants.authenticate(conn, key)


class MCPMount:
    """The ASGI endpoint at /mcp: checks the Bearer key, then hands the request to the MCP
    session manager of the current lifespan."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.manager: StreamableHTTPSessionManager | None = None  # the tools without `forget`
        self.admin_manager: StreamableHTTPSessionManager | None = None  # with it: keys with `admin`

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # pragma: no cover - routes only pass http here
            return
        if self.manager is None:
            await _json(send, 503, error_body(503, "the MCP server is not running"),
                        {"Retry-After": "2"})
            return
        key = _bearer(scope)
        if key is None:
            await _json(send, 401, error_body(401, "missing bearer API key"),
                        {"WWW-Authenticate": "Bearer"})
            return
        import anyio.to_thread
        from sqlalchemy.exc import SQLAlchemyError

        try:
            who = await anyio.to_thread.run_sync(_authenticate, key)
        except SQLAlchemyError:
            await _json(send, 503, error_body(503, "database unavailable; retry"),
                        {"Retry-After": "2"})
            return
        if who is None:
            await _json(send, 401, error_body(401, "invalid or revoked API key"),
                        {"WWW-Authenticate": "Bearer"})
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
        from starlette.authentication import AuthCredentials

        # The SDK reads `user` to tie what it keeps per caller to this key's principal.
        token = AccessToken(token=key, client_id=f"tenant-{who.tenant_id}/key-{who.key_id}", scopes=list(who.scopes))
        scope = {**scope, "user": AuthenticatedUser(token), "auth": AuthCredentials(list(who.scopes))}
        manager = self.admin_manager if "admin" in who.scopes and self.admin_manager is not None else self.manager
        await manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def client_for(self, ctx: Context) -> AsyncIterator[AsyncPalimpsest]:
        """An SDK client that calls this app in-process with the key of the request behind `ctx`."""
        import httpx

        request = ctx.request_context.request
        user = request.scope.get("user") if request is not None else None
        token = getattr(user, "access_token", None)
        if token is None:  # every request passed __call__, which sets it; never trust anything else
            raise ToolError("no authenticated API key on this request")
        headers = {}
        rid = request.headers.get("x-request-id") if request is not None else None
        if rid:
            headers["X-Request-ID"] = rid
        async with AsyncPalimpsest(_INTERNAL_URL, token.token, headers=headers, max_retries=1, timeout=60.0,
                                   transport=httpx.ASGITransport(app=self.app)) as pal:
            yield pal

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run fresh MCP servers and session managers (without and with `forget`) for as long as the app runs."""
        from mcp.server.transport_security import TransportSecuritySettings

        managers = []
        for forget in (False, True):
            server = build_server(self.client_for, forget=forget)
            # Stateless + JSON: every request stands alone, so any replica can answer it. DNS-rebinding
            # checks are off: access needs a Bearer key, which a rebinding page cannot have, and Host
            # is the service's name inside a cluster.
            server.streamable_http_app(
                streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            managers.append(server.session_manager)
        async with managers[0].run(), managers[1].run():
            self.manager, self.admin_manager = managers
            try:
                yield
            finally:
                self.manager = self.admin_manager = None


def mount_mcp(app: FastAPI, *, path: str = MCP_PATH, manage_lifespan: bool = True) -> None:
    """Serve the MCP tools at `path` (streamable HTTP) in `app`, behind the app's API keys.

    With `manage_lifespan` (the default) the app's lifespan is wrapped so that the MCP session
    manager starts after the app's own startup and stops before its shutdown. Otherwise the app's
    lifespan must do `async with mcp_lifespan(app): yield`. Calling it twice changes nothing.
    """
    from starlette.routing import Route

    if getattr(app.state, "mcp", None) is not None:
        return
    mount = MCPMount(app)
    app.state.mcp = mount
    base = path.rstrip("/")
    app.router.routes.append(Route(base, endpoint=mount, name="mcp"))
    app.router.routes.append(Route(base + "/", endpoint=mount, name="mcp-slash"))
    if manage_lifespan:
        inner = app.router.lifespan_context

        @asynccontextmanager
        async def lifespan(a: Any) -> AsyncIterator[Any]:
            async with inner(a) as state:
                async with mount.lifespan():
                    yield state

        app.router.lifespan_context = lifespan


def mcp_lifespan(app: FastAPI) -> AbstractAsyncContextManager[None]:
    """The MCP part of the app's lifespan, for apps mounted with `manage_lifespan=False`."""
    return app.state.mcp.lifespan()


def has_mcp(app: FastAPI) -> bool:
    return getattr(app.state, "mcp", None) is not None


# ---------------------------------------------------------------- stdio


async def _serve_stdio(url: str, key: str) -> None:
    async with AsyncPalimpsest(url, key) as pal:

        @asynccontextmanager
        async def client_for(_ctx: Context) -> AsyncIterator[AsyncPalimpsest]:
            yield pal

        await build_server(client_for, forget=await _key_is_admin(pal)).run_stdio_async()


async def _key_is_admin(pal: AsyncPalimpsest) -> bool:
    """Whether the key has the `admin` scope (`forget` is offered only then); False when the API
    cannot say (an older server, or it is down: the tool stays off)."""
    from palimpsest.client import errors

    try:
        return "admin" in (await pal.service_status()).get("scopes", [])
    except errors.PalimpsestError:
        return False


def run_stdio() -> None:
    """Serve the tools over stdio (`palimpsest mcp`), on the API at PALIMPSEST_URL with PALIMPSEST_API_KEY."""
    import anyio

    url = os.environ.get("PALIMPSEST_URL") or "http://127.0.0.1:8000"
    key = os.environ.get("PALIMPSEST_API_KEY")
    if not key:
        print("palimpsest mcp: set PALIMPSEST_API_KEY (and PALIMPSEST_URL, default http://127.0.0.1:8000)",
              file=sys.stderr)
        raise SystemExit(2)
    # stdout is the protocol channel: logs go to stderr, and the per-request ones are kept quiet.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    anyio.run(_serve_stdio, url, key)


if __name__ == "__main__":
    run_stdio()
