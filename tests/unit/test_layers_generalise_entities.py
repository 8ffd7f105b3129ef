"""What /timeline shows for change forms written apart from the labelled set: the time and entity
rules behind them (future dates, one name said short and long, relatives, surnames, namesakes), work,
school and tool forms, negations that name what they end, "you" as the person spoken to."""
from __future__ import annotations

from datetime import date

import pytest

from app.domain.layers.aliases import short_forms
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.timeparse import resolve_time_expressions
from tests.unit.layers_generalise_support import T0, events, timeline, entry


@pytest.mark.parametrize("text, surface, start", [
    ("I'm in Oslo till the 10th for work.", "the 10th", "2024-02-10"),
    ("I'm away from the 20th to the 25th.", "from the 20th to the 25th", "2024-02-20"),  # one stretch
    ("The trip gets pushed to January.", "to January", "2025-01-01"),
    ("I booked my flight for December 14.", "December 14", "2024-12-14"),
    ("We need to book it for May.", "for May", "2024-05-01"),
])
def test_future_oriented_dates(text, surface, start):
    ms = {m.surface: m for m in resolve_time_expressions(text, T0)}
    assert ms[surface].range_start == start


def test_the_tenth_floor_is_not_a_date():
    assert [m.surface for m in resolve_time_expressions("She lives on the 10th floor.", T0)] == []


def test_one_name_said_short_and_long_is_one_entity_but_a_place_keeps_its_own():
    assert short_forms(["Tallow", "Tallow Studio", "Okoro", "Daniel Okoro", "Tom", "Tom Hale", "Tom Reyes"]) == [
        ("Okoro", "Daniel Okoro"), ("Tallow", "Tallow Studio")]
    assert short_forms(["Denver", "Denver Health"], places=frozenset({"Denver"})) == []
    frag = choose_extractor(None, None).extract(events(
        ("Kai", "I just signed with Harbor Analytics, and I start at St. Brigid's clinic in June."),
        ("Kai", "I think Harbor sent the contract today. We moved to Denver in May; Denver Health is hiring too.")))
    names = {e.name: set(e.aliases) for e in frag.entities}
    assert "Harbor" in names.get("Harbor Analytics", set()) or "Harbor Analytics" in names.get("Harbor", set())
    assert "Denver" in names and "Denver Health" in names
    assert any(n.startswith("St. Brigid") for n in names)


def test_a_relative_named_once_is_the_same_claim_holder_after():
    tl = timeline(("Maya", "My sister Leah lives in Bend."), ("Maya", "My sister moved to Austin in March!"))
    new = entry(tl, "lives_in", "Austin")
    assert new.entity == "Leah" and entry(tl, "lives_in", "Bend").superseded_by == new.id


def test_a_surname_said_alone_later_is_the_same_person():
    tl = timeline(("Ana", "Daniel Okoro works at Larkspur Retail."), ("Ana", "Okoro works at Quayside now."))
    new = entry(tl, "works_at", "Quayside")
    assert new.entity == "Daniel Okoro" and entry(tl, "works_at", "Larkspur Retail").superseded_by == new.id


def test_two_people_with_one_first_name_are_not_joined():
    tl = timeline(("Ana", "Tom Hale lives in Leeds and Tom Reyes lives in York."), ("Ana", "Tom moved to Hull."))
    assert entry(tl, "lives_in", "Hull").entity == "Tom"
    assert all(a.superseded_by is None for a in tl)


@pytest.mark.parametrize("text, attribute, value", [
    ("I teach year 4 at Ashgrove Primary.", "works_at", "Ashgrove Primary"),
    ("I teach year 4 at Ashgrove Primary.", "job_title", "teacher"),
    ("My daughter started at Kelvin High School this week.", "school", "Kelvin High School"),
    ("We moved the training code from TensorFlow to PyTorch.", "uses:framework", "PyTorch"),
])
def test_work_school_and_tool_forms(text, attribute, value):
    assert entry(timeline(("Ruth", text)), attribute, value)


def test_a_job_lost_without_its_name_ends_the_job_that_stands_and_dates_it():
    tl = timeline(("Ines", "I work at Fenwick & Hale."), ("Ines", "Bad week. I got laid off on Friday."))
    neg = entry(tl, "works_at", "Fenwick & Hale", negated=True)
    assert neg.valid_from == date(2024, 2, 9) and entry(tl, "works_at", "Fenwick & Hale").superseded_by == neg.id
    tl = timeline(("Ines", "I work at Fenwick & Hale."), ("Ines", "I'm no longer at Fenwick & Hale. I was made redundant on Friday."))
    assert [(a.value, a.valid_from) for a in tl if a.negated] == [("Fenwick & Hale", date(2024, 2, 9))]
    assert [a for a in timeline(("Ines", "I quit my job today!")) if a.attribute == "works_at"] == []


@pytest.mark.parametrize("first, then, attribute, value", [
    ("I work at Brackwater.", "I'm not at Brackwater any more.", "works_at", "Brackwater"),
    ("We use MongoDB for the catalogue.", "We no longer use MongoDB, it was too slow.", "uses:database", "MongoDB"),
])
def test_negations_that_name_what_they_end(first, then, attribute, value):
    tl = timeline(("Eli", first), ("Eli", then))
    assert entry(tl, attribute, value).superseded_by == entry(tl, attribute, value, negated=True).id


def test_you_is_the_person_spoken_to():
    tl = timeline(("Felipe", "I'm on the Family plan but I want something cheaper."),
                  ("Kim", "Done, you're on the Solo plan from today."), days=0)
    new = entry(tl, "uses:plan", "Solo")
    assert new.entity == "Felipe" and entry(tl, "uses:plan", "Family").superseded_by == new.id
    tl = timeline(("Nora", "Sam, Mom says you and Priyanka got engaged?!"), ("Sam", "We did!"), days=0)
    assert {a.entity for a in tl if a.value == "engaged"} == {"Sam", "Priyanka"}


def test_you_in_a_condition_or_to_nobody_known_is_no_claim():
    assert timeline(("Kim", "If you move to Leeds, the rent is lower.")) == []
    assert timeline(("Kim", "Hi there! If you moved to Leeds you'd love it."), ("Bo", "Maybe.")) == []


def test_a_place_before_and_i_is_not_a_second_person():
    tl = timeline(("Ana", "I live in Boston and I work at Google as an engineer."))
    assert {a.entity for a in tl} == {"Ana"}
    tl = timeline(("Ana", "Priyanka and I are moving to Denver."))
    assert {a.entity for a in tl} == {"Ana", "Priyanka"}


def test_a_titled_surname_and_initials_are_short_forms_of_one_name():
    assert short_forms(["Mr Şahin", "Deniz Şahin", "MCS", "Marine Conservation Society", "Dr. Ngata"]) == [
        ("MCS", "Marine Conservation Society"), ("Mr Şahin", "Deniz Şahin")]
    # a title's surname shared by two people, or initials that fit two names, join neither
    assert short_forms(["Mrs Hale", "Tom Hale", "Ruth Hale", "RSC", "Royal Shakespeare Company",
                        "Riverside Sailing Club"]) == []


def test_the_graph_joins_a_titled_surname_and_an_acronym_to_the_full_name():
    frag = choose_extractor(None, None).extract(events(
        ("Deniz", "Hi, I'm Deniz Şahin. I volunteer with the Marine Conservation Society on weekends."),
        ("Gwen", "Welcome, Mr Şahin! Is the MCS beach clean still on?")))
    names = {e.name: set(e.aliases) for e in frag.entities}
    deniz = next(n for n in names if "Deniz" in n or "Deniz" in " ".join(names[n]))
    assert "Mr Şahin" in names[deniz] | {deniz}
    society = next(n for n in names if "Marine" in n or any("Marine" in a for a in names[n]))
    assert "MCS" in names[society] | {society}
    assert not any(n in ("Mr Şahin", "MCS") for n in names if n not in (deniz, society))
