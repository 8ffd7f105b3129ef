"""Metadata filters (`where`): an event matches when its metadata *contains* the filter, in
PostgreSQL's `jsonb @>` sense, so the database (GIN index, migration 0007) and the in-memory checks
of the read path agree on every event.

- an object matches when each of its keys is present with a matching value (other keys may exist);
- an array matches when each of its elements matches some element of the event's array
  (`{"tags": ["travel"]}` matches `{"tags": ["travel", "family"]}`);
- a string, number, boolean or null matches only the equal value of the same JSON type
  (`1` matches `1.0`, never `true` or `"1"`).
"""
from __future__ import annotations

import json
from typing import Any


def where_json(where: dict[str, Any] | None) -> str | None:
    """The filter as canonical JSON text (sorted keys): the SQL parameter, and a stable cache key.
    None or an empty object: no filter."""
    if not where:
        return None
    return json.dumps(where, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def contains(doc: Any, pattern: Any) -> bool:
    """Whether JSON value `doc` contains `pattern` (jsonb `@>`, below the top level)."""
    if isinstance(pattern, dict):
        return isinstance(doc, dict) and all(k in doc and contains(doc[k], v) for k, v in pattern.items())
    if isinstance(pattern, list):
        return isinstance(doc, list) and all(any(contains(d, p) for d in doc) for p in pattern)
    if isinstance(pattern, bool) or pattern is None or isinstance(pattern, str):
        return type(doc) is type(pattern) and doc == pattern
    if isinstance(pattern, (int, float)):
        return isinstance(doc, (int, float)) and not isinstance(doc, bool) and doc == pattern
    return False


def metadata_matches(metadata: dict[str, Any] | None, where: str | None) -> bool:
    """Whether an event's metadata passes the filter (`where`: `where_json`'s text; None passes all)."""
    if where is None:
        return True
    return contains(metadata or {}, json.loads(where))
