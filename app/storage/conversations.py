"""SQL for listing and searching a tenant's conversations, page by page.

A conversation is listed when at least one of its events passes every filter given (speakers, time
range, metadata `where`, words of a full-text search, an id prefix); its counts and times are those
of the events that pass (all of its events when no filter is given). Most recently active first;
keyset-paged on (last event time, conversation id), so a page is as cheap deep in the list as at
its head.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from app.storage.candidates import SEARCH_CONFIG_SQL, Scope, filter_clauses


@dataclass(frozen=True)
class ConversationRow:
    conversation_id: str
    events: int
    first_at: datetime
    last_at: datetime


_LIST_SQL = """
SELECT e.conversation_id, count(*), min(e.occurred_at), max(e.occurred_at)
FROM events e
WHERE {where}
GROUP BY e.conversation_id
{having}
ORDER BY max(e.occurred_at) DESC, e.conversation_id
LIMIT :limit
"""
# after the cursor's (last_at, conversation_id): older, or as old and later in name order
_AFTER = ("HAVING max(e.occurred_at) < :after_at "
          "OR (max(e.occurred_at) = :after_at AND e.conversation_id > :after_conv)")


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_conversations(conn: Connection, scope: Scope, limit: int, *, search: str | None = None,
                       prefix: str | None = None, after: tuple[datetime, str] | None = None) -> list[ConversationRow]:
    """Up to `limit` of the tenant's conversations with an event in `scope` (its speakers, time range
    and metadata filter; `scope.conversation_id` is ignored), whose id starts with `prefix` and
    (with `search`) that say the words of `search` (full text, as the query's lexical search reads
    them), after the cursor `after`."""
    clauses = ["e.tenant_id = :tenant_id"]
    params: dict[str, Any] = {"tenant_id": scope.tenant_id, "limit": limit}
    more, extra = filter_clauses(scope)
    clauses += more
    params |= extra
    if prefix:
        clauses.append("e.conversation_id LIKE :prefix ESCAPE '\\'")
        params["prefix"] = _like_prefix(prefix)
    if search:  # read in the tenant's language, as a tenant-wide question is
        clauses.append(f"e.search_tsv @@ websearch_to_tsquery({SEARCH_CONFIG_SQL}, :search)")
        params.update(search=search, t=scope.tenant_id, c=None)
    having = ""
    if after is not None:
        having = _AFTER
        params["after_at"], params["after_conv"] = after
    sql = _LIST_SQL.format(where=" AND ".join(clauses), having=having)
    return [ConversationRow(r[0], int(r[1]), r[2], r[3]) for r in conn.execute(text(sql), params)]
