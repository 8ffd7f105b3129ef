"""The one calendar: what the ingest writes and what the query asks are the same half-open spans."""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from app.domain.layers.timeparse import resolve_time_expressions
from app.domain.timeexpr import overlaps_window, relative_weekend, resolve_time_window, shift_month

UTC = timezone.utc
SAID = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize("words", ["last summer", "next winter", "next summer", "this summer", "this fall", "last weekend",
                                   "next weekend", "last week", "last month", "next year"])
def test_ingest_and_query_resolve_the_same_span(words):
    (m,) = resolve_time_expressions(f"We talked about it {words}.", SAID)
    window, _ = resolve_time_window(f"What happened {words}?", SAID)
    assert (m.range_start, m.range_end) == tuple(d.date().isoformat() for d in window)


def test_next_summer_said_in_may_is_a_year_on_for_the_question_too():
    window, _ = resolve_time_window("What are they planning for next summer?", SAID)  # said 8 May 2023
    assert tuple(d.date().isoformat() for d in window) == ("2024-06-01", "2024-09-01")


def test_a_day_before_the_window_is_outside_it():
    window, _ = resolve_time_window("What did she do last May?", SAID)  # [2022-05-01, 2022-06-01)
    assert not overlaps_window((date(2022, 4, 30), date(2022, 5, 1)), window)
    assert overlaps_window((date(2022, 5, 31), date(2022, 6, 1)), window)
    assert not overlaps_window((date(2022, 6, 1), date(2022, 6, 2)), window)
    assert overlaps_window((date(2022, 5, 12), date(2022, 5, 12)), window)  # a single day given as a point


def test_weekends_from_every_day_of_the_week():
    sat = date(2023, 5, 13)
    for offset in range(7):
        ref = date(2023, 5, 8 + offset)  # Monday .. Sunday
        last, this, nxt = (relative_weekend(ref, w) for w in ("last", "this", "next"))
        assert last[1] - last[0] == this[1] - this[0] == nxt[1] - nxt[0] == date(2023, 1, 3) - date(2023, 1, 1)
        assert this[0] == sat and last[0] == date(2023, 5, 6)
        assert nxt[0] == (sat if ref < sat else date(2023, 5, 20))


def test_shift_month_steps_across_year_ends_both_ways():
    assert shift_month(2023, 12, 1) == (2024, 1) and shift_month(2024, 1, -1) == (2023, 12)
    assert shift_month(2023, 5, 0) == (2023, 5) and shift_month(2023, 11, 2) == (2024, 1)
    assert shift_month(2023, 2, -14) == (2021, 12) and shift_month(2023, 3, 25) == (2025, 4)
    y, m = 2020, 7  # any k equals k single steps
    for k in range(1, 40):
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        assert shift_month(2020, 7, k) == (y, m)
