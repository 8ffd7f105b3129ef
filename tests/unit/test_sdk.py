"""The Python SDK's pure parts: reading Retry-After, the idempotent event-id scheme, errors by status."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

from palimpsest.client import derive_event_id, parse_retry_after


def test_parse_retry_after_and_event_id_scheme() -> None:
    assert parse_retry_after("3") == 3.0 and parse_retry_after("-1") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    past = format_datetime(datetime(2000, 1, 1, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after(past) == 0.0
    a = derive_event_id("c", "Ana", datetime(2024, 1, 1, 12), "hi")  # naive = UTC, as on the server
    assert a == derive_event_id("c", "Ana", datetime(2024, 1, 1, 13, tzinfo=timezone(timedelta(hours=1))), "hi")
    assert a.startswith("sdk1-") and len(a) == 37
    assert len({a, derive_event_id("c2", "Ana", datetime(2024, 1, 1, 12), "hi"),
                derive_event_id("c", "Ben", datetime(2024, 1, 1, 12), "hi"),
                derive_event_id("c", "Ana", datetime(2024, 1, 1, 12, 0, 0, 1), "hi"),
                derive_event_id("c", "Ana", datetime(2024, 1, 1, 12), "hi ")}) == 5


def test_a_409_is_a_conflict_naming_the_changed_fields() -> None:
    import httpx

    from palimpsest.client import Conflict, ValidationError
    from palimpsest.client._core import error_for

    request = httpx.Request("POST", "http://x/v1/events")
    body = {"error": "conflict", "detail": [{"field": "events.1.content", "type": "changed_retry",
                                             "message": "event_id 'e1' already holds a different event"}]}
    err = error_for(httpx.Response(409, json=body, request=request))
    assert isinstance(err, Conflict) and isinstance(err, ValidationError)
    assert err.fields == ["events.1.content"] and err.status_code == 409
