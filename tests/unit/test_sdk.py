"""The Python SDK's pure parts: reading Retry-After and the idempotent event-id scheme."""
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
