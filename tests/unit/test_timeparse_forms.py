"""Forms of time expressions the layers resolve against an event's time: days of a month in words,
decades, an ordinal weekday of a month, fortnights, weeks and weekends counted from now, parts of a
year, Easter, the weekday of a greeting or of a date beside it, recurring expressions (no one day),
and the tense cues that decide which way a bare weekday or month points. The sentences are made up
for these tests."""
from __future__ import annotations

from datetime import datetime

import pytest

from app.domain.layers.timeparse import find_time_expressions, resolve_time_expressions
from app.domain.timeexpr import resolve_time_window

WED_12_MAR_2025 = datetime(2025, 3, 12, 10, 0)
SAT_7_JUN_2025 = datetime(2025, 6, 7, 9, 0)


def spans(text: str, base: datetime) -> list[tuple[str, str | None, str | None]]:
    return [(m.surface.strip(" .,"), m.range_start, m.range_end) for m in resolve_time_expressions(text, base)]


def one(text: str, base: datetime) -> tuple[str | None, str | None]:
    found = [m for m in resolve_time_expressions(text, base) if m.resolved]
    assert len(found) == 1, found
    return found[0].range_start, found[0].range_end


@pytest.mark.parametrize("text, start, end", [
    # days of a month in words
    ("The lease is yours from the first of April.", "2025-04-01", "2025-04-02"),
    ("We signed on the twenty-third of February.", "2025-02-23", "2025-02-24"),
    ("Her party is on June the third.", "2025-06-03", "2025-06-04"),
    ("The first of May suits everyone.", "2025-05-01", "2025-05-02"),  # at a sentence's start
    # decades: a century left out is the latest before the present decade
    ("My dad ran the shop through the eighties.", "1980-01-01", "1990-01-01"),
    ("That song was everywhere in the '70s.", "1970-01-01", "1980-01-01"),
    ("We lived in Leeds in the early 2010s.", "2010-01-01", "2014-01-01"),
    # an ordinal weekday of a month
    ("The quiz night is on the third Thursday in April.", "2025-04-17", "2025-04-18"),
    ("Rent goes out on the last Friday of the month.", "2025-03-28", "2025-03-29"),
    ("The first Monday of next month is a holiday.", "2025-04-07", "2025-04-08"),
    # fortnights: two weeks, and the week holding the shifted day
    ("I handed in my notice a fortnight ago.", "2025-02-24", "2025-03-03"),
    ("The builders come back in a fortnight.", "2025-03-24", "2025-03-31"),
    # weeks and weekends counted from now
    ("We're seeing the flat the Friday after next.", "2025-03-21", "2025-03-22"),
    ("They came round the Tuesday before last.", "2025-03-04", "2025-03-05"),
    ("I went climbing two weekends ago.", "2025-03-01", "2025-03-03"),
    ("The fair is on the weekend after next.", "2025-03-22", "2025-03-24"),
    ("Her results come the week after next.", "2025-03-24", "2025-03-31"),
    ("The piano gets tuned a week on Thursday.", "2025-03-20", "2025-03-21"),
    ("Our lease ends Friday week.", "2025-03-21", "2025-03-22"),
    ("The fee is due on the 5th of next month.", "2025-04-05", "2025-04-06"),
    # parts of a year: its thirds, as early / mid / late are a month's
    ("The shop opened in mid-2023.", "2023-05-01", "2023-09-01"),
    ("I hope to finish by early 2026.", "2026-01-01", "2026-05-01"),
    # Easter and the days around it, and fixed holidays without a year
    ("We're driving up to my gran's for Easter.", "2025-04-20", "2025-04-21"),
    ("The office was shut on Good Friday last year.", "2024-03-29", "2024-03-30"),
    ("We'll do presents on Boxing Day.", "2025-12-26", "2025-12-27"),
    # ISO dates
    ("The invoice dated 2025-02-10 is still open.", "2025-02-10", "2025-02-11"),
])
def test_resolves_the_form(text, start, end):
    if "Good Friday" in text:  # "last year" is a second expression here: take the holiday
        got = next(m for m in resolve_time_expressions(text, WED_12_MAR_2025) if "Friday" in m.surface)
        assert (got.range_start, got.range_end) == (start, end)
        return
    assert one(text, WED_12_MAR_2025) == (start, end)


@pytest.mark.parametrize("text", [
    "We rehearse every other Wednesday.",
    "The choir meets on Tuesdays and Thursdays.",
    "Saturday mornings are for the market.",
    "He's somewhere in his forties.",  # an age, not a decade
    "She joined the Marine Biology Society.",  # "Mar" is a month only as a word
])
def test_recurring_or_non_time_phrases_are_no_dates(text):
    assert [m for m in resolve_time_expressions(text, WED_12_MAR_2025) if m.resolved] == []


def test_a_weekday_with_a_part_of_the_day_is_that_day():
    assert one("The boiler broke down on Sunday night.", WED_12_MAR_2025) == ("2025-03-09", "2025-03-10")
    assert find_time_expressions("See you Friday evening!")[0][2] == "Friday evening"


def test_a_greeting_names_the_day_it_is_said():
    assert one("Happy Saturday, everyone!", SAT_7_JUN_2025) == ("2025-06-07", "2025-06-08")


def test_a_weekday_beside_a_date_takes_that_date():
    got = spans("You could take the Thursday ferry, March 20, or the later one.", WED_12_MAR_2025)
    assert ("Thursday", "2025-03-20", "2025-03-21") in got


@pytest.mark.parametrize("text, start", [
    ("Sorry, I'm back home. Thanks for feeding the cat on Sunday.", "2025-06-01"),  # thanks for ...-ing: done
    ("A tree came down and the fence split on Monday.", "2025-06-02"),  # "split" after a subject: past
    ("I quit the choir in May, it was too much.", "2025-05-01"),
    ("I've got my driving test on Tuesday.", "2025-06-10"),  # "'ve got" is having, not a past
    ("Good news, they confirmed our table for July 3.", "2025-07-03"),  # an arrangement is ahead
    ("My train on Wednesday was cancelled.", "2025-06-11"),
])
def test_tense_cues(text, start):
    assert one(text, SAT_7_JUN_2025)[0] == start


def test_a_modal_keeps_a_same_form_verb_in_the_future():
    assert one("We might cut the hedge on Monday.", SAT_7_JUN_2025)[0] == "2025-06-09"


def test_month_names_start_sentences_and_stand_alone():
    assert one("From September we'll share the car.", SAT_7_JUN_2025) == ("2025-09-01", "2025-10-01")
    assert one("I spent August painting the house.", datetime(2025, 10, 2)) == ("2025-08-01", "2025-09-01")
    assert one("The November timetable is out.", datetime(2025, 11, 3)) == ("2025-11-01", "2025-12-01")


def test_the_question_side_reads_decades_and_fortnights():
    win, said = resolve_time_window("What was she doing in the nineties?", datetime(2025, 3, 12))
    assert (win[0].year, win[1].year, said) == (1990, 2000, "the nineties")
    win, _ = resolve_time_window("Who did I meet a fortnight ago?", datetime(2025, 3, 12))
    assert (win[0].date().isoformat(), win[1].date().isoformat()) == ("2025-02-24", "2025-03-03")


@pytest.mark.parametrize("text, start", [
    ("We repainted the shed over the weekend.", "2025-03-08"),  # told in the past: the latest one
    ("We'll repaint the shed over the weekend.", "2025-03-15"),  # a plan: the coming one
    ("Did anything fun happen at the weekend?", "2025-03-08"),
    ("Any nice plans for the weekend?", "2025-03-15"),
    ("The pond has been frozen since the weekend.", "2025-03-08"),
    ("I'm away this coming weekend.", "2025-03-15"),
])
def test_the_weekend_follows_the_tense(text, start):
    assert one(text, WED_12_MAR_2025)[0] == start


def test_a_weekend_with_no_tense_is_the_nearer_one():
    assert one("Anything good over the weekend?", datetime(2025, 3, 10, 9))[0] == "2025-03-08"  # a Monday
    assert one("Anything good over the weekend?", datetime(2025, 3, 14, 9))[0] == "2025-03-15"  # a Friday


def test_a_present_perfect_reads_as_past():
    assert one("What have you been doing on Sunday, then?", WED_12_MAR_2025)[0] == "2025-03-09"


@pytest.mark.parametrize("text, start, end", [
    ("Could we move it to Thursday 20th?", "2025-03-20", "2025-03-21"),  # a weekday and a day without "the"
    ("We bought the van the year before last.", "2023-01-01", "2024-01-01"),
    ("The inspection is the month after next.", "2025-05-01", "2025-06-01"),
])
def test_more_counted_forms(text, start, end):
    assert one(text, WED_12_MAR_2025) == (start, end)


@pytest.mark.parametrize("text, start", [
    ("I rang the council on Monday.", "2025-03-10"),  # irregular past forms
    ("She spoke to the landlord on Friday.", "2025-03-07"),
])
def test_irregular_pasts_point_back(text, start):
    assert one(text, WED_12_MAR_2025)[0] == start


def test_the_day_of_the_booking_itself_stays_in_the_past():
    assert one("I booked the hotel on Monday, it was half price.", WED_12_MAR_2025)[0] == "2025-03-10"


@pytest.mark.parametrize("text", [
    "She teaches Eastern European history.",  # no Easter in "Eastern"
    "We run every Monday, Wednesday and Friday morning.",
    "They sold us the Weekend Saver ticket.",  # a name, not a weekend
])
def test_words_that_only_look_like_dates(text):
    assert [m for m in resolve_time_expressions(text, WED_12_MAR_2025) if m.resolved] == []


@pytest.mark.parametrize("text, start, end", [
    ("The christening is on 9 May next year.", "2026-05-09", "2026-05-10"),  # a day with "next year"
    ("They emigrated back in '84.", "1984-01-01", "1985-01-01"),  # a year in two digits
    ("We toured Wales in the summer of '72.", "1972-06-01", "1972-09-01"),
    ("We toured Wales in the summer of 1972.", "1972-06-01", "1972-09-01"),  # not just "of 1972"
    ("They opened the bakery thirty years ago.", "1995-01-01", "1996-01-01"),  # counts past twelve
    ("The boiler service is at the start of next month.", "2025-04-01", "2025-04-11"),
])
def test_years_and_counts(text, start, end):
    assert one(text, WED_12_MAR_2025) == (start, end)


def test_an_ordinal_weekday_of_every_month_is_recurring():
    assert [m for m in resolve_time_expressions("Bins go out the last Monday of every month.", WED_12_MAR_2025)
            if m.resolved] == []


def test_the_following_day_counts_from_the_day_named_before_it():
    got = spans("We land on April 3 and drive north the following Saturday.", WED_12_MAR_2025)
    assert got[-1] == ("the following Saturday", "2025-04-05", "2025-04-06")
    got = spans("The fair is on the 22nd and the tidy-up the next day.", WED_12_MAR_2025)
    assert got[-1] == ("the next day", "2025-03-23", "2025-03-24")
    # with no day before it, it names none
    assert [m for m in resolve_time_expressions("The next day was calmer.", WED_12_MAR_2025) if m.resolved] == []


@pytest.mark.parametrize("text, start", [
    ("The alarm went off the night before last.", "2025-03-10"),
    ("I last saw her two Sundays ago.", "2025-03-02"),
])
def test_counted_back_from_the_day_said(text, start):
    assert one(text, WED_12_MAR_2025)[0] == start


@pytest.mark.parametrize("text, start", [
    ("I'm so excited about Thursday!", "2025-03-13"),  # a state after "am", not a past
    ("The library is closed on Good Friday.", "2025-04-18"),
    ("She's moved her things out on Monday.", "2025-03-10"),  # "'s moved" is "has moved": a past
    ("The final is on April the 26th.", "2025-04-26"),
])
def test_states_are_not_pasts(text, start):
    assert one(text, WED_12_MAR_2025)[0] == start


# ------------------------------------------------------------------ timeparse/10: general forms of chat and office talk


@pytest.mark.parametrize("text, start, end", [
    # month names in lower case, with the tense rules of capitalised ones
    ("we're still doing interrail in july yes?", "2025-07-01", "2025-08-01"),
    ("I'll have the draft done by september", "2025-09-01", "2025-10-01"),
    ("ugh. august then?", "2025-08-01", "2025-09-01"),
    ("august works. I'll book it", "2025-08-01", "2025-09-01"),
    ("what about june?", "2025-06-01", "2025-07-01"),
    ("we moved here in june", "2024-06-01", "2024-07-01"),  # told in the past: the latest June
    ("the move is mid-october", "2025-10-11", "2025-10-21"),
    # "may" and "march" only where they cannot be a modal or a verb
    ("the lease ends in may", "2025-05-01", "2025-06-01"),
    ("we're away from the 5th of may", "2025-05-05", "2025-05-06"),
    ("see you may 5th!", "2025-05-05", "2025-05-06"),
    ("it rained all through last march", "2024-03-01", "2024-04-01"),
    # quarters: the calendar quarter's days; without a year, the coming one in a plan, the latest in a report
    ("We're moving everything onto our own cluster in Q3.", "2025-07-01", "2025-10-01"),
    ("Sales were up in Q4.", "2024-10-01", "2025-01-01"),
    ("Then we hire a junior, Q4 at the latest.", "2025-10-01", "2026-01-01"),
    ("The Q4 2024 numbers are in.", "2024-10-01", "2025-01-01"),
    ("We aim to launch in Q1 next year.", "2026-01-01", "2026-04-01"),
    ("The audit is in the third quarter of next year.", "2026-07-01", "2026-10-01"),
    ("We'll open the second office in the third quarter.", "2025-07-01", "2025-10-01"),
    ("We doubled our sign-ups last quarter.", "2024-10-01", "2025-01-01"),
    # fixed-date holidays
    ("I've been at the pharmacy since New Year.", "2025-01-01", "2025-01-02"),
    ("She lands on the 21st of December and stays till New Year.", "2026-01-01", "2026-01-02"),
    ("Saoirse and I got engaged on Paddy's Day!", "2024-03-17", "2024-03-18"),
    ("An April Fools' Day concert? Fine by me.", "2025-04-01", "2025-04-02"),
    ("The kids are trick-or-treating on Hallowe'en.", "2025-10-31", "2025-11-01"),
    ("We'll have fireworks on Guy Fawkes Night.", "2025-11-05", "2025-11-06"),
    # the days around a named holiday
    ("Her flight home is now the day after Boxing Day.", "2025-12-27", "2025-12-28"),
    ("The concert is the Saturday after Easter.", "2025-04-26", "2025-04-27"),
    ("We went skiing the week before Christmas.", "2024-12-16", "2024-12-23"),
    ("The party is the day before New Year's Eve.", "2025-12-30", "2025-12-31"),
    # a bare season in a time context
    ("Spring next year. They have April free.", "2026-03-01", "2026-06-01"),
    ("Summer works for me.", "2025-06-01", "2025-09-01"),
    ("Spring it is.", "2025-03-01", "2025-06-01"),
    ("We met in the summer of last year.", "2024-06-01", "2024-09-01"),
    # "this time next week": the same day a week on (one day)
    ("I'll send the final invoice this time next week.", "2025-03-19", "2025-03-20"),
    ("This time tomorrow I'll be in Rome.", "2025-03-13", "2025-03-14"),
    ("This time last week we were snowed in.", "2025-03-05", "2025-03-06"),
    ("This time last year we were still renting.", "2024-03-12", "2024-03-13"),
])
def test_general_forms_of_chat_and_office_talk(text, start, end):
    got = [m for m in resolve_time_expressions(text, WED_12_MAR_2025) if m.resolved]
    if text.startswith("She lands"):  # the 21st of December is a second expression here: take the holiday
        got = [m for m in got if "New Year" in m.surface]
    if text.startswith("Spring next year"):
        got = got[:1]
    assert [(m.range_start, m.range_end) for m in got] == [(start, end)]


def test_a_month_in_lower_case_keeps_its_words_and_anchors_a_later_day():
    (m,) = resolve_time_expressions("we're doing interrail in july yes?", WED_12_MAR_2025)
    assert m.surface == "in july"
    got = spans("the keys come on the 3rd of july and I move on the 5th", WED_12_MAR_2025)
    assert got[-1] == ("on the 5th", "2025-07-05", "2025-07-06")


@pytest.mark.parametrize("text", [
    "This may take a while.",  # a modal
    "It may rain, so we might march to the pub instead.",
    "The last may be the best of them.",
    "june said she'd call back.",  # a name written in lower case, not a choice of month
    "I told him about june.",
    "It was an august institution.",
    "He drives an Audi Q3 now.",  # a model, not a quarter
    "Q1: how do I add a user to my card?",  # a numbered question
    "It's quarter past three.",
    "We were trailing badly in the fourth quarter.",  # a game's quarter, told in the past
    "He scored in the third quarter of the match.",
    "Which quarter of the city do you live in?",
    "Happy new year, everyone!",  # a greeting, not the day
    "In the new year I'll look for a new job.",
    "My New Year resolution is to run more.",
    "There's a spring in his step.",  # a spring, not the season
    "The spring works loose if you force it.",
    "The day after the wedding we flew home.",  # an event this layer does not date
])
def test_words_of_these_forms_that_name_no_date(text):
    assert [m for m in resolve_time_expressions(text, WED_12_MAR_2025) if m.resolved] == []


def test_fall_as_a_verb_is_no_season():
    assert spans("Prices fall next year, they say.", WED_12_MAR_2025) == [("next year", "2026-01-01", "2027-01-01")]
