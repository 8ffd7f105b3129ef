"""What /timeline shows for change forms written apart from the labelled set: dated claims (valid_from),
a negation of a short name, switches, cancellations, promotions, moved weddings, general forms. Every
case is a timeline entry a user would read: attribute, value, negation, what it ends, and the day it
holds from."""
from __future__ import annotations

from datetime import date

import pytest

from tests.unit.layers_generalise_support import timeline, entry


def test_a_job_that_starts_on_a_named_day_holds_from_that_day_and_ends_the_old_one():
    tl = timeline(("Noor", "I work at Orrery Ltd in the finance office."),
                  ("Noor", "Got the offer! I start at Pellucid Labs on March 4."))
    old, new = entry(tl, "works_at", "Orrery Ltd"), entry(tl, "works_at", "Pellucid Labs")
    assert new.valid_from == date(2024, 3, 4) and new.effective_day == date(2024, 3, 4)
    assert old.superseded_by == new.id and old.valid_from is None


def test_a_breakup_on_a_named_weekday_is_dated_that_day():
    tl = timeline(("Ivo", "I've been seeing someone for a while now."),
                  ("Ivo", "Jana and I split up on Saturday."))
    single = entry(tl, "relationship_status", "single")
    assert single.valid_from == date(2024, 2, 10)  # the Saturday before the Monday it was said
    assert entry(tl, "relationship_status", "in a relationship").superseded_by == single.id


def test_an_end_date_or_a_date_in_another_clause_does_not_date_the_claim():
    tl = timeline(("Ivo", "My cousin Ines is visiting from Braga until Sunday."),
                  ("Ivo", "I moved to the billing team last Tuesday, and I'm a senior analyst now."))
    assert entry(tl, "lives_in", "Braga").valid_from is None
    assert entry(tl, "works_in", "billing team").valid_from == date(2024, 2, 6)
    assert entry(tl, "job_title", "senior analyst").valid_from is None


def test_a_negation_of_the_short_name_ends_the_claim_of_the_long_name():
    tl = timeline(("Eli", "I joined Lindqvist Partners in the summer."), ("Eli", "I'm no longer at Lindqvist."))
    neg = entry(tl, "works_at", "Lindqvist", negated=True)
    assert entry(tl, "works_at", "Lindqvist Partners").superseded_by == neg.id


def test_switching_from_one_tool_to_another_supersedes_the_first():
    tl = timeline(("Eli", "We use MySQL for the orders service."),
                  ("Eli", "We ended up switching from MySQL to Postgres over the weekend."))
    new = entry(tl, "uses:database", "Postgres")
    assert entry(tl, "uses:database", "MySQL").superseded_by == new.id


@pytest.mark.parametrize("plan, cancel, attribute, value", [
    ("We're planning a trip to Crete in July.", "We're not doing Crete anymore.", "plan:trip", "Crete"),
    ("I'm saving for a trip to Chile next year.", "We've shelved Chile, sadly.", "plan:trip", "Chile"),
    ("I found a flat in Deptford!", "Bad news, the Deptford flat fell through.", "moving_to", "Deptford"),
])
def test_a_cancelled_plan_is_negated_and_ends_the_plan(plan, cancel, attribute, value):
    tl = timeline(("Eli", plan), ("Eli", cancel))
    neg = entry(tl, attribute, value, negated=True)
    assert entry(tl, attribute, value).superseded_by == neg.id


def test_an_employer_that_promotes_the_speaker_gives_a_new_title():
    tl = timeline(("Mo", "I'm a junior designer at Fenlake."), ("Mo", "Fenlake just promoted me to senior designer!"))
    new = entry(tl, "job_title", "senior designer")
    assert new.entity == "Mo" and entry(tl, "job_title", "junior designer").superseded_by == new.id


def test_a_wedding_moved_to_another_city_replaces_the_planned_one():
    tl = timeline(("Mo", "We are planning a wedding next spring."), ("Mo", "The wedding has been moved to Sintra."))
    assert entry(tl, "plan:wedding", "Sintra").entity == "Mo"


@pytest.mark.parametrize("text, attribute, value, negated", [
    ("Hi, this is Marit from Solvang Dental.", "works_at", "Solvang Dental", False),
    ("It's Marit from 22 Harrow Lane, the leak is back.", "lives_in", "22 Harrow Lane", False),
    ("I've stopped doing work for Brackwater, it's private clients only now.", "works_at", "Brackwater", True),
    ("I was made redundant from Halvorsen Freight.", "works_at", "Halvorsen Freight", True),
    ("I quit tennis after the injury.", "hobby", "tennis", True),
    ("I'm back on the netball team.", "member_of", "netball team", False),
    ("I've taken up swimming on Sundays.", "hobby", "swimming", False),
    ("I'm relocating to our Gdańsk office in the autumn.", "moving_to", "Gdańsk", False),
    ("I'm freelancing now.", "job_title", "freelancer", False),
    ("Mr Achebe is my form tutor.", "job_title", "tutor", False),
    ("Our new CFO, Lena Brandt, starts today.", "job_title", "cfo", False),
    ("I'm living with my aunt in Coimbra for now.", "lives_in", "Coimbra", False),
    ("I sold the Civic and got a Mazda.", "uses:car", "Mazda", False),
])
def test_general_forms_read_as_claims(text, attribute, value, negated):
    tl = timeline(("Marit", text))
    assert entry(tl, attribute, value, negated)


def test_a_coordinated_verb_is_not_read_as_a_second_person():
    tl = timeline(("Marit", "I sold the Civic and got a Mazda."))
    assert {a.entity for a in tl} == {"Marit"}
    assert entry(tl, "uses:car", "Civic", negated=True)
