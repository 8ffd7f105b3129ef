"""Times a turn takes up from what was named before it (timeparse/12): "that week", "the same day", "all
weekend" are of the day or few days named last, in the turn or in the sitting; and a bare day number before
a verb said of dates ("the 22nd works") is a day. Sentences invented for these tests."""
from __future__ import annotations

from datetime import datetime, timedelta

from app.domain.layers.timeparse import resolve_time_expressions
from app.domain.layers.timeturns import discourses, resolve_turns

T = datetime(2024, 5, 6, 18, 0)  # a Monday


def spans(turns: list[tuple[str, datetime]]) -> list[dict[str, tuple[str | None, str | None]]]:
    return [{m.surface: (m.range_start, m.range_end) for m in found} for _, found in resolve_turns(turns)]


def test_that_week_is_the_week_of_the_days_named_before_it_in_the_turn():
    got = spans([("I'm off from the 14th to the 17th of May, so nothing big that week.", T)])
    assert got[0]["that week"] == ("2024-05-13", "2024-05-20")  # Monday to Monday, holding the 14th


def test_that_weekend_and_the_same_day_take_up_a_day_an_earlier_turn_of_the_sitting_named():
    got = spans([("The boat show is on Thursday the 16th.", T),
                 ("Could you collect the parcel the same day?", T + timedelta(minutes=1)),
                 ("I'm at my brother's that weekend, sorry.", T + timedelta(minutes=2))])
    assert got[1]["the same day"] == ("2024-05-16", "2024-05-17")
    assert got[2]["that weekend"] == ("2024-05-18", "2024-05-20")  # the weekend after the Thursday


def test_all_weekend_said_on_a_weekend_day_is_that_weekend():
    got = spans([("Are you free on Saturday the 11th?", T), ("No, on call all weekend.", T + timedelta(minutes=1))])
    assert got[1]["all weekend"] == ("2024-05-11", "2024-05-13")


def test_nothing_named_before_means_no_mention():
    assert resolve_time_expressions("I'm free that day if you need me.", T) == []
    # a day named in another sitting no longer holds
    got = spans([("The boat show is on Thursday the 16th.", T), ("I'm away that weekend.", T + timedelta(days=2))])
    assert got[1] == {}


def test_that_day_after_a_weekly_habit_names_no_day():
    got = spans([("He swims on Tuesday the 7th.", T),
                 ("Tuesdays he needs dropping at the pool, so I leave early that day.", T + timedelta(minutes=1))])
    assert "that day" not in got[1]


def test_all_day_and_that_day_before_an_event_are_not_taken_up():
    got = spans([("Lunch on Friday the 10th?", T), ("I'm at a desk all day, so yes.", T + timedelta(minutes=1)),
                 ("Could we go that weekend after the wedding?", T + timedelta(minutes=2))])
    assert got[1] == {}
    assert not any(k.startswith("that weekend") for k in got[2])  # an event's weekend: not dated here


def test_a_query_context_gives_a_turn_that_takes_up_a_day_its_discourse():
    rows = [("a", "c", "The boat show is on Thursday the 16th.", T),
            ("b", "c", "I'm at my brother's that weekend.", T + timedelta(minutes=1))]
    said = discourses(rows)
    assert said["b"].last_day is not None and said["b"].last_day.isoformat() == "2024-05-16"


def test_a_day_number_before_a_verb_said_of_dates_is_a_day():
    got = {m.surface: m.range_start for m in resolve_time_expressions(
        "The 22nd works for the hall, and the 24th suits Mo. We handed the keys in on the 2nd like we said.", T)}
    assert got == {"The 22nd": "2024-05-22", "the 24th": "2024-05-24", "on the 2nd": "2024-05-02"}


def test_a_day_number_before_a_noun_is_not_a_day():
    text = "She's on the 10th floor, and it's the 3rd time this month. For the third time, no."
    assert [m.surface for m in resolve_time_expressions(text, T)] == ["this month"]


def test_two_days_or_months_joined_by_to_are_one_stretch():
    got = {m.surface: (m.range_start, m.range_end) for m in resolve_time_expressions(
        "The site is closed from the 13th of May to the 2nd of June. Try the 26th of May to the 6th of June.", T)}
    assert got == {"the 13th of May to the 2nd of June": ("2024-05-13", "2024-06-03"),
                   "the 26th of May to the 6th of June": ("2024-05-26", "2024-06-07")}
    (m,) = resolve_time_expressions("We'll be in the caravan from June to September.", T)
    assert (m.surface, m.range_start, m.range_end) == ("from June to September", "2024-06-01", "2024-10-01")
    (m,) = resolve_time_expressions("I'm covering Wednesday to Friday.", T)
    assert (m.range_start, m.range_end) == ("2024-05-08", "2024-05-11")


def test_a_stretch_that_ends_in_the_next_year_or_week_moves_its_end_on():
    (m,) = resolve_time_expressions("The return covers November to January.", T)
    assert (m.range_start, m.range_end) == ("2024-11-01", "2025-02-01")
    (m,) = resolve_time_expressions("We're away Friday to Monday.", T)
    assert (m.range_start, m.range_end) == ("2024-05-10", "2024-05-14")


def test_a_date_moved_to_another_is_two_dates():
    got = [m.surface for m in resolve_time_expressions("The class is moving from the 26th to Tuesday 28 May.", T)]
    assert len(got) == 2


def test_a_short_month_name_in_lower_case_where_a_month_must_stand():
    got = {m.surface: m.range_start for m in resolve_time_expressions("back by sept, then off again in feb", T)}
    assert got == {"by sept": "2024-09-01", "in feb": "2025-02-01"}
    assert resolve_time_expressions("I got a text from jan about the oct file", T) == []


def test_same_day_ending_a_chat_clause_takes_up_the_day_before_it():
    got = spans([("ours on Saturday the 11th then??", T), ("same day?", T + timedelta(minutes=1)),
                 ("they do same day delivery", T + timedelta(minutes=2))])
    assert got[1] == {"same day": ("2024-05-11", "2024-05-12")}
    assert got[2] == {}
