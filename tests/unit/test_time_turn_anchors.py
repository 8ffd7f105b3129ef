"""Time expressions that lean on a day the turn (or its sitting) named, and forms added in timeparse/8.
Sentences invented for these tests; the days are checked against the calendar by hand."""
from __future__ import annotations

from datetime import date, datetime

import pytest

from app.domain.layers.timeparse import resolve_time_expressions
from app.domain.layers.timeturns import discourses, resolve_turns


def span(text: str, at: datetime, surface: str) -> tuple[str | None, str | None]:
    found = {m.surface: (m.range_start, m.range_end) for m in resolve_time_expressions(text, at)}
    assert surface in found, found
    return found[surface]


WED = datetime(2026, 2, 25, 20, 0)  # a Wednesday


def test_a_bare_day_close_at_hand_is_this_months_even_after_another_month_is_named():
    # the 28th is three days off: February's, not the 28th after the 1st of March
    text = "The new gym takes me from the 1st of March. My old pass runs out on the 28th."
    assert span(text, WED, "on the 28th") == ("2026-02-28", "2026-03-01")


def test_a_bare_day_further_off_is_of_the_month_the_turn_named():
    # said on 3 November: the 16th in view is December's, not the coming 16 November
    at = datetime(2023, 11, 3, 21)
    text = "My flight lands on the 14th of December and we're having dinner with Mum on the 16th."
    assert span(text, at, "on the 16th") == ("2023-12-16", "2023-12-17")
    # the same day number before the named day in its month: still that month ("a party on the 25th of
    # December, and the office shuts on the 19th")
    text = "The party is on the 25th of December, and the office shuts on the 19th."
    assert span(text, at, "on the 19th") == ("2023-12-19", "2023-12-20")


def test_words_that_carry_on_from_a_named_day_count_from_it():
    # "back on the 2nd" after the 28th of March is April's 2nd, although the 2nd of March is close
    at = datetime(2026, 2, 27, 9)
    text = "I'm away from the 28th of March, back on the 2nd."
    assert span(text, at, "on the 2nd") == ("2026-04-02", "2026-04-03")


def test_a_bare_day_restating_the_weekday_and_day_named_before_is_that_day():
    turns = [("Saturday the 28th works for the van.", datetime(2026, 2, 3, 10)),
             ("Great, pencil in the 28th then.", datetime(2026, 2, 3, 10, 5))]
    (_, first), (_, second) = resolve_turns(turns)
    assert first[0].range_start == "2026-02-28"
    assert {m.surface: m.range_start for m in second}["the 28th"] == "2026-02-28"


def test_the_weekday_of_a_stretch_named_before():
    at = datetime(2022, 8, 29, 8, 30)  # a Monday
    turns = [("The cottage is free from the 28th to the 31st of October.", at),
             ("Lovely, I'll take the Monday off work.", at.replace(minute=31))]
    (_, _), (_, second) = resolve_turns(turns)
    assert [(m.surface, m.range_start) for m in second] == [("Monday", "2022-10-31")]
    # the query path reads the same turn with the same discourse
    said = discourses([(1, "c", turns[0][0], turns[0][1]), (2, "c", turns[1][0], turns[1][1])])
    assert said[2].stretch == (date(2022, 10, 28), date(2022, 11, 1))
    assert span("The tournament is the weekend of the 14th of November, with the final on the Sunday.",
                datetime(2026, 9, 1, 12), "Sunday") == ("2026-11-15", "2026-11-16")


def test_that_saturday_is_the_saturday_of_the_weekend_named_before():
    at = datetime(2026, 1, 13, 20, 30)  # a Tuesday
    turns = [("The county rally is the weekend after next, who's driving?", at),
             ("Not me, my cousin is getting married that Saturday.", at.replace(minute=32))]
    (_, first), (_, second) = resolve_turns(turns)
    assert first[0].range_start == "2026-01-24"
    assert [(m.surface, m.range_start) for m in second] == [("Saturday", "2026-01-24")]


def test_a_bare_weekday_without_a_named_day_is_unchanged():
    assert span("Shall we meet on the Friday?", WED, "Friday") == ("2026-02-27", "2026-02-28")


@pytest.mark.parametrize("text,surface,start,end", [
    ("We're camping the weekend of the 21st.", "the weekend of the 21st", "2026-03-21", "2026-03-23"),
    ("The fair is the weekend of the 3rd of May.", "the weekend of the 3rd of May", "2026-05-02", "2026-05-04"),
    ("Let's aim for the last weekend of April.", "for the last weekend of April", "2026-04-25", "2026-04-27"),
    ("Rehearsals start the first weekend in March.", "the first weekend in March", "2026-03-07", "2026-03-09"),
    ("The builders come the week of the 9th.", "the week of the 9th", "2026-03-09", "2026-03-16"),
    ("Can we push it to October next year?", "to October next year", "2027-10-01", "2027-11-01"),
    ("The venue can't do July next year.", "July next year", "2027-07-01", "2027-08-01"),
    ("Your slot is 19/03 at ten.", "19/03", "2026-03-19", "2026-03-20"),
    ("So is September's trip still on?", "September", "2026-09-01", "2026-10-01"),
])
def test_forms(text: str, surface: str, start: str, end: str) -> None:
    assert span(text, WED, surface) == (start, end)


def test_figures_that_are_not_a_day_and_month():
    assert resolve_time_expressions("We offer 24/7 support, and 3/4 of users like it.", WED) == []


@pytest.mark.parametrize("text,surface,start", [
    ("Thank you so much for Saturday, it was perfect.", "Saturday", "2026-02-21"),  # thanked for: it happened
    ("What a match on Sunday! Still buzzing.", "on Sunday", "2026-02-22"),  # exclaimed over: it happened
    ("Her surgery's been brought forward to Friday.", "Friday", "2026-02-27"),  # moved to: still ahead
    ("The shop's going under 😩 we were told on Monday", "on Monday", "2026-02-23"),  # an emoji ends a sentence
])
def test_tense_cues(text: str, surface: str, start: str) -> None:
    assert span(text, WED, surface)[0] == start


def test_a_weekday_and_day_is_the_nearer_such_date_unless_the_tense_finds_one_close():
    at = datetime(2025, 1, 20, 10, 30)  # a Monday
    # told in the past, yet 6 February (a Thursday, 17 days on) is nearer than last June's Thursday the 6th
    assert span("The agency sent over a brief for Thursday the 6th.", at, "Thursday the 6th")[0] == "2025-02-06"
    # told in the past with one close behind: that one (Thursday 16 January)
    assert span("We signed it on Thursday the 16th.", at, "on Thursday the 16th")[0] == "2025-01-16"


def test_a_day_of_the_few_named_before_is_that_day():
    at = datetime(2022, 6, 14, 20, 30)
    turns = [("The regatta has moved to the 10th and 11th of September.", at),
             ("I'm at a wedding on the 10th, sadly.", at.replace(minute=32)),
             ("Could you do just the Sunday?", at.replace(minute=33))]
    _, (_, second), (_, third) = resolve_turns(turns)
    assert [(m.surface, m.range_start) for m in second] == [("on the 10th", "2022-09-10")]
    assert [(m.surface, m.range_start) for m in third] == [("Sunday", "2022-09-11")]


def test_an_ordinal_past_31_is_no_day():
    found = [m.surface for m in resolve_time_expressions("Gran's party is the 80th, and the 31st is a Friday.", WED)]
    assert found == ["the 31st"]


# timeparse/11. Sentences invented for these tests.

def test_a_bare_day_far_off_after_a_coming_month_the_turn_named_is_that_months():
    at = datetime(2024, 5, 6, 18)  # a Monday in May
    text = "Still flying back in July, tickets are sorted, I get into Leeds on the 20th."
    assert span(text, at, "on the 20th") == ("2024-07-20", "2024-07-21")


def test_a_month_told_as_past_or_a_part_of_a_month_leaves_a_bare_day_its_own():
    at = datetime(2023, 1, 10, 18)
    # December is behind: the 4th is the coming one (February's, the 4th of January being past)
    text = "The quiz never happened in December, so the first one back on the 4th?"
    assert span(text, at, "on the 4th") == ("2023-02-04", "2023-02-05")
    at = datetime(2025, 5, 12, 18)  # the end of May is a third of a month, not the month: the coming 7th
    text = "The venue shuts at the end of May, so the show on the 7th is cancelled."
    assert span(text, at, "on the 7th") == ("2025-06-07", "2025-06-08")
    at = datetime(2025, 5, 12, 18)  # a day set against the month named before it ("but") stays this month's
    text = "We're off to Spain in August, but the plumber comes on the 15th."
    assert span(text, at, "on the 15th") == ("2025-05-15", "2025-05-16")


def _turns(*texts: str, at: datetime, gap_minutes: int = 1):
    from datetime import timedelta
    return resolve_turns([(t, at + timedelta(minutes=gap_minutes * i)) for i, t in enumerate(texts)])


def _found(resolved, turn: int, surface: str):
    ms = {m.surface: (m.range_start, m.range_end) for m in resolved[turn][1]}
    assert surface in ms, ms
    return ms[surface]


def test_a_day_an_earlier_turn_named_is_no_anchor_for_a_far_bare_day():
    # tried at stop 37 and dropped (it broke a span of twelve fresh conversations): the turn's own reading holds
    at = datetime(2023, 11, 3, 21)  # the 16th of November is 13 days off
    got = _turns("My flight is booked for December 14.", "Lovely. Dinner at my aunt's on the 16th then?", at=at)
    assert _found(got, 1, "on the 16th") == ("2023-11-16", "2023-11-17")


def test_a_bare_day_the_sitting_did_not_name_close_by_stays_its_own():
    at = datetime(2023, 11, 3, 21)
    # the 28th is not in or just after the 14th: the coming 28th (November's)
    got = _turns("My flight is booked for December 14.", "Can we talk about the budget on the 28th?", at=at)
    assert _found(got, 1, "on the 28th") == ("2023-11-28", "2023-11-29")
    # a deadline is the coming such day
    got = _turns("My flight is booked for December 14.", "Send me the forms by the 16th.", at=at)
    assert _found(got, 1, "the 16th") == ("2023-11-16", "2023-11-17")
    # another sitting: what the first one named no longer holds
    got = _turns("My flight is booked for December 14.", "Dinner at my aunt's on the 16th then?", at=at, gap_minutes=60 * 24)
    assert _found(got, 1, "on the 16th") == ("2023-11-16", "2023-11-17")


def test_a_past_tense_day_and_month_a_year_back_but_soon_ahead_is_the_coming_one():
    at = datetime(2025, 11, 3, 10)
    assert span("I was flying out on the 12th of December for a week.", at, "on the 12th of December") == (
        "2025-12-12", "2025-12-13")
    assert span("They invited me to an interview on 4 February!", datetime(2026, 1, 12, 10), "on 4 February") == (
        "2026-02-04", "2026-02-05")


def test_a_past_tense_day_and_month_close_behind_or_far_ahead_stays_past():
    at = datetime(2025, 11, 3, 10)
    # five months back: the past one
    assert span("I moved in on the 2nd of June.", at, "on the 2nd of June") == ("2025-06-02", "2025-06-03")
    # the coming one five months ahead is too far: the past one
    assert span("I started there on the 1st of April.", at, "on the 1st of April") == ("2025-04-01", "2025-04-02")
    # a year given is kept
    assert span("I was flying out on the 12th of December 2024.", at, "on the 12th of December 2024") == (
        "2024-12-12", "2024-12-13")


def test_a_capitalised_word_in_ed_inside_a_sentence_is_a_name_not_a_past():
    at = datetime(2022, 9, 7, 20)  # a Wednesday
    assert span("we're doing Flooded Keep on Sunday", at, "on Sunday") == ("2022-09-11", "2022-09-12")
    # a past verb still makes it the last one, and so does a capitalised one opening the sentence
    assert span("we finished Flooded Keep on Sunday", at, "on Sunday") == ("2022-09-04", "2022-09-05")
    assert span("Finished the whole book on Sunday!", at, "on Sunday") == ("2022-09-04", "2022-09-05")


def test_as_of_a_weekday_with_no_tense_is_the_nearer_one():
    at = datetime(2025, 3, 3, 8)  # a Monday: Friday the 28th is nearer than Friday the 7th
    assert span("As of Friday, the bakery is officially a limited company.", at, "Friday") == ("2025-02-28", "2025-03-01")
    # a tense still decides: the coming one
    assert span("As of Friday, I will be working from home.", at, "Friday") == ("2025-03-07", "2025-03-08")
