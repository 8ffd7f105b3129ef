"""What the time resolver reads since timeparse/15: a month or season named without its year whose past reading
is most of a year back while the coming one is a few months off is the coming one, as a day and month already was
("rebooked the caravan for September", said in June); "from <month>" is the coming one unless told in the past; a
month before a record ("the October invoices", "the April meeting") is the nearer one unless told as future; a
season before an event or a schedule ("the spring concert", "a summer internship") is a time, a season before a
thing or a name is not; a bare day number after a date named with its month in the same turn is of that month
even close to the turn ("Saturday the 7th of June, or the 21st"), unless it falls in the days just before that
date ("keys on the 1st of March, my pass lapses on the 28th"); a coming month named before it (not set against it
"in August, but ... the 15th") likewise; a day number before an auxiliary or a sentence adverb ("the 3rd has no
clashes") is a day; "the weekend" suggested ("Maybe at the weekend?") or run up to ("till the weekend") is the coming
one. Sentences invented for these tests; negatives included."""
from __future__ import annotations

from tests.unit.layers_generalise_support import at, span_of, time_spans as spans


def test_a_month_or_season_told_in_the_past_tense_is_the_coming_one_when_the_last_one_is_far_back():
    june_2025 = at(2025, 6, 10)
    assert span_of("September", "We rebooked the caravan for September instead.", june_2025) == ("2025-09-01", "2025-10-01")
    assert span_of("july", "The release slipped to july, sadly.", june_2025) == ("2025-07-01", "2025-08-01")
    assert span_of("end of August", "Ravi said it would be done by the end of August.", june_2025) == \
        ("2025-08-21", "2025-09-01")
    # a past one close behind stays the past one, and a stated year or "last" settles it
    assert span_of("April", "We moved the shop in April.", june_2025) == ("2025-04-01", "2025-05-01")
    assert span_of("last September", "We rebooked it for last September.", june_2025) == ("2024-09-01", "2024-10-01")
    assert span_of("September 2024", "We played there in September 2024.", june_2025) == ("2024-09-01", "2024-10-01")
    # said "in" a past sentence with nothing still to come, or beside a stated year, it stays the past one
    assert span_of("September", "I joined the residents' association in September.", june_2025) == \
        ("2024-09-01", "2024-10-01")
    assert span_of("July", "Their 2024 campaign launched in July.", june_2025) == ("2024-07-01", "2024-08-01")
    assert span_of("in January", "Ravi said it would be in January.", at(2025, 9, 20)) == ("2026-01-01", "2026-02-01")
    # "since" is always behind
    assert span_of("the autumn", "I haven't played there since the autumn.", june_2025) == ("2024-09-01", "2024-12-01")


def test_from_a_month_is_the_coming_one_unless_told_in_the_past():
    march_2025 = at(2025, 3, 12)
    assert span_of("from September", "I'm teaching one day a week from September.", march_2025) == \
        ("2025-09-01", "2025-10-01")
    assert span_of("from October", "Two nurseries near you have places from October.", march_2025) == \
        ("2025-10-01", "2025-11-01")
    # told in the past, it is the nearer one
    assert span_of("from September", "I worked nights there from September.", march_2025) == ("2024-09-01", "2024-10-01")


def test_from_a_month_as_a_comparison_or_opening_a_stretch_is_not_a_start():
    june_2024 = at(2024, 6, 10)
    assert span_of("April", "Expenses in May were down 15% from April's total.", june_2024) == ("2024-04-01", "2024-05-01")
    assert span_of("August", "Views in October were up 35% from August.", at(2024, 11, 18)) == ("2024-08-01", "2024-09-01")
    assert span_of("from April", "My scores improved after practising from April to July.", at(2024, 8, 10)) == \
        ("2024-04-01", "2024-08-01")


def test_a_month_before_a_record_is_the_nearer_one_unless_told_as_future():
    nov_2024 = at(2024, 11, 25)
    assert span_of("October", "Can you send me the October takings by Friday?", nov_2024) == ("2024-10-01", "2024-11-01")
    may_2023 = at(2023, 5, 2)
    assert span_of("April", "Good news from the April meeting: the plot is yours.", may_2023) == ("2023-04-01", "2023-05-01")
    # told as future, it stays the coming one
    assert span_of("September", "Shall I check their September availability?", at(2025, 3, 9)) == \
        ("2025-09-01", "2025-10-01")


def test_a_season_before_an_event_is_a_time_and_before_a_thing_or_a_name_is_not():
    feb_2026 = at(2026, 2, 3)
    assert span_of("spring", "We'll miss her at the spring concert.", feb_2026) == ("2026-03-01", "2026-06-01")
    assert span_of("summer", "I've got a summer internship lined up.", feb_2026) == ("2026-06-01", "2026-09-01")
    for text in ("I need new winter tyres.", "Chop two spring onions.", "The Harbour Spring Regatta is on.",
                 "The summer house needs paint."):
        assert not [w for w, _, _ in spans(text, feb_2026) if "spring" in w.lower() or "summer" in w.lower()
                    or "winter" in w.lower()], text


def test_a_bare_day_after_a_date_named_in_the_turn_is_of_its_month_even_near_the_turn():
    may_2025 = at(2025, 5, 19)
    assert span_of("the 21st", "I've got Saturday the 7th of June free, or the 21st.", may_2025) == \
        ("2025-06-21", "2025-06-22")
    assert span_of("the 24th", "I turn 60 on the 3rd of July and you turn 30 on the 24th.", at(2025, 2, 16)) == \
        ("2025-07-24", "2025-07-25")
    # a coming month named before it likewise, even when the turn's own month has that day ahead
    assert span_of("the 26th", "The market moves to Saturdays in July, so we're doing the 26th.", at(2025, 6, 23)) == \
        ("2025-07-26", "2025-07-27")
    # ... unless it falls in the days just before that date: the turn's own month
    assert span_of("the 28th", "Keys from the 1st of March, and my pass lapses on the 28th.", at(2026, 2, 25)) == \
        ("2026-02-28", "2026-03-01")
    # a day named without its month gives no month: a day near the turn stays the turn's month's
    assert span_of("the 12th", "Handed my notice in on Monday, last shift's the 12th.", at(2022, 11, 2)) == \
        ("2022-11-12", "2022-11-13")


def test_a_suggestion_or_a_stretch_up_to_the_weekend_is_the_coming_weekend():
    tue = at(2024, 10, 15)  # a Tuesday: with no tense, "the weekend" is the nearer one, the one just gone
    assert span_of("the weekend", "Maybe at the weekend?", tue) == ("2024-10-19", "2024-10-21")
    assert span_of("the weekend", "How about a walk at the weekend?", tue) == ("2024-10-19", "2024-10-21")
    assert span_of("the weekend", "Mum's here till the weekend anyway.", tue) == ("2024-10-19", "2024-10-21")
    # told in the past, or with no sign either way, it stays the nearer one
    assert span_of("the weekend", "Maybe it was at the weekend that we met.", tue) == ("2024-10-12", "2024-10-14")
    assert span_of("the weekend", "Sixty orders over the weekend!", tue) == ("2024-10-12", "2024-10-14")


def test_a_day_number_before_an_auxiliary_a_negation_or_a_sentence_adverb_is_a_day():
    nov_2024 = at(2024, 11, 25)  # a Monday
    assert span_of("The 3rd", "The 3rd has no clashes, so let's book it.", nov_2024) == ("2024-12-03", "2024-12-04")
    assert span_of("the 10th", "Sorry, the 10th won't work for me.", nov_2024) == ("2024-12-10", "2024-12-11")
    assert span_of("the 28th", "I can't do the 28th sadly.", nov_2024) == ("2024-11-28", "2024-11-29")
    assert span_of("the 29th", "Are you free? I've got the 29th off work.", nov_2024) == ("2024-11-29", "2024-11-30")
    # before a noun it is an ordinal, not a day
    for text in ("Her office is on the 10th floor.", "It was the 3rd time he'd called.", "Happy 5th birthday!"):
        assert not [w for w, _, _ in spans(text, nov_2024) if any(ch.isdigit() for ch in w)], text
