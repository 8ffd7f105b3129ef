"""The event, declared once: what was said, by whom, in which conversation, and when.

`Event` is an event as it enters the log (the body of `POST /v1/events`, a line of an import, what
the writer stores); `StoredEvent` is the same event as the log holds it, with the server's id and
the time it was ingested. The API's request and response models and the SDK's models inherit these
fields rather than restating them; the API adds its size limits (settings `max_*`) on top.

`turn_text` is the one place an event becomes a line of dialogue, "Speaker: content": the text the
embedder encodes, the reranker reads and an episode summary quotes.

This module imports nothing but pydantic and the standard library: the SDK ships it.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class Event(BaseModel):
    """One event to write, verbatim. `event_id` makes a retry idempotent; `occurred_at` defaults to now."""

    conversation_id: str = Field(examples=["conv-1"])
    event_id: str | None = Field(
        default=None, description="Client id, unique per conversation; a retry with the same id creates nothing.",
        examples=["D1:3"],
    )
    speaker: str = Field(examples=["Ana"])
    recipient: str | None = Field(default=None, examples=["Ben"])
    role: str | None = Field(default=None, examples=["user"])
    content: str = Field(description="Stored exactly as received.",
                         examples=["We moved to Denver last spring."])
    occurred_at: datetime | None = Field(default=None, description="Event time (ISO 8601); default: now.",
                                         examples=["2023-05-08T13:56:00Z"])
    metadata: dict[str, Any] | None = Field(default=None, description="Any JSON object, kept with the event.",
                                            examples=[{"session": 1}])


class StoredEvent(Event):
    """An event exactly as the log holds it: its server id, its time (given or the time of the
    write), when it was ingested, and its metadata (an empty object when none was given)."""

    id: int
    occurred_at: datetime
    ingested_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)


def turn_text(speaker: str | None, content: str) -> str:
    """An event as one line of dialogue, "Speaker: content" (the content alone when no one is named).
    The speaker's name is part of what a question asks about ("what did Ana say about ...")."""
    return f"{speaker}: {content}" if speaker else content


# What a retry must say the same way as the stored event. `occurred_at` and `metadata` count only
# when the retry gives them: when it leaves them out, the server filled them in (now, {}).
COMPARED = ("speaker", "content", "role", "recipient")


def changed_fields(retry: Event, stored: Any) -> list[str]:
    """The fields in which a retry (same conversation and `event_id`) differs from the event already
    written (`stored`: anything with the Event's fields): a changed retry is a conflict, never silently taken as a duplicate."""
    out = [name for name in COMPARED if getattr(retry, name) != getattr(stored, name)]
    if retry.occurred_at is not None and stored.occurred_at is not None and retry.occurred_at != stored.occurred_at:
        out.append("occurred_at")
    if retry.metadata is not None and retry.metadata != (stored.metadata or {}):
        out.append("metadata")
    return out


def plan_batch(batch: list[Event]) -> tuple[list[int], dict[int, int]]:
    """Positions to write, and for repeated client ids within the batch, position -> first position.

    An `event_id` is unique per conversation, so the same one twice in a batch is written once.
    """
    first: dict[tuple[str, str], int] = {}
    to_write: list[int] = []
    repeats: dict[int, int] = {}
    for i, ev in enumerate(batch):
        if ev.event_id is None:
            to_write.append(i)
            continue
        key = (ev.conversation_id, ev.event_id)
        if key in first:
            repeats[i] = first[key]
        else:
            first[key] = i
            to_write.append(i)
    return to_write, repeats
