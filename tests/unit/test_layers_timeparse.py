"""Relative time expressions resolved against the event's own time (PRISM App. C.1)."""
from __future__ import annotations

from datetime import datetime

import pytest

from app.domain.layers.timeparse import find_time_expressions, resolve_time_expressions
from app.domain.layers.timeturns import resolution_stats

MONDAY = datetime(2023, 5, 8, 13, 56)  # Monday 8 May 2023


def one(text: str, base: datetime = MONDAY):
    found = resolve_time_expressions(text, base)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    "text, surface, day, start, end, gran",
    [
        ("I went to a support group yesterday.", "yesterday", "2023-05-07", "2023-05-07", "2023-05-08", "day"),
        ("We painted together last Saturday!", "last Saturday", "2023-05-06", "2023-05-06", "2023-05-07", "day"),
        ("I ran a charity race two weeks ago.", "two weeks ago", "2023-04-24", "2023-04-24", "2023-05-01", "week"),
        ("We went camping last weekend.", "last weekend", "2023-05-06", "2023-05-06", "2023-05-08", "week"),
        ("I will visit my parents next month.", "next month", None, "2023-06-01", "2023-07-01", "month"),
        ("I started a new job last week.", "last week", None, "2023-05-01", "2023-05-08", "week"),
        ("I went there in June.", "in June", None, "2022-06-01", "2022-07-01", "month"),
        ("I am going there in June.", "in June", None, "2023-06-01", "2023-07-01", "month"),
        ("A few days ago I adopted a cat.", "A few days ago", "2023-05-05", "2023-05-05", "2023-05-06", "day"),
        ("Last summer we drove to Utah.", "Last summer", None, "2022-06-01", "2022-09-01", "season"),
        ("Back in 2019 I lived in Boston.", "Back in 2019", None, "2019-01-01", "2020-01-01", "year"),
        ("I graduated on May 20, 2022.", "on May 20, 2022", "2022-05-20", "2022-05-20", "2022-05-21", "day"),
        ("We met last Wed at the park.", "last Wed", "2023-05-03", "2023-05-03", "2023-05-04", "day"),
    ],
)
def test_resolves_against_the_event_time(text, surface, day, start, end, gran):
    """Ranges are half-open, [start, end), as in every span of `app.domain.timeexpr`."""
    m = one(text)
    assert m.surface == surface
    assert m.resolved
    if day:
        assert m.date == day
    assert (m.range_start, m.range_end, m.granularity) == (start, end, gran)


def test_the_same_words_resolve_differently_at_another_time():
    assert one("I saw her yesterday.", datetime(2021, 1, 1, 9, 0)).date == "2020-12-31"


def test_weekday_tense_decides_past_or_future():
    past, fut = resolve_time_expressions("I went to the beach on Saturday. I will go again on Friday.", MONDAY)
    assert past.date == "2023-05-06" and fut.date == "2023-05-12"


def test_modal_may_and_the_verb_sat_are_not_dates():
    assert find_time_expressions("It may rain, so I sat inside.") == ()


def test_vague_expressions_are_found_but_unresolved_and_counted():
    ms = resolve_time_expressions("The other day I saw an owl, and yesterday a fox.", MONDAY)
    assert [m.resolved for m in ms] == [False, True]
    stats = resolution_stats(ms)
    assert stats["relative"] == 2 and stats["relative_resolved"] == 1 and stats["relative_resolved_share"] == 0.5


def test_labels_read_like_a_date_someone_would_ask_about():
    assert one("yesterday was fun").label == "7 May 2023"
    assert one("last month was busy").label == "April 2023"
