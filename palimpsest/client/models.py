"""Typed models of Palimpsest's HTTP API v1, as the client sees it.

They mirror `app/api/schemas.py`. `PipelineOptions` is derived from the server's own recipe
(`app.domain.recipe.Recipe`, shipped in the same distribution), so it has every field the server knows.
Response models accept fields they do not know (a newer server may add some) and keep them
(`model_extra`); request models are what the client sends.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.domain import event as domain
from app.domain.recipe import options_model


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


def utc(value: datetime) -> datetime:
    """`value` in UTC; a timestamp without an offset is taken as UTC (as the server does)."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


# ---------------------------------------------------------------- requests


class EventIn(_Request, domain.Event):
    """One event to write (the server's `app.domain.event.Event`). `event_id` and `occurred_at` are
    filled in by the client when left out (see `Palimpsest.write_events`), so a retried write never
    creates a second copy."""


class TimeRange(_Request):
    start: datetime | None = None
    end: datetime | None = None


class _Options(BaseModel):
    model_config = ConfigDict(extra="allow")


# The server's recipe, every field optional (unset = the server's setting); the server checks the bounds.
# Keys a newer server knows pass through unchanged (extra="allow"); the server validates them.
PipelineOptions = options_model(
    "PipelineOptions", base=_Options, bounds=False, module=__name__,
    doc="Per-request switches and weights for the retrieval stages (unset = the server's setting).",
)


class QueryIn(_Request):
    query: str
    conversation_id: str | None = None
    top_k: int | None = None
    token_budget: int | None = None
    speakers: list[str] | None = None
    time_range: TimeRange | None = None
    where: dict[str, Any] | None = None  # only events whose metadata contains this object (jsonb `@>`)
    as_of: datetime | None = None  # relative dates are read from here (default: the scope's newest event)
    pipeline: PipelineOptions | None = None


# ---------------------------------------------------------------- responses


class EventResult(_Response):
    id: int
    event_id: str | None
    status: str = Field(description="created, or duplicate (a retry; the existing row is returned)")

    @property
    def created(self) -> bool:
        return self.status == "created"


class WriteResult(_Response):
    """The answer to a write: one result per event, in the order they were sent."""

    results: list[EventResult]

    @property
    def ids(self) -> list[int]:
        return [r.id for r in self.results]

    @property
    def created(self) -> int:
        return sum(1 for r in self.results if r.status == "created")

    @property
    def duplicates(self) -> int:
        return sum(1 for r in self.results if r.status == "duplicate")


class Event(_Response, domain.StoredEvent):
    """An event exactly as stored (the server's `app.domain.event.StoredEvent`), with the encoding
    gate's verdict when the tenant's gate is on."""

    gate: dict[str, Any] | None = None


class EventPage(_Response):
    events: list[Event]
    next_cursor: str | None = None


class ConversationSummary(_Response):
    conversation_id: str
    events: int  # the events that passed the listing's filters (all of them without filters)
    first_at: datetime
    last_at: datetime


class ConversationPage(_Response):
    conversations: list[ConversationSummary]
    next_cursor: str | None = None


class ConversationStatus(_Response):
    conversation_id: str
    events: int
    pending: dict[str, int] = Field(default_factory=dict)

    @property
    def indexed(self) -> bool:
        """True when no background layer has work left for this conversation."""
        return all(n == 0 for n in self.pending.values())


class SignalEvidence(_Response):
    rank: int
    score: float


class QueryItem(_Response):
    id: int
    event_id: str | None
    conversation_id: str
    speaker: str
    content: str
    occurred_at: datetime
    score: float
    signals: dict[str, SignalEvidence] = Field(default_factory=dict)
    in_context: bool = False


class QueryResult(_Response):
    items: list[QueryItem]
    context: str
    context_tokens: int
    pipeline: dict[str, Any] = Field(default_factory=dict)
    context_items: list[dict[str, Any]] = Field(default_factory=list)  # {id, event_id, reason}
    context_summaries: list[dict[str, Any]] = Field(default_factory=list)
    left_out: int = 0
    intent: dict[str, Any] | None = None
    as_of: datetime | None = None  # the anchor relative dates were read from
    relevance: dict[str, float] = Field(default_factory=dict)
    abstain: bool = False


class AnswerResult(_Response):
    """`POST /v1/answer`: the LLM's answer and the context events it cited."""

    answer: str
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    context_items: list[dict[str, Any]] = Field(default_factory=list)
    context_tokens: int = 0
    compressed_from: int | None = None
    abstain: bool = False
    model: str | None = None


class DeleteResult(_Response):
    """The answer to `DELETE /v1/conversations/{id}` (whatever counts the server reports are kept)."""

    conversation_id: str | None = None


class FieldError(_Response):
    """One entry of a 422 answer: which field, what is wrong, and pydantic's error type."""

    field: str
    message: str
    type: str = ""
