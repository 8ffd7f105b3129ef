"""Mechanisms of stop 24 that do not depend on one verb or topic: changes and endings read through what
the speaker already said (`assertion_anchored`), a negation taking the attribute its value is held by
(`assertion_claims`), and what one event's matches mean together (`assertion_derived`). Sentences are
written apart from the labelled set; each case is a timeline entry a user would read."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from app.domain.layers.assertion_claims import settle_all
from app.domain.layers.assertion_derived import framed_occupation
from app.domain.layers.assertions import Assertion, extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 2, 5, 9, 0, tzinfo=timezone.utc)  # a Monday


def timeline(*turns: tuple[str, str], days: int = 7):
    evs = [LayerEvent(str(i), sp, text, T0 + timedelta(days=days * i), "c", seq=i) for i, (sp, text) in enumerate(turns)]
    return build_timeline(extract_all(evs))[0]


def rows(tl) -> set[tuple]:
    return {(a.entity, a.attribute, a.value, a.negated) for a in tl}


def entry(tl, attribute: str, value: str, negated: bool = False):
    hits = [a for a in tl if a.attribute == attribute and a.value == value and a.negated == negated]
    assert hits, f"no {attribute} = {'NOT ' if negated else ''}{value} in {sorted(rows(tl))}"
    return hits[0]


# ------------------------------------------------------------------ changes read through what was said

@pytest.mark.parametrize("first, then, attribute, old, new", [
    ("I study economics.", "I changed from economics to law over the summer.", "studies", "economics", "law"),
    ("I work on the night shift desk.", "They put me on the weekend desk instead of the night shift desk.",
     "works_in", "night shift desk", "weekend desk"),
    ("I'm a member of the Harbour Choir.", "I switched from the Harbour Choir to the Riverside Singers.",
     "member_of", "Harbour Choir", "Riverside Singers"),
])
def test_a_change_of_a_value_the_speaker_holds_takes_its_attribute(first, then, attribute, old, new):
    tl = timeline(("Ines", first), ("Ines", then))
    assert entry(tl, attribute, old).superseded_by == entry(tl, attribute, new).id or attribute == "member_of"
    assert entry(tl, attribute, new).entity == "Ines"


def test_a_trip_between_places_is_no_change_of_residence():
    tl = timeline(("Ines", "I live in Porto."), ("Ines", "I drove from Porto to Braga last week."))
    assert rows(tl) == {("Ines", "lives_in", "Porto", False)}


@pytest.mark.parametrize("first, then, attribute, value", [
    ("I joined the Tidewater rowing club.", "I quit the rowing club, too many early mornings.", "member_of",
     "Tidewater rowing club"),
    ("We're planning a trip to Oslo in May.", "Sadly Oslo is off, work got in the way.", "plan:trip", "Oslo"),
    ("I'm a member of Peakform.", "I cancelled Peakform last month.", "member_of", "Peakform"),
])
def test_an_ending_of_a_value_the_speaker_holds_ends_that_claim(first, then, attribute, value):
    tl = timeline(("Ines", first), ("Ines", then))
    assert entry(tl, attribute, value).superseded_by == entry(tl, attribute, value, negated=True).id
    assert not any(a.negated and a.attribute != attribute for a in tl)  # not a cancelled trip


def test_a_name_held_under_two_attributes_is_not_guessed():
    tl = timeline(("Ines", "I work at Lumen and I'm a member of Lumen."), ("Ines", "I quit Lumen."))
    assert not any(a.negated and a.attribute == "member_of" for a in tl)


def test_the_cross_claim_step_gives_a_negation_the_attribute_its_value_is_held_by():
    held = Assertion("A#0", "A", "Ines", "member_of", "Peakform", "peakform", T0, "member of Peakform")
    off = Assertion("B#0", "B", "Ines", "plan:trip", "Peakform", "peakform", T0, "cancelled Peakform", negated=True)
    assert [(a.attribute, a.negated) for a in settle_all([held, off])] == [("member_of", False), ("member_of", True)]
    alone = settle_all([off])  # nothing held: left as it was said
    assert alone[0].attribute == "plan:trip"


# ------------------------------------------------------------------ what one event's matches mean together

def test_a_named_pet_is_a_pet_one_has_with_one_spelling_per_kind():
    tl = timeline(("Ines", "I'm taking my kitten Miso to the vet."))
    assert {("Ines", "has_pet", "cat", False), ("Ines", "pet_name:cat", "Miso", False)} <= rows(tl)


def test_getting_married_is_engaged_with_a_wedding_to_come_and_my_partner_adds_nothing_after():
    tl = timeline(("Ines", "My partner and I are getting married in Évora!"), ("Ines", "My partner says hi."))
    assert ("Ines", "relationship_status", "engaged", False) in rows(tl)
    assert ("Ines", "plan:wedding", "Évora", False) in rows(tl)
    assert not any(a.value == "in a relationship" for a in tl)  # "my partner" neither then nor later


def test_retiring_ends_the_job_that_stands_or_the_one_it_names():
    tl = timeline(("Ines", "I work at Calder Mills."), ("Ines", "I retired on Friday, finally."))
    neg = entry(tl, "works_at", "Calder Mills", negated=True)
    assert neg.valid_from == date(2024, 2, 9) and not any(a.attribute == "job_title" for a in tl)
    assert entry(timeline(("Ines", "I have retired from Calder Mills.")), "works_at", "Calder Mills", negated=True)
    assert timeline(("Ines", "Dr. Vance retired last year.")) == []  # no job stands: nothing ends


def test_a_product_that_moves_is_a_migration_not_a_residence():
    tl = timeline(("Ines", "Our Postgres moved to Supabase on Monday."))
    assert ("Ines", "uses:database", "Supabase", False) in rows(tl)
    assert not any(a.attribute == "lives_in" for a in tl)


@pytest.mark.parametrize("raw, title", [
    ("dispatcher", "dispatcher"), ("junior project manager", "project manager"), ("member", None),
    ("regular", None), ("new surveyor", "surveyor"), ("customer", None),
])
def test_a_title_in_a_work_frame_has_a_titles_shape(raw, title):
    assert framed_occupation(raw) == title


@pytest.mark.parametrize("text, expected", [
    ("Yes, still a surveyor at Brandt & Co.", {("Ines", "job_title", "surveyor", False),
                                              ("Ines", "works_at", "Brandt & Co", False)}),
    ("I'm a regular at Café Lume.", set()),
    ("They offered me the site manager job!", {("Ines", "job_title", "site manager", False)}),
    ("My boss moved me to the claims team.", {("Ines", "works_in", "claims team", False)}),
    ("I'm 37, and I live in Leeds.", {("Ines", "age", "37", False), ("Ines", "lives_in", "Leeds", False)}),
    ("I swim on Sundays and I run a bakery.", {("Ines", "hobby", "swimming", False)}),
    ("We moved to 12 Alder Road last month.", {("Ines", "lives_in", "12 Alder Road", False)}),
    ("I work part-time at Greenleaf Books.", {("Ines", "works_at", "Greenleaf Books", False)}),
    ("I study geology at Marlow University.", {("Ines", "studies", "geology", False),
                                               ("Ines", "school", "Marlow University", False)}),
    ("We hired Tove as our first engineer.", {("Tove", "job_title", "engineer", False)}),
    ("We went with Kestrel as our scheduler.", {("Ines", "uses:scheduler", "Kestrel", False)}),
    ("The tokenizer is SentencePiece.", {("Ines", "uses:tokenizer", "SentencePiece", False)}),
    ("We got a rescue greyhound called Tilly.", {("Ines", "pet_name:dog", "Tilly", False), ("Ines", "has_pet", "dog", False)}),
    ("We're no longer together.", {("Ines", "relationship_status", "single", False)}),
    ("I got into Edinburgh University!", {("Ines", "school", "Edinburgh University", False)}),
    ("My son moved out, he lives in Bristol now.", {("Ines's son", "lives_in", "Bristol", False)}),
    ("Ella and Sam bought a house in Hove.", {("Ella", "lives_in", "Hove", False), ("Sam", "lives_in", "Hove", False)}),
    ("I'm now head of science at Elmfield.", {("Ines", "job_title", "head of science", False),
                                             ("Ines", "works_at", "Elmfield", False)}),
])
def test_general_forms(text, expected):
    assert rows(timeline(("Ines", text))) == expected


def test_an_age_to_come_holds_from_its_day():
    tl = timeline(("Ines", "I'm 29."), ("Ines", "I'm turning 30 on the 20th!"))
    new = entry(tl, "age", "30")
    assert new.valid_from == date(2024, 2, 20) and entry(tl, "age", "29").superseded_by == new.id
