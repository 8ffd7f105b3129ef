"""Erasure: a conversation, or a speaker's events, and everything derived from their words.

Destructive calls are deliberate (#18): the routes need the `admin` scope; a speaker is erased in
one conversation, or in all of them only when the caller says `all_conversations`; a dry run
answers what would go, per table, and deletes nothing; every erasure that deletes is recorded in
the audit log (who, when, what, counts; never the words).

Per-event derived rows (vectors, outbox rows, signals) go with their events by cascade. The
conversation-level rows (episodes, assertions, profiles, graph, runs) are deleted explicitly. When
only some of a conversation's events go (a forgotten speaker), what could still quote them is
dropped and the remaining events are made pending for the layers the registry names
(`REBUILT_AFTER_FORGET`), so the workers rebuild those layers without the deleted events.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from sqlalchemy import Connection

from app.domain.layer_registry import REBUILT_AFTER_FORGET
from app.storage import audit
from app.settings import get_settings
from app.storage import findable, layer_runs, outbox, signals
from app.storage.tenants import Principal


class ScopeRequired(ValueError):
    """A speaker erasure named neither a conversation nor `all_conversations`, or both."""


@dataclass(frozen=True)
class Erasure:
    action: str  # conversation | speaker
    conversation_id: str | None
    speaker: str | None
    all_conversations: bool
    dry_run: bool
    conversations: list[str] = field(default_factory=list)  # touched (speaker: rebuilt without them)
    counts: dict[str, int] = field(default_factory=dict)  # rows per table that go (would go)
    audit_id: int | None = None

    @property
    def events(self) -> int:
        return self.counts.get("events", 0)


def erase_conversation(conn: Connection, who: Principal, conversation_id: str, *, dry_run: bool = False,
                       request_id: str | None = None) -> Erasure | None:
    """Delete a conversation's events and every row derived from them (or, `dry_run`, count them).
    None when the tenant has no such conversation."""
    pks = audit.conversation_event_pks(conn, who.tenant_id, conversation_id)
    if not pks:
        return None
    counts = audit.counts(conn, who.tenant_id, pks, [conversation_id])
    result = Erasure("conversation", conversation_id, None, False, dry_run, [conversation_id], counts)
    if dry_run:
        return result
    audit.delete_events(conn, who.tenant_id, pks)
    layer_runs.delete_conversation_rows(conn, who.tenant_id, [conversation_id])
    return _recorded(conn, who, result, request_id)


def erase_speaker(conn: Connection, who: Principal, speaker: str, *, conversation_id: str | None = None,
                  all_conversations: bool = False, dry_run: bool = False,
                  request_id: str | None = None) -> Erasure | None:
    """Delete the events `speaker` wrote in one conversation, or in every conversation of the tenant
    with `all_conversations` (exactly one of the two), and what was derived from them; their
    conversations rebuild without them. None when the speaker wrote nothing there."""
    if (conversation_id is None) == (not all_conversations):
        raise ScopeRequired("name one conversation (conversation_id) or say all_conversations=true, not both")
    pks, convs = audit.speaker_event_pks(conn, who.tenant_id, speaker, conversation_id)
    if not pks:
        return None
    counts = audit.counts(conn, who.tenant_id, pks, convs)
    result = Erasure("speaker", conversation_id, speaker, all_conversations, dry_run, convs, counts)
    if dry_run:
        return result
    audit.delete_events(conn, who.tenant_id, pks)
    forget_derived(conn, who.tenant_id, convs)
    return _recorded(conn, who, result, request_id)


def _recorded(conn: Connection, who: Principal, result: Erasure, request_id: str | None) -> Erasure:
    audit_id = audit.record(conn, who.tenant_id, who.key_id, result.action, conversation_id=result.conversation_id,
                            speaker=result.speaker, all_conversations=result.all_conversations,
                            conversations=len(result.conversations), table_counts=result.counts,
                            request_id=request_id)
    return Erasure(result.action, result.conversation_id, result.speaker, result.all_conversations, False,
                   result.conversations, result.counts, audit_id)


def forget_derived(conn: Connection, tenant_id: int, conversation_ids: Sequence[str],
                   layers: Sequence[str] = REBUILT_AFTER_FORGET) -> None:
    """After some of the conversations' events were deleted (or their language changed): drop
    every conversation-level row that could hold their words (summaries, profiles, graph labels,
    assertions), clear the text-bearing per-event signals, and make the remaining events pending
    for `layers` so they rebuild."""
    convs = list(conversation_ids)
    if not convs:
        return
    layer_runs.delete_conversation_rows(conn, tenant_id, convs)
    signals.clear_derived_text(conn, tenant_id, convs)
    # a turn's findable text may quote the one before it, and is in the conversation's language
    findable.refresh(conn, tenant_id, convs, previous=get_settings().findable_previous)
    outbox.mark_conversations_pending(conn, tenant_id, convs, layers)
