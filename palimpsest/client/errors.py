"""The client's exceptions. Every one is a `PalimpsestError`.

    PalimpsestError
    ├── APIConnectionError   the server could not be reached (after the retries)
    ├── AuthError            401: no key, a malformed or revoked key
    │   └── PermissionDenied 403: the key lacks the scope (read, write, admin)
    ├── NotFound             404
    ├── ValidationError      422: `.errors` lists (field, message, type); nothing was written
    ├── RateLimited          429 (after the retries)
    ├── ServerError          5xx (after the retries for 502/503/504)
    │   └── ServiceUnavailable 503
    └── IndexingTimeout      wait_until_indexed ran out of time (also a TimeoutError)
"""
from __future__ import annotations

from typing import Any

from palimpsest.client.models import ConversationStatus, FieldError


class PalimpsestError(Exception):
    """Base class. `status_code` and `body` are set when the server answered."""

    def __init__(self, message: str, *, status_code: int | None = None, body: Any = None,
                 request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body
        self.request_id = request_id


class APIConnectionError(PalimpsestError):
    """No answer: connection refused or reset, DNS failure, timeout (after every retry)."""


class AuthError(PalimpsestError):
    """401: the API key is missing, malformed or revoked (403 is the `PermissionDenied` subclass)."""


class PermissionDenied(AuthError):
    """403: the key is valid but lacks the scope this call needs."""


class NotFound(PalimpsestError):
    """404: no such event, conversation (or route) for this tenant."""


class ValidationError(PalimpsestError):
    """422: the request was refused and nothing was written. `errors` names each bad field,
    e.g. `events[3].content`, as the server reported it."""

    def __init__(self, message: str, *, errors: list[FieldError], **kw: Any) -> None:
        super().__init__(message, **kw)
        self.errors = errors

    @property
    def fields(self) -> list[str]:
        return [e.field for e in self.errors]


class Conflict(ValidationError):
    """409: an `event_id` already holds a different event (a changed retry), or a correction names
    an event that was corrected already; nothing in the batch was written. `errors` names each
    field that differs, e.g. `events.1.content` (or `events.1.supersedes`)."""


class RateLimited(PalimpsestError):
    """429 after the client's retries."""


class ServerError(PalimpsestError):
    """5xx: the server failed (after the retries for 502, 503 and 504)."""


class ServiceUnavailable(ServerError):
    """503 after the retries: database or broker unavailable, or the server is shedding load."""


class IndexingTimeout(PalimpsestError, TimeoutError):
    """`wait_until_indexed` ran out of time; `status` is the last status seen."""

    def __init__(self, message: str, *, status: ConversationStatus) -> None:
        super().__init__(message)
        self.status = status
