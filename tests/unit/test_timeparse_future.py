"""Future-oriented time resolution: the tense of the clause decides which way a bare month, day,
weekday, season or holiday points; a plan or a present-tense schedule reads forward."""
from __future__ import annotations

from datetime import datetime

import pytest

from app.domain.layers.timeparse import resolve_time_expressions, sentence_tense
from app.domain.timeexpr import asks_about_future, resolve_time_window

SAT_20_MAY = datetime(2023, 5, 20, 18, 0)  # a Saturday
TUE_4_JUN_2024 = datetime(2024, 6, 4, 9, 0)


def one(text: str, base: datetime):
    found = [m for m in resolve_time_expressions(text, base) if m.resolved]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("text, start, end", [
    ("I'm moving at the end of May.", "2023-05-21", "2023-06-01"),  # said in May: this May, its last third
    ("The recital is in early August.", "2023-08-01", "2023-08-11"),
    ("We moved here in early March.", "2023-03-01", "2023-03-11"),
    ("We're going to Oaxaca in the fall.", "2023-09-01", "2023-12-01"),
    ("We went to Oaxaca in the fall.", "2022-09-01", "2022-12-01"),
    ("My exam is on Friday.", "2023-05-26", "2023-05-27"),  # present tense: the coming Friday
    ("I had the exam on Friday.", "2023-05-19", "2023-05-20"),
    ("I start the new job on June 12.", "2023-06-12", "2023-06-13"),
    ("I'll finish it by mid-June.", "2023-06-11", "2023-06-21"),
    ("Two days from now I fly out.", "2023-05-22", "2023-05-23"),
    ("The invoice is due at the end of the month.", "2023-05-21", "2023-06-01"),
    ("We celebrated on New Year's Eve.", "2022-12-31", "2023-01-01"),
])
def test_resolves_forward_or_back_by_tense(text, start, end):
    m = one(text, SAT_20_MAY)
    assert (m.range_start, m.range_end) == (start, end)


def test_a_clause_keeps_its_own_tense():
    m = one("I accepted the offer and start in September.", SAT_20_MAY)
    assert m.range_start == "2023-09-01"
    m = one("The parcel was shipped; it should arrive by Thursday.", SAT_20_MAY)
    assert m.date == "2023-05-25"


def test_the_weekday_names_the_year_and_the_nth_follows_the_day_before_it():
    assert one("Moved it to Tuesday, June 11 at 9am.", TUE_4_JUN_2024).date == "2024-06-11"
    assert one("Let's meet Thursday the 13th.", TUE_4_JUN_2024).date == "2024-06-13"
    out, back = resolve_time_expressions("We fly out on August 10 and come back on the 24th.", TUE_4_JUN_2024)
    assert (out.date, back.date) == ("2024-08-10", "2024-08-24")


def test_a_domain_name_does_not_end_the_sentence_that_sets_the_tense():
    assert one("We finished the move to Fly.io on Saturday.", TUE_4_JUN_2024).date == "2024-06-01"


def test_labels_read_as_a_person_would_say_them():
    assert one("I'm moving at the end of May.", SAT_20_MAY).label == "late May 2023"
    assert one("We're going in the fall.", SAT_20_MAY).label == "fall 2023"


def test_tense_of_a_sentence():
    assert sentence_tense("I'll go in June") == "future"
    assert sentence_tense("We visited in June") == "past"
    assert sentence_tense("We're planning to visit") == "future"
    assert sentence_tense("The demo is on Friday") is None


def test_a_question_about_a_plan_reads_the_season_forward():
    asked_in_june = datetime(2023, 6, 25)
    assert asks_about_future("When is Maya planning to travel in the fall?")
    (start, end), _ = resolve_time_window("When is Maya planning to travel in the fall?", asked_in_june)
    assert (start.date().isoformat(), end.date().isoformat()) == ("2023-09-01", "2023-12-01")
    (start, _), _ = resolve_time_window("What did Maya do in the fall?", asked_in_june)
    assert start.date().isoformat() == "2022-09-01"
    (start, end), _ = resolve_time_window("Where will she be at the end of May?", datetime(2023, 5, 20))
    assert (start.date().isoformat(), end.date().isoformat()) == ("2023-05-21", "2023-06-01")
