"""What the time resolver reads since timeparse/20: a day named with its weekday ("Thursday the 17th") is a day a
later bare "the 17th" takes up, as one named with its month is: the weekday picked its month. Read ahead, with
nothing in the later turn to count from; a day told as past stays the nearest behind. Sentences invented for
these tests."""
from __future__ import annotations

from datetime import datetime

from app.domain.layers.timeparse import TimeMention
from app.domain.layers.timeturns import named_day, resolve_turns


def spans(turns: list[tuple[str, datetime]]) -> list[dict[str, tuple[str | None, str | None]]]:
    return [{m.surface: (m.range_start, m.range_end) for m in found} for _, found in resolve_turns(turns)]


SUNDAY = datetime(2025, 3, 16, 10)  # 17 April 2025 is a Thursday; 17 March is a Monday


def test_a_bare_day_takes_up_the_day_a_weekday_named():
    got = spans([("I land in Orrin on Thursday the 17th and fly home on the 24th.", SUNDAY),
                 ("Lovely, the spare room is yours. See you on the 17th!", SUNDAY.replace(hour=11))])
    assert got[0]["on Thursday the 17th"] == ("2025-04-17", "2025-04-18")
    assert got[1]["on the 17th"] == ("2025-04-17", "2025-04-18")  # not 17 March, the nearest 17th


def test_in_a_later_sitting_too_and_short_weekday_names():
    got = spans([("The fitting is Thu 17th, 10am.", datetime(2025, 3, 10, 9)),  # 17 March is a Monday
                 ("Still on for the 17th?", datetime(2025, 3, 12, 18))])
    assert got[0]["Thu 17th"] == ("2025-04-17", "2025-04-18")
    assert got[1]["the 17th"] == ("2025-04-17", "2025-04-18")  # not 17 March, the nearest 17th


def test_without_a_weekday_a_bare_day_is_no_day_to_take_up():
    got = spans([("I land on the 17th.", SUNDAY), ("See you on the 17th!", SUNDAY.replace(hour=11))])
    assert got[1]["on the 17th"] == ("2025-03-17", "2025-03-18")


def test_a_day_told_as_past_stays_the_nearest_behind():
    got = spans([("I land in Orrin on Thursday the 17th.", SUNDAY),
                 ("Oh and the boiler man came on the 17th, all fixed.", datetime(2025, 3, 20, 9))])
    assert got[1]["on the 17th"] == ("2025-03-17", "2025-03-18")


def test_named_day_reads_the_mention_words():
    def m(surface: str) -> TimeMention:
        return TimeMention(surface, 0, len(surface), "absolute", True, "2025-04-17", "2025-04-17", "2025-04-18", "day")
    assert named_day(m("Thursday the 17th")) is not None and named_day(m("Thu 17th")) is not None
    assert named_day(m("the 17th")) is None


def test_a_turn_is_scanned_once_and_what_it_hands_back_cannot_be_changed():
    from app.domain.layers.timeparse import find_time_expressions, resolve_time_expressions

    text = "Booked the hall for Saturday the 9th, and the caterer comes the day before."
    first = find_time_expressions(text)
    assert isinstance(first, tuple) and [t[2] for t in first] == ["Saturday the 9th", "the day before"]
    hits = find_time_expressions.cache_info().hits
    again = find_time_expressions(text)
    assert again is first and find_time_expressions.cache_info().hits == hits + 1
    # read again with another discourse (as a query's context does), the scan is not repeated
    resolve_time_expressions(text, datetime(2025, 11, 3, 9))
    assert find_time_expressions.cache_info().hits == hits + 2


def test_a_weekday_day_far_from_the_turn_is_of_the_month_in_view():
    said = datetime(2027, 3, 2, 10)  # 23 January 2027 was a Saturday, so is 23 October
    got = spans([("October's quieter for us. Saturday 23rd to Saturday 30th?", said)])[0]
    assert got["Saturday 23rd to Saturday 30th"] == ("2027-10-23", "2027-10-31")
    got = spans([("The Larkfield fair opens on the 8th of July.", datetime(2023, 5, 9, 10)),
                 ("Lovely, I'll keep Friday the 14th free.", datetime(2023, 5, 9, 11))])[1]
    assert got["Friday the 14th"] == ("2023-07-14", "2023-07-15")  # 14 April was a Friday too, but it has gone


def test_a_weekday_day_coming_within_the_month_stands():
    # 28 February and 28 March 2026 are both Saturdays; the coming one, 25 days ahead, is meant
    got = spans([("We move in March, so can you pack us up on Saturday the 28th?", datetime(2026, 2, 3, 10))])[0]
    assert got["on Saturday the 28th"] == ("2026-02-28", "2026-03-01")


def test_a_year_said_alone_is_that_year():
    at_ = datetime(2025, 4, 7, 12)
    got = spans([("Yep, graduated 2017 and I've been on the ward ever since. Bookings for 2026 open in May.", at_)])[0]
    assert got["2017"] == ("2017-01-01", "2018-01-01") and got["2026"] == ("2026-01-01", "2027-01-01")


def test_a_figure_a_code_a_vintage_or_a_stretch_of_years_is_no_year():
    at_ = datetime(2025, 4, 7, 12)
    for text in ("The gate code is 1948.", "Room 2011, second floor.", "I wrote about 2000 words today.",
                 "Two cases of the Ribeira Reserva 2019 please.", "We lived there from 1990 to 2020.", "It cost £2019."):
        assert not [m for m in spans([(text, at_)])[0] if "19" in m or "20" in m], text


def test_a_stretch_after_a_noun_in_change_is_one_stretch():
    got = spans([("Changeover is on Saturdays, so it would be Saturday 31 July to Saturday 7 August.",
                  datetime(2027, 1, 18, 10))])[0]
    assert got["Saturday 31 July to Saturday 7 August"] == ("2027-07-31", "2027-08-08")
    got = spans([("The class is moving from the 26th to Tuesday 1 April.", datetime(2025, 3, 3, 10))])[0]
    assert "the 26th" in got and "Tuesday 1 April" in got  # a date moved to another: two dates


def test_april_june_and_august_alone_are_months():
    at_ = datetime(2025, 4, 7, 12)  # a Monday
    got = spans([("Noted, no promises on June. I can't do August anyway.", at_)])[0]
    assert got["June"] == ("2025-06-01", "2025-07-01") and got["August"] == ("2025-08-01", "2025-09-01")
    assert spans([("so what, June?", at_)])[0]["June"] == ("2025-06-01", "2025-07-01")


def test_a_person_called_june_is_no_month():
    at_ = datetime(2025, 4, 7, 12)
    for text in ("June said she'd bring the cake.", "I had lunch with June yesterday.", "Aunt June is coming over.",
                 "I met June Okafor at the gallery.", "June's mum runs the bakery.", "Thanks, June.",
                 "June is fine, thanks for asking.", "Maybe June can drive us."):
        assert "June" not in spans([(text, at_)])[0], text
