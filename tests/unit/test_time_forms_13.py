"""Date forms read since timeparse/13: an ordinal weekday or weekend of a month without "the" ("Last Friday in
July", "first weekend of june"), "a week last Saturday" (British: a week before the latest Saturday), "the
Easter weekend" (its Saturday and Sunday) and a bare month opening a stretch ("covers August to October").
Sentences invented for these tests; negatives included."""
from __future__ import annotations

from datetime import datetime, timezone

from tests.unit.layers_generalise_support import time_spans as spans

THU_2_MAY_2024 = datetime(2024, 5, 2, 12, tzinfo=timezone.utc)


def test_an_ordinal_weekday_or_weekend_of_a_month_needs_no_the():
    assert spans("Last Friday in July works for the leaving do.", THU_2_MAY_2024) == [
        ("Last Friday in July", "2024-07-26", "2024-07-27")]
    assert spans("how about first weekend of june?", THU_2_MAY_2024) == [
        ("first weekend of june", "2024-06-01", "2024-06-03")]
    assert spans("Second week of June is booked.", THU_2_MAY_2024) == [("Second week of June", "2024-06-08", "2024-06-15")]
    # "last Friday" alone is still the latest Friday, and a month after it in another phrase is its own
    assert spans("I rang them last Friday.", THU_2_MAY_2024) == [("last Friday", "2024-04-26", "2024-04-27")]


def test_a_week_last_saturday_is_a_week_before_the_latest_saturday():
    assert spans("The boiler packed in a week last Saturday.", THU_2_MAY_2024) == [
        ("a week last Saturday", "2024-04-20", "2024-04-21")]
    assert spans("We met a fortnight last Friday.", THU_2_MAY_2024) == [
        ("a fortnight last Friday", "2024-04-12", "2024-04-13")]
    # the forward form is unchanged: a week after the coming Saturday
    assert spans("Dinner a week on Saturday?", THU_2_MAY_2024) == [("a week on Saturday", "2024-05-11", "2024-05-12")]


def test_the_easter_weekend_is_its_saturday_and_sunday():
    march = datetime(2024, 3, 10, 12, tzinfo=timezone.utc)
    assert spans("The pharmacy is closed over the Easter weekend.", march) == [
        ("over the Easter weekend", "2024-03-30", "2024-04-01")]
    # told as past after this year's Easter: this year's, before it: last year's
    assert spans("We went to the coast for the Easter weekend.", THU_2_MAY_2024) == [
        ("for the Easter weekend", "2024-03-30", "2024-04-01")]
    assert spans("We went to the coast for the Easter weekend.", march) == [
        ("for the Easter weekend", "2023-04-08", "2023-04-10")]
    # Easter Sunday alone is still the one day
    assert spans("Lunch on Easter Sunday?", march) == [("on Easter Sunday", "2024-03-31", "2024-04-01")]


def test_a_bare_month_opening_a_stretch_to_another_is_the_stretch():
    aug = datetime(2024, 8, 28, 12, tzinfo=timezone.utc)
    assert spans("Your first return covers August to October.", aug) == [("August to October", "2024-08-01", "2024-11-01")]
    assert spans("I'm away from August to October.", aug) == [("from August to October", "2024-08-01", "2024-11-01")]
    # a month that is a name stays a name: nothing here is a date
    assert spans("Tell May to come round.", aug) == []
    assert spans("August was hot.", aug) == []


MON_3_FEB_2025 = datetime(2025, 2, 3, 12, tzinfo=timezone.utc)


def test_a_stretch_of_days_with_their_weekdays_or_joined_by_and():
    assert spans("We're away Saturday 19th to Saturday 26th July.", MON_3_FEB_2025) == [
        ("Saturday 19th to Saturday 26th July", "2025-07-19", "2025-07-27")]
    assert spans("Tuesday 11 to Thursday 13 February works.", MON_3_FEB_2025) == [
        ("Tuesday 11 to Thursday 13 February", "2025-02-11", "2025-02-14")]
    assert spans("Booked 30 and 31 May.", MON_3_FEB_2025) == [("30 and 31 May", "2025-05-30", "2025-06-01")]
    # two days apart are two days; a date moved to another is two dates; a plot number is no day
    assert spans("Booked 3 and 10 May.", MON_3_FEB_2025) == [("10 May", "2025-05-10", "2025-05-11")]
    assert [s for s, _, _ in spans("The class is moving from the 26th to Tuesday 1 April.", MON_3_FEB_2025)] == [
        "the 26th", "Tuesday 1 April"]
    assert spans("You keep plot 14 until the 30th of September.", MON_3_FEB_2025) == [
        ("the 30th of September", "2025-09-30", "2025-10-01")]


def test_a_weekday_of_last_or_next_week_and_the_first_or_last_weeks_of_a_month():
    assert spans("It broke Wednesday last week.", MON_3_FEB_2025) == [("Wednesday last week", "2025-01-29", "2025-01-30")]
    assert spans("Let's say Friday next week.", MON_3_FEB_2025) == [("Friday next week", "2025-02-14", "2025-02-15")]
    assert spans("We'll be in Crete the last two weeks of July.", MON_3_FEB_2025) == [
        ("the last two weeks of July", "2025-07-18", "2025-08-01")]
    assert spans("The first three weeks of March are busy.", MON_3_FEB_2025) == [
        ("The first three weeks of March", "2025-03-01", "2025-03-22")]


def test_holidays_said_short_computed_or_with_their_year_in_words():
    dec = datetime(2024, 12, 3, 12, tzinfo=timezone.utc)
    assert spans("we're shut over xmas", dec) == [("xmas", "2024-12-25", "2024-12-26")]
    assert spans("Black Friday is coming", MON_3_FEB_2025) == [("Black Friday", "2025-11-28", "2025-11-29")]
    assert spans("Black Friday last year was huge", dec) == [("Black Friday last year", "2023-11-24", "2023-11-25")]
    assert spans("Christmas next year at ours?", dec) == [("Christmas next year", "2025-12-25", "2025-12-26")]
    assert spans("Invoices by end of the month please.", MON_3_FEB_2025) == [
        ("by end of the month", "2025-02-21", "2025-03-01")]
    # "last year" alone is still the year
    assert spans("We did it last year.", dec) == [("last year", "2023-01-01", "2024-01-01")]


def test_a_stretch_to_a_bare_day_ends_on_the_first_such_day_after_its_start():
    dec = datetime(2024, 12, 3, 12, tzinfo=timezone.utc)
    assert spans("We close from Christmas Eve to the 2nd.", dec) == [("Christmas Eve to the 2nd", "2024-12-24", "2025-01-03")]
    # a day and a weekday keep their own readings
    assert spans("Friday to Monday", dec) == [("Friday to Monday", "2024-12-06", "2024-12-10")]


def test_that_whole_week_is_the_week_named_before():
    assert spans("The scope's booked from the 1st of April, so that whole week is out.", MON_3_FEB_2025) == [
        ("the 1st of April", "2025-04-01", "2025-04-02"), ("that whole week", "2025-03-31", "2025-04-07")]
    assert spans("I was on call that whole week.", MON_3_FEB_2025) == []  # nothing named before it


TUE_2_JUL_2024 = datetime(2024, 7, 2, 12, tzinfo=timezone.utc)


def test_a_day_number_without_the_where_chat_drops_it():
    assert spans("13th is good. I can do the inspections", TUE_2_JUL_2024) == [("13th", "2024-07-13", "2024-07-14")]
    assert spans("yep first session 7th, she's bought a suit", TUE_2_JUL_2024) == [("7th", "2024-07-07", "2024-07-08")]
    assert spans("8th's no good, the 15th?", TUE_2_JUL_2024) == [
        ("8th", "2024-07-08", "2024-07-09"), ("the 15th", "2024-07-15", "2024-07-16")]
    # a place, a rank, a list of places or a noun after it: no day
    for text in ("my 13th birthday", "it's on the 5th floor", "he came 3rd in the race", "I'm 5th in the queue",
                 "2nd, 3rd and 4th places", "the 21st century", "1st class post"):
        assert spans(text, TUE_2_JUL_2024) == [], text


def test_more_stretches_and_a_weekday_said_short():
    assert spans("so 13th/14th then", TUE_2_JUL_2024) == [("13th/14th", "2024-07-13", "2024-07-15")]
    assert spans("7th to the 16th of October, six shows", TUE_2_JUL_2024) == [
        ("7th to the 16th of October", "2024-10-07", "2024-10-17")]
    assert spans("Field days Tue 14 to Thu 16 May", MON_3_FEB_2025) == [("Tue 14 to Thu 16 May", "2025-05-14", "2025-05-17")]
    assert spans("Leeds Sat 8th, Manchester Sun 9th", datetime(2024, 6, 1, 12, tzinfo=timezone.utc)) == [
        ("Sat 8th", "2024-06-08", "2024-06-09"), ("Sun 9th", "2024-06-09", "2024-06-10")]
    assert spans("The Sun is out", TUE_2_JUL_2024) == []


def test_two_weekdays_before_a_plural_part_of_day_recur():
    assert spans("The club plays on Tuesday and Thursday mornings.", TUE_2_JUL_2024) == []
    assert spans("Monday, Wednesday or Friday evenings suit me.", TUE_2_JUL_2024) == []


def test_a_stretch_of_months_by_a_dash_and_a_school_grade_is_no_day():
    march = datetime(2024, 3, 2, 12, tzinfo=timezone.utc)
    assert spans("#### Q2 (April - June) - collect the data", march) == [("April - June", "2024-04-01", "2024-07-01")]
    assert spans("Script finalisation (March - April)", march) == [("March - April", "2024-03-01", "2024-05-01")]
    assert spans("a score of around 7th to 8th grade reading level", march) == []
    assert spans("her 8th grade teacher", march) == []
