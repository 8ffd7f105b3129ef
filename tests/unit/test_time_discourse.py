"""Time expressions read with what the conversation said before them (timeparse/7): a bare "the 22nd"
that restates a date named earlier, "the Friday before" a day named earlier, ranges of days, what an
arrangement or an intention is for, and the context's dates beside the words. Sentences invented for
these tests."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from app.domain.layers.timeparse import resolve_time_expressions
from app.domain.layers.timeturns import discourses, resolve_turns
from app.domain.retrieval.assemble import ContextItem, render_line


def spans(turns: list[tuple[str, datetime]]) -> list[dict[str, tuple[str | None, str | None]]]:
    return [{m.surface: (m.range_start, m.range_end) for m in found} for _, found in resolve_turns(turns)]


T = datetime(2023, 11, 3, 18, 0)  # a Friday


def later(minutes: int = 0, days: int = 0) -> datetime:
    return T + timedelta(minutes=minutes, days=days)


def test_a_bare_day_that_restates_the_date_named_before_it_is_that_date():
    got = spans([("Gran turns ninety on the 22nd of November.", datetime(2025, 9, 28, 20)),
                 ("The 22nd is a Saturday, so lunch?", datetime(2025, 9, 28, 20, 2))])
    assert got[1]["The 22nd"] == ("2025-11-22", "2025-11-23")  # not 22 October, the nearest 22nd


def test_any_other_bare_day_is_the_nearest_such_day():
    # "until the 12th" after "Saturday 13 December" meant the nearest 12th as often as December's
    got = spans([("The concert is booked for Saturday 13 December.", T), ("I'm on nights until the 12th.", later(1))])
    assert got[1]["the 12th"][0] == "2023-11-12"
    got = spans([("Gran turns ninety on the 22nd of November.", datetime(2025, 9, 28, 20)),
                 ("The 22nd was a Saturday, wasn't it?", datetime(2025, 9, 30, 20))])  # another sitting, told as past
    assert got[1]["The 22nd"][0] == "2025-09-22"
    # (said ahead in another sitting, the 22nd is November's since timeparse/17: tests/unit/test_time_remembered.py)


def test_the_night_before_a_day_named_in_the_turn_before():
    got = spans([("Thursday the 25th, evening.", datetime(2025, 9, 8, 19)),
                 ("Parents' evening is the night before, so I'll be tired.", datetime(2025, 9, 8, 19, 1))])
    assert got[1]["the night before"] == ("2025-09-24", "2025-09-25")


def test_the_weekday_before_a_date_named_earlier():
    got = spans([("Gran turns ninety on the 25th of November.", T),
                 ("I can't help the Friday before, I'm away.", later(1)),
                 ("My uncle lands the Wednesday before.", later(2))])
    assert got[1]["the Friday before"] == ("2023-11-24", "2023-11-25")
    assert got[2]["the Wednesday before"] == ("2023-11-22", "2023-11-23")


def test_the_friday_before_with_no_date_named_has_no_span():
    (m,) = resolve_time_expressions("I can't make the Friday before.", T)
    assert m.surface == "the Friday before" and not m.resolved


def test_the_weekend_and_the_day_before_a_date_in_the_same_turn():
    ms = {m.surface: (m.range_start, m.range_end) for m in resolve_time_expressions(
        "I start at the lab on the 4th of March, so we'd move the weekend before.", T)}
    assert ms["the weekend before"] == ("2024-03-02", "2024-03-04")
    ms = {m.surface: (m.range_start, m.range_end) for m in resolve_time_expressions(
        "Saturday the 9th, please. My brother can bring the plants the day before.", T)}
    assert ms["the day before"] == ("2023-12-08", "2023-12-09")
    assert [m.surface for m in resolve_time_expressions("We'll meet the day before the wedding.", T)] == []


@pytest.mark.parametrize("text, surface, span", [
    ("I'm in Leeds for work from the 4th to the 8th of May.", "from the 4th to the 8th of May", ("2024-05-04", "2024-05-09")),
    ("The festival runs May 4-8.", "May 4-8", ("2024-05-04", "2024-05-09")),
    ("We're away 3–5 June.", "3–5 June", ("2024-06-03", "2024-06-06")),
    ("I'm away from the 20th to the 25th.", "from the 20th to the 25th", ("2023-11-20", "2023-11-26")),
    ("I'll book the hut for the 17th and 18th.", "the 17th and 18th", ("2023-11-17", "2023-11-19")),
])
def test_a_range_of_days_is_one_stretch(text, surface, span):
    ms = {m.surface: (m.range_start, m.range_end) for m in resolve_time_expressions(text, T)}
    assert ms == {surface: span}


def test_two_days_joined_by_and_are_two_days():
    ms = {m.surface: m.range_start for m in resolve_time_expressions("Can you do the 5th and the 12th?", T)}
    assert ms == {"the 5th": "2023-11-05", "the 12th": "2023-11-12"}
    ms = {m.surface: m.range_start for m in resolve_time_expressions("Can you do the 5th and 12th?", T)}
    # not one stretch from the 5th to the 12th; since timeparse/13 the bare "12th" is read too (`BARE_DAY_RE`)
    assert ms == {"the 5th": "2023-11-05", "12th": "2023-11-12"}


def test_a_weekday_said_of_a_date_is_no_date():
    ms = [m.surface for m in resolve_time_expressions("The 24th is a Friday, so we could do Saturday.", T)]
    assert "Friday" not in " ".join(ms) and "The 24th" in ms


def test_wont_is_the_future():
    (m,) = resolve_time_expressions("The keys won't be ready until the 2nd.", datetime(2026, 2, 20, 10))
    assert m.range_start == "2026-03-02"


def test_a_plan_told_after_a_past_verb_is_still_ahead():
    (m,) = resolve_time_expressions("Dad's decided he's finally retiring from the band in January.", datetime(2025, 11, 24))
    assert m.range_start == "2026-01-01"


def test_since_the_third_counts_back_from_the_day_it_is_said():
    ms = {m.surface: m.range_start for m in resolve_time_expressions(
        "I handed in my last job yesterday. Since the 3rd I'm teaching full time.", datetime(2025, 11, 12, 10))}
    assert ms["the 3rd"] == "2025-11-03"


def test_a_date_said_before_does_not_overrule_the_tense():
    # an earlier turn's plan "ending on March 29" of the next year does not move a sprint done "already"
    got = spans([("Sprint one ends on March 29.", datetime(2024, 3, 30, 9)),
                 ("I've already completed sprint one on March 29.", datetime(2024, 4, 5, 9))])
    assert got[1]["on March 29"][0] == "2024-03-29"
    got = spans([("Ezinne approved it on Tuesday.", datetime(2025, 7, 24, 9)),
                 ("Is the refresher still on for Tuesday?", datetime(2025, 7, 24, 9, 1))])
    assert got[1]["Tuesday"][0] == "2025-07-29"  # a weekday recurs: one said before does not decide


@pytest.mark.parametrize("text, at, surface, start", [
    ("I've booked a stall at the craft fair on the 23rd of August.", datetime(2025, 5, 12), "on the 23rd of August", "2025-08-23"),
    ("Cancelled the juniors on 30 January.", datetime(2027, 1, 11), "on 30 January", "2027-01-30"),
    ("I booked the tickets on Monday.", datetime(2025, 9, 29), "on Monday", "2025-09-22"),  # the act's own day
    ("I've asked the agent to sort out the certificate before Easter.", datetime(2026, 4, 2), "Easter", "2026-04-05"),
    ("She has moved me to the day ward for the winter.", datetime(2025, 11, 19), "for the winter", "2025-12-01"),
    ("I was in Spain for the summer.", datetime(2025, 10, 8), "for the summer", "2025-06-01"),
    ("I've been made head of maths from September.", datetime(2025, 6, 8), "from September", "2025-09-01"),
    ("We'd like the revised draft by late January.", datetime(2025, 9, 16), "by late January", "2026-01-21"),
    ("Last day at the museum is the 17th of October.", datetime(2025, 9, 29), "the 17th of October", "2025-10-17"),
    ("We went to Crete in August.", datetime(2025, 6, 1), "in August", "2024-08-01"),
    ("It improved candidate fit by 20% in April hires.", datetime(2024, 5, 2), "in April", "2024-04-01"),  # a noun
])
def test_what_an_arrangement_or_an_intention_is_for_lies_ahead(text, at, surface, start):
    assert {m.surface: m.range_start for m in resolve_time_expressions(text, at)}[surface] == start


def test_the_context_dates_an_item_with_the_turns_the_query_holds():
    rows = [(1, "c1", "Gran turns ninety on the 22nd of November.", datetime(2025, 9, 28, 20)),
            (2, "c1", "The 22nd is a Saturday, so lunch?", datetime(2025, 9, 28, 20, 2)),
            (3, "c2", "The 22nd is a Saturday, so lunch?", datetime(2025, 9, 28, 20, 2))]  # another conversation
    said = discourses(rows)
    assert 1 not in said  # a turn whose words lean on nothing before them is read alone (and costs nothing)
    line = render_line(ContextItem(2, "Ines", rows[1][2], rows[1][3], discourse=said[2]))
    assert "The 22nd [22 November 2025]" in line
    other = render_line(ContextItem(3, "Ines", rows[2][2], rows[2][3], discourse=said[3]))
    assert "The 22nd [22 October 2025]" in other
