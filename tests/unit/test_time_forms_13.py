"""Date forms read since timeparse/13: an ordinal weekday or weekend of a month without "the" ("Last Friday in
July", "first weekend of june"), "a week last Saturday" (British: a week before the latest Saturday), "the
Easter weekend" (its Saturday and Sunday) and a bare month opening a stretch ("covers August to October").
Sentences invented for these tests; negatives included."""
from __future__ import annotations

from datetime import datetime, timezone

from app.domain.layers.timeparse import resolve_time_expressions


def spans(text: str, at: datetime) -> list[tuple[str, str | None, str | None]]:
    return [(m.surface, m.range_start, m.range_end) for m in resolve_time_expressions(text, at)]


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
