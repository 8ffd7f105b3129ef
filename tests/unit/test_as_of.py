"""The time anchor (`as_of`): relative dates in a question are read from it, the request carries it
(API, SDK, benchmark harness), and a request without it keeps the scope's newest event."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from app.api.schemas import QueryIn
from app.domain.retrieval.intent import IntentRouter

UTC = timezone.utc


@pytest.mark.parametrize("as_of, window", [
    (datetime(2023, 8, 2, tzinfo=UTC), ("2023-05-01", "2023-06-01")),
    (datetime(2026, 11, 23, tzinfo=UTC), ("2026-05-01", "2026-06-01")),
    (datetime(2024, 3, 1, tzinfo=UTC), ("2023-05-01", "2023-06-01")),  # May has not come yet in March
])
def test_the_questions_window_moves_with_as_of(as_of, window):
    intent = IntentRouter().route("What did Ana adopt last May?", reference_time=as_of)
    start, end = intent.time_window
    assert (start.date().isoformat(), end.date().isoformat()) == window


def test_two_weeks_ago_is_two_weeks_before_as_of():
    a = IntentRouter().route("What did we talk about two weeks ago?", reference_time=datetime(2023, 5, 20, tzinfo=UTC))
    b = IntentRouter().route("What did we talk about two weeks ago?", reference_time=datetime(2024, 1, 10, tzinfo=UTC))
    assert a.time_window[0].year == 2023 and a.time_window[0].month == 5
    assert b.time_window[0].year == 2023 and b.time_window[0].month == 12


def test_query_in_reads_as_of_as_an_iso_timestamp_in_utc():
    q = QueryIn(query="what happened last week?", as_of="2023-06-01T12:00:00")
    assert q.as_of == datetime(2023, 6, 1, 12, tzinfo=UTC)
    assert QueryIn(query="x", as_of="2023-06-01T14:00:00+02:00").as_of == datetime(2023, 6, 1, 12, tzinfo=UTC)
    assert QueryIn(query="x").as_of is None
    with pytest.raises(ValidationError):
        QueryIn(query="x", as_of=1685620800)  # a number is not a timestamp


def test_the_sdk_sends_as_of():
    from palimpsest.client import _core

    body = _core.query_body("last May?", "c1", None, None, None, None, None, datetime(2023, 6, 1, tzinfo=UTC))
    assert body["as_of"].startswith("2023-06-01T00:00:00")
    assert "as_of" not in _core.query_body("x", None, None, None, None, None, None)


def test_the_harness_sends_the_question_date_else_the_last_event():
    from bench.datasets import Question
    from bench.runner import query_body

    last = datetime(2023, 8, 2, 9, tzinfo=UTC)
    dated = Question("q1", "c1", "What did I buy last week?", "temporal", ("e1",),
                     as_of=datetime(2023, 9, 1, tzinfo=UTC))
    plain = Question("q2", "c1", "What did I buy last week?", "temporal", ("e1",))
    assert query_body(dated, 2000, 50, None, last)["as_of"] == "2023-09-01T00:00:00+00:00"
    assert query_body(plain, 2000, 50, None, last)["as_of"] == last.isoformat()
    assert "as_of" not in query_body(plain, 2000, 50, None)
