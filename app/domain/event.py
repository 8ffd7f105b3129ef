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

import hashlib
import json
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field


class Event(BaseModel):
    """One event to write, verbatim. `event_id` makes a retry idempotent (the server derives one when
    none is given: `derive_event_id`); `occurred_at` defaults to now."""

    conversation_id: str = Field(examples=["conv-1"])
    event_id: str | None = Field(
        default=None,
        description="Client id, unique per conversation; a retry with the same id creates nothing. Left out, the "
                    "server derives one from (conversation_id, speaker, occurred_at, content): `sdk1-` + 32 hex.",
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
    supersedes: str | None = Field(
        default=None,
        description="A correction: the `event_id` of the event (same conversation) this one replaces. The old "
                    "version is kept verbatim and linked (`superseded_by`); queries use the newest version.",
        examples=[None],
    )


class StoredEvent(Event):
    """An event exactly as the log holds it: its server id, its time (given or the time of the
    write), when it was ingested, and its metadata (an empty object when none was given)."""

    id: int
    occurred_at: datetime
    ingested_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    superseded_by: str | None = Field(default=None, description="The `event_id` of the correction that replaced "
                                                                "this version, if any (this one stays as it was).")


# The derived id's scheme (its version is the prefix): the SDK and the server derive the same id.
DERIVED_ID_PREFIX = "sdk1-"


def derive_event_id(conversation_id: str, speaker: str, occurred_at: datetime | None, content: str) -> str:
    """The `event_id` of an event written without one: a hash of (conversation_id, speaker,
    occurred_at in UTC to the microsecond, content), so the same event sent twice (a retry after a
    timeout, a re-run of an import, a re-posted example) gets the same id and the second is a
    `duplicate`. Events that differ in any of the four get different ids. Without an `occurred_at`
    the time is left out of the hash: the same words from the same speaker in the same conversation
    are then one event (give a time or an `event_id` to keep repeats apart; the SDK gives the time).
    128 bits of SHA-256 in hex, prefixed `sdk1-` (37 characters)."""
    stamp = None
    if occurred_at is not None:
        at = occurred_at.replace(tzinfo=timezone.utc) if occurred_at.tzinfo is None else occurred_at.astimezone(timezone.utc)
        stamp = at.isoformat(timespec="microseconds")
    payload = json.dumps([conversation_id, speaker, stamp, content], ensure_ascii=False, separators=(",", ":"))
    return DERIVED_ID_PREFIX + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def with_event_id(ev: Event) -> Event:
    """`ev` with its `event_id`: the given one, or the derived one."""
    if ev.event_id is not None:
        return ev
    return ev.model_copy(update={"event_id": derive_event_id(ev.conversation_id, ev.speaker, ev.occurred_at, ev.content)})


def turn_text(speaker: str | None, content: str) -> str:
    """An event as one line of dialogue, "Speaker: content" (the content alone when no one is named).
    The speaker's name is part of what a question asks about ("what did Ana say about ...")."""
    return f"{speaker}: {content}" if speaker else content


def embedding_text(content: str) -> str:
    """What an event's vector encodes: its words alone (migration 0012). A name in front of every
    turn pulls each of that speaker's turns toward any question naming them ("Where does Daniel live
    now?" found Daniel's "How are you finding it?" first); who spoke is a field and a ranker feature."""
    return content


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
    if retry.supersedes is not None and hasattr(stored, "supersedes") and retry.supersedes != stored.supersedes:
        out.append("supersedes")
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
