"""Palimpsest as an MCP server: the memory as tools for agent hosts (official `mcp` SDK, v2).

Tools: `remember` (write an event), `recall` (evidence and a budgeted context for a question),
`timeline` (a conversation's events in time order, paged) and `forget` (delete a conversation).

Two transports, one set of tools. The tools always go through the HTTP API's routes, by way of
the Python SDK (`palimpsest.client.AsyncPalimpsest`), so validation, auth, scopes, idempotent
event ids and the enqueueing of background work are exactly those of the API:

- **Streamable HTTP, mounted in the API at `/mcp`** (`mount_mcp(app)`). The same API keys:
  every MCP HTTP request must carry `Authorization: Bearer pal_...`; a missing or refused key is
  answered 401 before the MCP layer sees the request, and each tool call acts for the tenant of
  the key of the HTTP request that carried it (the SDK calls the API in-process through
  `httpx.ASGITransport` with that key). The server is *stateless* with JSON answers: any API
  replica can answer any MCP request, so no sticky sessions are needed behind a load balancer.
- **stdio** (`run_stdio()`, the `palimpsest mcp` command): for agent hosts that start a local
  process. It reads `PALIMPSEST_URL` (default http://127.0.0.1:8000) and `PALIMPSEST_API_KEY`
  and talks to the HTTP API over the network through the SDK. stdout carries only the protocol.

The streamable HTTP session manager must run while the API runs: `mount_mcp` wraps the app's
lifespan to start it (a fresh one each time the lifespan starts) unless told not to, in which
case the app's own lifespan must enter `mcp_lifespan(app)`.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from palimpsest.client import AsyncPalimpsest, errors

if TYPE_CHECKING:
    from fastapi import FastAPI
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
SERVER_NAME = "palimpsest"
INSTRUCTIONS = (
    "Palimpsest is a long-term memory. `remember` stores what was said, verbatim, in a "
    "conversation (give the speaker and, if known, when it was said). `recall` answers a question "
    "with the stored evidence: a dated, time-ordered `context` to read, plus the ranked items. "
    "`timeline` lists a conversation's events in order. `forget` deletes a whole conversation."
)
# A tool call's HTTP requests to the API in the same process: the host name is never resolved.
_INTERNAL_URL = "http://palimpsest-mcp.internal"

ClientFor = Callable[[Context], AbstractAsyncContextManager[AsyncPalimpsest]]


# ---------------------------------------------------------------- tool results


class Remembered(BaseModel):
    conversation_id: str
    id: int = Field(description="The server's id of the event (for GET /v1/events/{id}).")
    event_id: str | None = Field(description="The client id; given, or derived from the event's content.")
    status: str = Field(description="created, or duplicate (this exact event was already stored)")


class Signal(BaseModel):
    rank: int
    score: float


class Evidence(BaseModel):
    id: int
    event_id: str | None
    conversation_id: str
    speaker: str
    content: str
    occurred_at: datetime
    score: float = Field(description="Fused score: higher is better.")
    signals: dict[str, Signal] = Field(description="Per retrieval signal that found it: its rank and raw score.")
    in_context: bool = Field(description="Whether it is part of `context`.")


class Recalled(BaseModel):
    context: str = Field(description="The evidence to read: dated, in time order, inside the token budget.")
    context_tokens: int
    items: list[Evidence] = Field(description="The evidence, best first.")


class TimelineEvent(BaseModel):
    id: int
    event_id: str | None
    speaker: str
    role: str | None = None
    recipient: str | None = None
    content: str
    occurred_at: datetime


class Timeline(BaseModel):
    conversation_id: str
    events: list[TimelineEvent]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next events; null at the end.")


class Forgotten(BaseModel):
    conversation_id: str
    detail: dict[str, Any] = Field(default_factory=dict, description="What the server reported (counts).")


# ---------------------------------------------------------------- the tools


def _tool_error(exc: errors.PalimpsestError, what: str) -> ToolError:
    """An SDK error as a message the model can act on."""
    if isinstance(exc, errors.ValidationError):
        fields = "; ".join(f"{e.field}: {e.message}" for e in exc.errors) or exc.message
        return ToolError(f"{what}: invalid arguments ({fields})")
    if isinstance(exc, errors.PermissionDenied):
        return ToolError(f"{what}: this API key lacks the scope for it ({exc.message})")
    if isinstance(exc, errors.AuthError):
        return ToolError(f"{what}: the API key was refused ({exc.message})")
    if isinstance(exc, errors.APIConnectionError):
        return ToolError(f"{what}: the Palimpsest API cannot be reached ({exc.message})")
    return ToolError(f"{what}: {exc.message}")


def _forget_unsupported(exc: errors.PalimpsestError) -> bool:
    """Whether the API has no DELETE /v1/conversations/{id} at all (as opposed to an unknown id)."""
    if exc.status_code == 405:
        return True
    # FastAPI's answer for a path no route matches is exactly {"detail": "Not Found"}.
    return exc.status_code == 404 and isinstance(exc.body, dict) and exc.body.get("detail") == "Not Found"


def build_server(client_for: ClientFor) -> MCPServer:
    """The MCP server with Palimpsest's tools; `client_for(ctx)` yields the SDK client a call uses."""
    server: MCPServer = MCPServer(SERVER_NAME, title="Palimpsest memory", instructions=INSTRUCTIONS,
                                  version="0.1.0")

    @server.tool(
        annotations=ToolAnnotations(title="Remember", read_only_hint=False, destructive_hint=False,
                                    idempotent_hint=True, open_world_hint=False),
    )
    async def remember(
        ctx: Context,
        content: Annotated[str, Field(description="What was said or observed, verbatim.")],
        conversation_id: Annotated[str, Field(description="The conversation (or agent/user memory) it belongs to.")],
        speaker: Annotated[str, Field(description="Who said it, e.g. a person's name, 'user' or 'assistant'.")] = "user",
        occurred_at: Annotated[datetime | None, Field(description="When it was said (ISO 8601); default: now.")] = None,
        event_id: Annotated[str | None, Field(description="Your id for it; a repeat with the same id stores nothing.")] = None,
        role: Annotated[str | None, Field(description="Chat role, e.g. user or assistant.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Any JSON object kept with the event.")] = None,
    ) -> Remembered:
        """Store one event in long-term memory, verbatim. Stored events are never rewritten; they
        become searchable by `recall` within seconds (the meaning index is built in the background)."""
        async with client_for(ctx) as pal:
            try:
                r = await pal.add_event(conversation_id, speaker, content, occurred_at=occurred_at,
                                        event_id=event_id, role=role, metadata=metadata)
            except errors.PalimpsestError as exc:
                raise _tool_error(exc, "remember failed") from None
        return Remembered(conversation_id=conversation_id, id=r.id, event_id=r.event_id, status=r.status)

    @server.tool(annotations=ToolAnnotations(title="Recall", read_only_hint=True, open_world_hint=False))
    async def recall(
        ctx: Context,
        query: Annotated[str, Field(description="The question, in natural language.")],
        conversation_id: Annotated[str | None, Field(description="Search only this conversation; default: all.")] = None,
        top_k: Annotated[int | None, Field(description="How many evidence items to return (server default 10).", ge=1, le=200)] = None,
        token_budget: Annotated[int | None, Field(description="Token budget of `context` (server default 2000).", ge=1)] = None,
        speakers: Annotated[list[str] | None, Field(description="Only events by these speakers.")] = None,
        start: Annotated[datetime | None, Field(description="Only events at or after this time (ISO 8601).")] = None,
        end: Annotated[datetime | None, Field(description="Only events at or before this time (ISO 8601).")] = None,
    ) -> Recalled:
        """Find what memory holds about a question: the evidence (verbatim events, best first, with
        each retrieval signal's rank and score) and `context`, the evidence to read in time order."""
        time_range = {"start": start, "end": end} if (start or end) else None
        async with client_for(ctx) as pal:
            try:
                out = await pal.query(query, conversation_id=conversation_id, top_k=top_k, token_budget=token_budget,
                                      speakers=speakers, time_range=time_range)
            except errors.PalimpsestError as exc:
                raise _tool_error(exc, "recall failed") from None
        return Recalled(
            context=out.context,
            context_tokens=out.context_tokens,
            items=[
                Evidence(id=it.id, event_id=it.event_id, conversation_id=it.conversation_id, speaker=it.speaker,
                         content=it.content, occurred_at=it.occurred_at, score=it.score,
                         signals={k: Signal(rank=v.rank, score=v.score) for k, v in it.signals.items()},
                         in_context=it.in_context)
                for it in out.items
            ],
        )

    @server.tool(annotations=ToolAnnotations(title="Timeline", read_only_hint=True, open_world_hint=False))
    async def timeline(
        ctx: Context,
        conversation_id: Annotated[str, Field(description="The conversation to list.")],
        limit: Annotated[int, Field(description="How many events (1-1000).", ge=1, le=1000)] = 50,
        cursor: Annotated[str | None, Field(description="`next_cursor` of the previous call, to go on.")] = None,
    ) -> Timeline:
        """A conversation's events exactly as stored, oldest first, `limit` at a time."""
        async with client_for(ctx) as pal:
            try:
                page = await pal.list_events(conversation_id, limit=limit, cursor=cursor)
            except errors.PalimpsestError as exc:
                raise _tool_error(exc, "timeline failed") from None
        return Timeline(
            conversation_id=conversation_id,
            events=[TimelineEvent(id=e.id, event_id=e.event_id, speaker=e.speaker, role=e.role, recipient=e.recipient,
                                  content=e.content, occurred_at=e.occurred_at) for e in page.events],
            next_cursor=page.next_cursor,
        )

    @server.tool(
        annotations=ToolAnnotations(title="Forget", read_only_hint=False, destructive_hint=True,
                                    idempotent_hint=True, open_world_hint=False),
    )
    async def forget(
        ctx: Context,
        conversation_id: Annotated[str, Field(description="The conversation to delete, with all its events.")],
    ) -> Forgotten:
        """Delete a whole conversation from memory: its events and everything derived from them.
        This cannot be undone."""
        async with client_for(ctx) as pal:
            try:
                res = await pal.delete_conversation(conversation_id)
            except errors.PalimpsestError as exc:
                if _forget_unsupported(exc):
                    raise ToolError(
                        "forget is not available: this Palimpsest server does not offer "
                        f"DELETE /v1/conversations/{{id}} (it answered {exc.status_code}); nothing was deleted"
                    ) from None
                raise _tool_error(exc, "forget failed") from None
        detail = {k: v for k, v in (res.model_extra or {}).items()}
        return Forgotten(conversation_id=conversation_id, detail=detail)

    return server


# ---------------------------------------------------------------- streamable HTTP, in the API


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and key.strip():
                return key.strip()
            return None
    return None


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return value.decode("latin-1")
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
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # pragma: no cover - routes only pass http here
            return
        if self.manager is None:
            await _json(send, 503, {"error": "unavailable", "detail": "the MCP server is not running"},
                        {"Retry-After": "2"})
            return
        key = _bearer(scope)
        if key is None:
            await _json(send, 401, {"error": "unauthorized", "detail": "missing bearer API key"},
                        {"WWW-Authenticate": "Bearer"})
            return
        import anyio.to_thread
        from sqlalchemy.exc import SQLAlchemyError

        try:
            who = await anyio.to_thread.run_sync(_authenticate, key)
        except SQLAlchemyError:
            await _json(send, 503, {"error": "unavailable", "detail": "database unavailable; retry"},
                        {"Retry-After": "2"})
            return
        if who is None:
            await _json(send, 401, {"error": "unauthorized", "detail": "invalid or revoked API key"},
                        {"WWW-Authenticate": "Bearer"})
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
        from starlette.authentication import AuthCredentials

        # The SDK reads `user` to tie what it keeps per caller to this key's principal.
        token = AccessToken(token=key, client_id=f"tenant-{who.tenant_id}/key-{who.key_id}", scopes=list(who.scopes))
        scope = {**scope, "user": AuthenticatedUser(token), "auth": AuthCredentials(list(who.scopes))}
        await self.manager.handle_request(scope, receive, send)

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
        """Run a fresh MCP server and session manager for as long as the app runs."""
        from mcp.server.transport_security import TransportSecuritySettings

        server = build_server(self.client_for)
        # Stateless + JSON: every request stands alone, so any replica can answer it. DNS-rebinding
        # checks are off: access needs a Bearer key, which a rebinding page cannot have, and Host
        # is the service's name inside a cluster.
        server.streamable_http_app(
            streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = server.session_manager
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None


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


def create_app_with_mcp() -> FastAPI:
    """The API app with /mcp mounted (an app factory: `uvicorn --factory app.api.mcp:create_app_with_mcp`)."""
    from app.api.main import create_app

    app = create_app()
    mount_mcp(app)  # a no-op once create_app mounts it itself
    return app


# ---------------------------------------------------------------- stdio


async def _serve_stdio(url: str, key: str) -> None:
    async with AsyncPalimpsest(url, key) as pal:

        @asynccontextmanager
        async def client_for(_ctx: Context) -> AsyncIterator[AsyncPalimpsest]:
            yield pal

        await build_server(client_for).run_stdio_async()


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
