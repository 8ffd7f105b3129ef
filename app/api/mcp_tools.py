"""Palimpsest's MCP tools: `remember` (write an event), `recall` (evidence and a budgeted context
for a question), `timeline` (a conversation's events in time order, paged) and `forget` (delete a
conversation), which is only offered to a key with the `admin` scope (`build_server(forget=...)`):
an agent's read/write key never sees it, and the API refuses erasure without `admin` anyway.

The tools are defined once, over an SDK client (`palimpsest.client.AsyncPalimpsest`) that
`build_server(client_for)` asks for per call, so they always go through the HTTP API's routes:
validation, auth, scopes, idempotent event ids and the enqueueing of background work are exactly
those of the API. The transports that serve them (streamable HTTP in the API, stdio) are in
`app.api.mcp`.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from palimpsest.client import AsyncPalimpsest, errors

SERVER_NAME = "palimpsest"
INSTRUCTIONS = (
    "Palimpsest is a long-term memory. `remember` stores what was said, verbatim, in a "
    "conversation (give the speaker and, if known, when it was said). `recall` answers a question "
    "with the stored evidence: a dated, time-ordered `context` to read, plus the ranked items. "
    "`timeline` lists a conversation's events in order."
)
FORGET_INSTRUCTIONS = " `forget` deletes a whole conversation (try `dry_run` first: it only counts)."

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
    score: float = Field(description="Ranking score: higher is better.")
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


def build_server(client_for: ClientFor, *, forget: bool = False) -> MCPServer:
    """The MCP server with Palimpsest's tools; `client_for(ctx)` yields the SDK client a call uses.
    `forget` (for keys with the `admin` scope only) adds the destructive tool."""
    server: MCPServer = MCPServer(SERVER_NAME, title="Palimpsest memory", version="0.1.0",
                                  instructions=INSTRUCTIONS + (FORGET_INSTRUCTIONS if forget else ""))

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
        supersedes: Annotated[str | None, Field(
            description="To correct an earlier event: its event_id (same conversation). The old version is kept "
                        "and linked; recall then finds this one.")] = None,
    ) -> Remembered:
        """Store one event in long-term memory, verbatim. Stored events are never rewritten (a
        correction is a new version naming the event it `supersedes`); they become searchable by
        `recall` within seconds (the meaning index is built in the background)."""
        async with client_for(ctx) as pal:
            try:
                r = await pal.add_event(conversation_id, speaker, content, occurred_at=occurred_at,
                                        event_id=event_id, role=role, metadata=metadata, supersedes=supersedes)
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
        as_of: Annotated[datetime | None, Field(description="When the question is asked (ISO 8601): relative dates "
                                                "in it are read from here; default: the newest event.")] = None,
        where: Annotated[dict[str, Any] | None, Field(description="Only events whose metadata contains this JSON "
                                                      "object, e.g. {\"user\": \"u-42\"}.")] = None,
    ) -> Recalled:
        """Find what memory holds about a question: the evidence (verbatim events, best first, with
        each retrieval signal's rank and score) and `context`, the evidence to read in time order."""
        time_range = {"start": start, "end": end} if (start or end) else None
        async with client_for(ctx) as pal:
            try:
                out = await pal.query(query, conversation_id=conversation_id, top_k=top_k, token_budget=token_budget,
                                      speakers=speakers, time_range=time_range, as_of=as_of, where=where)
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

    if not forget:
        return server

    @server.tool(
        annotations=ToolAnnotations(title="Forget", read_only_hint=False, destructive_hint=True,
                                    idempotent_hint=True, open_world_hint=False),
    )
    async def forget(
        ctx: Context,
        conversation_id: Annotated[str, Field(description="The conversation to delete, with all its events.")],
        dry_run: Annotated[bool, Field(description="Only count what would be deleted (per table); delete nothing.")]
        = False,
    ) -> Forgotten:
        """Delete a whole conversation from memory: its events and everything derived from them.
        This cannot be undone; the erasure is recorded in the audit log. `dry_run` only counts."""
        async with client_for(ctx) as pal:
            try:
                res = await pal.delete_conversation(conversation_id, dry_run=dry_run)
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

