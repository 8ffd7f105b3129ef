"""Versions of an event: which event a correction supersedes, and which correction superseded it.

A correction is a new event naming the `event_id` it `supersedes` (written by `app.services.ingest`);
the old version stays verbatim. Reads show both links by `event_id`.
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection

from app.storage import events as store


def links(conn: Connection, tenant_id: int, pks: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
    """event pk -> (the event_id it supersedes, the event_id of the version that superseded it);
    events that are no part of a correction are absent."""
    return store.version_links(conn, tenant_id, sorted(set(pks)))
