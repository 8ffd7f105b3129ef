"""Week-shaped and word-shaped time forms (timeparse/6): a day of the month said as an ordinal word after a
preposition, "early / mid / late next month", "a week from today", "a fortnight on Saturday", "two
summers ago", "the first / last week of <month>" (days 1-7 / the last seven days) and "the week of
<day>" (its Monday-to-Sunday week). Sentences made up for these tests; said on Wednesday 12 March 2025."""
from __future__ import annotations

from datetime import datetime

import pytest

from app.domain.layers.timeparse import resolve_time_expressions

WED_12_MAR_2025 = datetime(2025, 3, 12, 10, 0)


def one(text: str) -> tuple[str | None, str | None]:
    found = [m for m in resolve_time_expressions(text, WED_12_MAR_2025) if m.resolved]
    assert len(found) == 1, found
    return found[0].range_start, found[0].range_end


@pytest.mark.parametrize("text, start, end", [
    ("The exam is on the twenty-first.", "2025-03-21", "2025-03-22"),
    ("We're shut until the fifth, sorry.", "2025-04-05", "2025-04-06"),
    ("I handed it in on the second.", "2025-03-02", "2025-03-03"),
    ("I'll start early next month.", "2025-04-01", "2025-04-11"),
    ("The move is mid next month.", "2025-04-11", "2025-04-21"),
    ("We'll finish late next month.", "2025-04-21", "2025-05-01"),
    ("The invoice went out early last month.", "2025-02-01", "2025-02-11"),
    ("A week from today is the deadline.", "2025-03-19", "2025-03-20"),
    ("I'm free a week from tomorrow.", "2025-03-20", "2025-03-21"),
    ("The gig is a fortnight on Saturday.", "2025-03-29", "2025-03-30"),
    ("We fly two weeks from Friday.", "2025-03-28", "2025-03-29"),
    ("Let's say Thursday fortnight.", "2025-03-27", "2025-03-28"),
    ("I got married two summers ago.", "2023-06-01", "2023-09-01"),
    ("We bought it three winters back.", "2022-12-01", "2023-03-01"),  # last winter ended on 1 March
    ("Her birthday is the first week of June.", "2025-06-01", "2025-06-08"),
    ("We're away the last week of April.", "2025-04-24", "2025-05-01"),
    ("I was off the second week of January.", "2025-01-08", "2025-01-15"),
    ("We close the week of March 24.", "2025-03-24", "2025-03-31"),
    ("The builders come the week of the 7th of April.", "2025-04-07", "2025-04-14"),
])
def test_forms(text: str, start: str, end: str) -> None:
    assert one(text) == (start, end)


@pytest.mark.parametrize("text", [
    "She lives on the third floor.",       # an ordinal before a noun is no day
    "It worked on the second attempt.",
    "He came first in the race.",
])
def test_not_a_day(text: str) -> None:
    assert [m for m in resolve_time_expressions(text, WED_12_MAR_2025) if m.resolved] == []


def test_last_week_of_a_month_is_not_last_week() -> None:
    """"the last week of April" in a plan is April's, not the week before this one."""
    found = resolve_time_expressions("We're away the last week of April.", WED_12_MAR_2025)
    assert [(m.range_start, m.range_end) for m in found] == [("2025-04-24", "2025-05-01")]
