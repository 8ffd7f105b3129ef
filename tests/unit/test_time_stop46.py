"""What the time resolver reads since timeparse/18:
- "in <month>" told in a past-tense sentence is the coming month, when the last one is far back and the coming one a
  few months off, where the month is that of a thing offered ("offered me a trial shift in August") or where no past
  verb stands just before it ("signed up for the course the museum is running in February"). Told right after a
  past verb ("she came with me in January", "we played a gig there in March"), or as a state ("I was a volunteer in
  January"), it stays the past one.
- holidays counted in their month or from Easter ("Labor Day", "MLK Day", "Father's Day", "Mothering Sunday", "the
  August bank holiday"); a holiday named with no tense in the weeks after it is that one, not next year's.
- "next Thursday" said on a Monday is next week's; "this coming Thursday" the coming one.
- "books" and "rents" are nouns, not an arrangement ("sorting books" does not make a past weekend the coming one).
Sentences invented for these tests."""
from __future__ import annotations

from tests.unit.layers_generalise_support import at, span_of


def test_a_month_that_belongs_to_something_arranged_in_the_past_is_the_coming_one():
    may_2024 = at(2024, 5, 6)
    assert span_of("in August", "Good news, the garden centre offered me a trial shift in August!", may_2024) == \
        ("2024-08-01", "2024-09-01")
    assert span_of("in July", "The organisers proposed a short talk in July.", may_2024) == \
        ("2024-07-01", "2024-08-01")
    nov_2023 = at(2023, 11, 14)
    assert span_of("in January", "My old manager suggested a catch-up lunch in January.", nov_2023) == \
        ("2024-01-01", "2024-02-01")


def test_a_month_with_no_past_verb_just_before_it_is_the_coming_one():
    jan_2024 = at(2024, 1, 9)
    assert span_of("in February", "I've signed up for the pottery course the museum is running in February.", jan_2024) == \
        ("2024-02-01", "2024-03-01")
    june_2024 = at(2024, 6, 17)
    assert span_of("in September", "Also got the funding for the workshop in Lisbon in September!", june_2024) == \
        ("2024-09-01", "2024-10-01")


def test_a_month_told_right_after_a_past_verb_or_as_a_state_stays_the_past_one():
    nov_2023 = at(2023, 11, 20)
    assert span_of("in January", "The hygienist was lovely when my son came with me in January.", nov_2023) == \
        ("2023-01-01", "2023-02-01")
    assert span_of("in March", "Is that the old mill? We played a gig there in March.", nov_2023) == \
        ("2023-03-01", "2023-04-01")
    assert span_of("in February", "I was a volunteer in February.", nov_2023) == ("2023-02-01", "2023-03-01")
    # a past one close behind stays the past one whatever the sentence
    assert span_of("in September", "The club offered me a place in September.", nov_2023) == ("2023-09-01", "2023-10-01")


def test_holidays_counted_in_their_month_or_from_easter():
    assert span_of("Labor Day", "The pool closes after Labor Day.", at(2026, 3, 14)) == ("2026-09-07", "2026-09-08")
    assert span_of("MLK Day", "The office is shut on MLK Day.", at(2025, 1, 9)) == ("2025-01-20", "2025-01-21")
    assert span_of("Memorial Day", "We open the cabin on Memorial Day.", at(2025, 4, 2)) == ("2025-05-26", "2025-05-27")
    assert span_of("Father's Day", "Dad wants a barbecue on Father's Day.", at(2025, 5, 30)) == ("2025-06-15", "2025-06-16")
    assert span_of("Mothering Sunday", "Book the table for Mothering Sunday.", at(2022, 3, 7)) == ("2022-03-27", "2022-03-28")
    assert span_of("August bank holiday", "The fete is on the August bank holiday.", at(2024, 1, 18)) == \
        ("2024-08-26", "2024-08-27")


def test_a_holiday_with_no_tense_just_after_it_is_that_one():
    assert span_of("Valentine's Day", "A surprise dinner. On Valentine's Day!", at(2023, 2, 15)) == ("2023-02-14", "2023-02-15")
    assert span_of("New Year's Day", "One alert on New Year's Day for a full disk.", at(2026, 1, 12)) == \
        ("2026-01-01", "2026-01-02")
    # weeks ahead of it, or months after the last one, it is the coming one
    assert span_of("Valentine's Day", "A surprise dinner. On Valentine's Day!", at(2023, 1, 20)) == ("2023-02-14", "2023-02-15")
    assert span_of("Halloween", "The hometown show on Halloween.", at(2025, 8, 11)) == ("2025-10-31", "2025-11-01")


def test_next_weekday_is_next_weeks_when_the_coming_one_falls_this_week():
    monday = at(2025, 2, 3)
    assert span_of("next Thursday", "Can you come in next Thursday?", monday) == ("2025-02-13", "2025-02-14")
    assert span_of("this coming Thursday", "Can you come in this coming Thursday?", monday) == ("2025-02-06", "2025-02-07")
    friday = at(2025, 2, 7)
    assert span_of("next Thursday", "Can you come in next Thursday?", friday) == ("2025-02-13", "2025-02-14")


def test_books_is_a_noun_not_an_arrangement():
    assert span_of("Easter weekend", "I spent the whole Easter weekend sorting books into boxes.", at(2026, 4, 9)) == \
        ("2026-04-04", "2026-04-06")


def test_a_stretch_or_week_of_a_named_month_told_in_the_past_is_the_coming_one_when_the_last_is_far_back():
    jan_2025 = at(2025, 1, 12)
    assert span_of("the 9th to the 11th of May", "I was thinking the 9th to the 11th of May for the reunion.", jan_2025) == \
        ("2025-05-09", "2025-05-12")
    assert span_of("the last week of March", "The van was booked for the last week of March.", at(2025, 2, 10)) == \
        ("2025-03-25", "2025-04-01")
    assert span_of("the last week of August", "Dad finally said yes to the last week of August.", at(2023, 7, 10)) == \
        ("2023-08-25", "2023-09-01")
    # a stretch just behind, told in the past, stays behind; so does one named with its year
    assert span_of("the 2nd to the 5th of January", "We were away the 2nd to the 5th of January.", jan_2025) == \
        ("2025-01-02", "2025-01-06")
    assert span_of("the 9th to the 11th of May", "We stayed there the 9th to the 11th of May.", at(2025, 9, 1)) == \
        ("2025-05-09", "2025-05-12")


def test_the_query_reads_next_weekday_as_the_layers_do():
    from datetime import datetime

    from app.domain.timeexpr import resolve_time_window

    window, _ = resolve_time_window("What is planned for next Thursday?", datetime(2025, 2, 3, 10))  # a Monday
    assert (window[0].date().isoformat(), window[1].date().isoformat()) == ("2025-02-13", "2025-02-14")
    window, _ = resolve_time_window("What is planned for next Thursday?", datetime(2025, 2, 7, 10))  # a Friday
    assert (window[0].date().isoformat(), window[1].date().isoformat()) == ("2025-02-13", "2025-02-14")
