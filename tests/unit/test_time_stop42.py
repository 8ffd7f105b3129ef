"""What the time resolver reads since timeparse/16: a holiday told in the past tense whose past reading is most of
a year back while the coming one is a few months off is the coming one ("she invited me for Christmas", said in
November), as a month or a day and month already was, but not one that was the time of a past act ("got engaged on
Paddy's Day", "spent Christmas there"); a rota is an arrangement ("rostered on Christmas Day"); "didn't", "wasn't", "weren't" and "hadn't" tell a past; a
season after "since" is behind and one after "till" is a time (ahead, unless told in the past); a month that is also
a name or a verb (April, June, August, March, May), capitalised, is a month where it is offered as a choice ("May
works!", "June is even better", "Probably May, when ...") or before "or" and another month ("March or April"), and
not where it can be a person ("Thanks, June.", "June is fine, thanks"); a month before "I" ("So September I can
still conduct") is a month; "next summer" is the one after this year's; "the Monday" of a day named before is the
nearer one either side, or the one inside a stretch, or after another weekday the turn named. Sentences invented for
these tests; negatives included."""
from __future__ import annotations

from datetime import datetime

from tests.unit.layers_generalise_support import at, span_of, time_spans as spans


def words_read(text: str, when: datetime) -> list[str]:
    return [w for w, _, _ in spans(text, when)]


def test_a_holiday_arranged_in_the_past_tense_is_the_coming_one_when_the_last_one_is_far_back():
    nov_2023 = at(2023, 11, 6)
    assert span_of("christmas", "The Oyelowos invited me for christmas, so I'm staying.", nov_2023) == \
        ("2023-12-25", "2023-12-26")
    assert span_of("Christmas Day", "Plans changed: Tomas got rostered on Christmas Day and the 27th.", at(2024, 12, 16)) \
        == ("2024-12-25", "2024-12-26")
    assert span_of("the 27th", "Plans changed: Tomas got rostered on Christmas Day and the 27th.", at(2024, 12, 16)) \
        == ("2024-12-27", "2024-12-28")
    assert span_of("Christmas", "Rent's paid till Christmas, then who knows.", at(2023, 11, 26)) == \
        ("2023-12-25", "2023-12-26")
    # the past one close behind stays the past one, and "last" settles it
    assert span_of("Christmas", "Christmas was lovely, the kids loved the snow.", at(2024, 1, 9)) == \
        ("2023-12-25", "2023-12-26")
    assert span_of("Easter", "We went to the coast last Easter.", at(2025, 2, 3)) == ("2024-03-31", "2024-04-01")
    # the holiday as the time a past act took place stays the past one
    assert span_of("Paddy's Day", "Saoirse and I got engaged on Paddy's Day!", at(2025, 2, 10)) == \
        ("2024-03-17", "2024-03-18")
    assert span_of("Christmas", "We spent Christmas at my sister's, it was lovely.", at(2024, 12, 10)) == \
        ("2023-12-25", "2023-12-26")


def test_a_negated_past_auxiliary_tells_a_past():
    assert span_of("Christmas", "Christmas at my aunt's didn't happen in the end, Rory got chickenpox.",
                   at(2026, 1, 12)) == ("2025-12-25", "2025-12-26")
    assert span_of("1 March", "Update: I didn't make 1 March, work has been eating my evenings.", at(2025, 3, 4)) == \
        ("2025-03-01", "2025-03-02")
    assert span_of("Monday", "He wasn't told till Monday, typical.", at(2023, 10, 12)) == ("2023-10-09", "2023-10-10")


def test_a_season_after_since_is_behind_and_after_till_is_a_time():
    march_2025 = at(2025, 3, 3)
    assert span_of("since the autumn", "Thank you, I've been asking for one since the autumn!", march_2025) == \
        ("2024-09-01", "2024-12-01")
    assert span_of("since the summer", "We've been together since the summer.", at(2023, 12, 4)) == \
        ("2023-06-01", "2023-09-01")
    # before the season has come round again, "since" still means the last one
    assert span_of("since the fall", "I haven't played there since the fall.", at(2025, 6, 2)) == \
        ("2024-09-01", "2024-12-01")
    assert span_of("till the autumn", "The trip can wait till the autumn.", at(2025, 3, 27)) == \
        ("2025-09-01", "2025-12-01")
    assert span_of("till the summer", "I'll captain it, sure, till the summer at least.", at(2026, 2, 17)) == \
        ("2026-06-01", "2026-09-01")


def test_a_month_that_is_also_a_name_is_a_month_where_it_is_offered():
    feb_2025 = at(2025, 2, 19)
    assert span_of("June", "June is even better, the whole town parties on the 23rd.", feb_2025) == \
        ("2025-06-01", "2025-07-01")
    # ... and the bare day after it is of that month
    assert span_of("the 23rd", "June is even better, the whole town parties on the 23rd.", feb_2025) == \
        ("2025-06-23", "2025-06-24")
    assert span_of("May", "May works! I'll book once I know my leave.", at(2024, 9, 29)) == ("2025-05-01", "2025-06-01")
    assert span_of("May", "That's the plan. Probably May, when Dai is fit again.", at(2024, 1, 14)) == \
        ("2024-05-01", "2024-06-01")
    assert span_of("August", "August is fine for me, term ends on the 11th of July.", at(2025, 1, 19)) == \
        ("2025-08-01", "2025-09-01")
    assert span_of("March", "March or April would suit me best.", at(2024, 9, 16)) == ("2025-03-01", "2025-04-01")
    assert span_of("April", "March or April would suit me best.", at(2024, 9, 16)) == ("2025-04-01", "2025-05-01")
    assert span_of("September", "So September I can still conduct.", at(2025, 3, 4)) == ("2025-09-01", "2025-10-01")


def test_a_month_that_is_also_a_name_is_not_read_where_it_can_be_a_person():
    when = at(2025, 2, 19)
    for text in ("Thanks, June.", "June is fine, thanks for asking.", "May I ask you something?",
                 "April said she'd bring the cake.", "I told June about the flat.", "Hi August, how's the new job?",
                 "Maybe June can drive us."):
        assert words_read(text, when) == [], text


def test_next_season_is_the_one_after_this_years():
    may_2024 = at(2024, 5, 13)
    # in May the coming summer is "this summer"; "next summer" is a year on
    assert span_of("next summer", "Maybe we can do the cruise next summer instead.", may_2024) == \
        ("2025-06-01", "2025-09-01")
    assert span_of("this summer", "We're doing the cruise this summer.", may_2024) == ("2024-06-01", "2024-09-01")
    assert span_of("this coming summer", "We're doing the cruise this coming summer.", may_2024) == \
        ("2024-06-01", "2024-09-01")
    # once this year's is over, "next" is the coming one
    assert span_of("next summer", "Next summer we'll go back.", at(2024, 10, 2)) == ("2025-06-01", "2025-09-01")
    assert span_of("next spring", "The conference is next spring.", at(2023, 11, 6)) == ("2024-03-01", "2024-06-01")
    # winter: in January "this winter" began in December, so "next winter" is the one starting in December
    assert span_of("next winter", "We'll put the heat pump in before next winter.", at(2025, 1, 20)) == \
        ("2025-12-01", "2026-03-01")


def test_the_weekday_of_a_day_named_before_is_the_nearer_one_either_side():
    feb_2025 = at(2025, 2, 3)
    text = "Her vaccinations are now on Tuesday 11 February. I'll remind you on the Monday."
    assert span_of("Monday", text, feb_2025) == ("2025-02-10", "2025-02-11")  # the day before, not a week on
    text = "The recital moves to Sunday the 14th because there's a wedding on the Saturday."
    assert span_of("Saturday", text, at(2024, 4, 8)) == ("2024-04-13", "2024-04-14")
    # inside a stretch named before, the one in it
    text = "We're away from the 12th to the 16th of August, back on the Thursday."
    assert span_of("Thursday", text, at(2025, 7, 1)) == ("2025-08-14", "2025-08-15")
    # a day told after another weekday of the turn is after it
    text = "The wedding is on Saturday the 14th of September. We'd get there on the Thursday and leave on the Monday."
    assert span_of("Thursday", text, at(2024, 3, 11)) == ("2024-09-12", "2024-09-13")
    assert span_of("Monday", text, at(2024, 3, 11)) == ("2024-09-16", "2024-09-17")
