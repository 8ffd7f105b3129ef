"""Forgetting: a conversation or a speaker, and everything derived from their words.

Per-event derived rows (vectors, outbox rows, signals) go with their events by cascade. The
conversation-level rows (episodes, assertions, profiles, graph, runs) are deleted explicitly. When
only some of a conversation's events go (a forgotten speaker), what could still quote them is
dropped and the remaining events are made pending for the layers the registry names
(`REBUILT_AFTER_FORGET`), so the workers rebuild those layers without the deleted events.
"""
from __future__ import annotations

from typing import Sequence

from sqlalchemy import Connection

from app.domain.layer_registry import REBUILT_AFTER_FORGET
from app.storage import events as event_store
from app.storage import layer_runs, outbox, signals


def forget_conversation(conn: Connection, tenant_id: int, conversation_id: str) -> int:
    """Delete a conversation's events and every row derived from them; returns how many events."""
    n = event_store.delete_conversation(conn, tenant_id, conversation_id)
    layer_runs.delete_conversation_rows(conn, tenant_id, [conversation_id])
    return n


def forget_speaker(conn: Connection, tenant_id: int, speaker: str) -> tuple[int, list[str]]:
    """Delete every event a speaker wrote, in every conversation of the tenant, and what was derived
    from them. Returns the count and the conversations touched (rebuilt by the workers)."""
    n, touched = event_store.delete_speaker(conn, tenant_id, speaker)
    forget_derived(conn, tenant_id, touched)
    return n, touched


def forget_derived(conn: Connection, tenant_id: int, conversation_ids: Sequence[str],
                   layers: Sequence[str] = REBUILT_AFTER_FORGET) -> None:
    """After some of the conversations' events were deleted: drop every conversation-level row that
    could hold their words (summaries, profiles, graph labels, assertions), clear the text-bearing
    per-event signals, and make the remaining events pending for `layers` so they rebuild."""
    convs = list(conversation_ids)
    if not convs:
        return
    layer_runs.delete_conversation_rows(conn, tenant_id, convs)
    signals.clear_derived_text(conn, tenant_id, convs)
    outbox.mark_conversations_pending(conn, tenant_id, convs, layers)
