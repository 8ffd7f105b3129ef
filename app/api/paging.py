"""Cursor paging for the list endpoints: opaque cursors, bound to the listing they came from.

A cursor is `base64url(JSON position) . check`, where the check is a keyed digest of the position
together with the tenant, the endpoint and the listing's filters. A cursor therefore only continues
the listing that issued it: edited, truncated, or replayed by another tenant, on another
conversation, or with other filters, it is refused (422 naming the `cursor` parameter) instead of
silently paging somewhere else. (Every read is scoped to the caller's tenant in SQL anyway; the
check is what turns a mistake into a clear error.)

The position itself is the last row handed out (keyset paging: `(occurred_at, id)`, `(last_at,
conversation_id)`, an episode index ...), so a page is one index range scan whatever its depth.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from fastapi import HTTPException, Query
from pydantic import BaseModel, Field

# Limits every list endpoint shares (they appear in the OpenAPI schema of each `limit`/`cursor`).
MAX_PAGE = 1000
CURSOR_MAX_CHARS = 2048
CURSOR_PATTERN = r"^[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+$"
_CHECK_BYTES = 12
_KEY = b"palimpsest/cursor/v1"


def cursor_query(description: str = "Opaque: `next_cursor` of the previous page. Omit for the first page.") -> Any:
    return Query(None, min_length=3, max_length=CURSOR_MAX_CHARS, pattern=CURSOR_PATTERN, description=description)


def limit_query(default: int, maximum: int = MAX_PAGE, what: str = "items") -> Any:
    return Query(default, ge=1, le=maximum, description=f"At most this many {what} per page ({maximum} at most).")


class PageInfo(BaseModel):
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` for the next page; null at the end.")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _check(tenant_id: int, listing: str, bound: Any, body: bytes) -> bytes:
    scope = json.dumps([tenant_id, listing, bound], sort_keys=True, separators=(",", ":"), default=str).encode()
    return hmac.new(_KEY, scope + b"\n" + body, hashlib.sha256).digest()[:_CHECK_BYTES]


def encode(tenant_id: int, listing: str, bound: Any, position: Any) -> str:
    """A cursor for `position` (any JSON value) of `listing` (the endpoint) under `bound` (the
    filters and path parameters the next page must repeat)."""
    body = json.dumps(position, separators=(",", ":"), default=str).encode()
    return f"{_b64(body)}.{_b64(_check(tenant_id, listing, bound, body))}"


def invalid(message: str, field: str = "cursor") -> HTTPException:
    return HTTPException(422, detail=[{"field": field, "message": message, "type": "cursor_invalid"}])


def decode(cursor: str | None, tenant_id: int, listing: str, bound: Any) -> Any:
    """The position a cursor of this listing holds (None without a cursor); 422 naming `cursor` when
    it is malformed, edited, or from another listing, tenant or set of filters."""
    if cursor is None:
        return None
    try:
        head, _, tail = cursor.partition(".")
        body, check = _unb64(head), _unb64(tail)
    except (ValueError, TypeError):
        raise invalid("malformed cursor: pass back `next_cursor` exactly as it was given") from None
    if not hmac.compare_digest(check, _check(tenant_id, listing, bound, body)):
        raise invalid("this cursor was altered, or belongs to another listing (other filters, conversation "
                      "or endpoint): pass back `next_cursor` exactly as it was given, with the same filters")
    try:
        return json.loads(body)
    except ValueError:
        raise invalid("malformed cursor") from None
