"""What /timeline shows for change forms written apart from the labelled set: a slice read with
the earlier events as context gets what the whole conversation gives it; and the forms found that way
(possessives after prepositions, "we" of partners, teams and organisations, resigning, what a question
takes for granted, "they" as the group named last)."""
from __future__ import annotations

import pytest

from app.domain.layers.assertions import extract_all
from tests.unit.layers_generalise_support import events, timeline, entry


CONVERSATION = (("Mira", "Where are you living these days?"), ("Oskar", "Still Ghent."),
                ("Mira", "And Tove, is she moving to Bergen?"), ("Oskar", "Tove is moving to Bergen in June."),
                ("Mira", "We spent a week in Porto."), ("Oskar", "My cousin lives there now."),
                ("Oskar", "Tove decided to stay in Oslo after all."),
                ("Mira", "Still at Brightwater Freight?"), ("Oskar", "Yep."))


@pytest.mark.parametrize("cut", range(1, len(CONVERSATION)))
def test_a_slice_given_the_earlier_events_as_context_gets_what_the_whole_conversation_gives_it(cut):
    from app.domain.layers.extractors import extract_assertions
    evs = events(*CONVERSATION, days=1)
    whole = [a for a in extract_all(evs) if int(a.event_id) >= cut]
    assert extract_all(evs[cut:], context=evs[:cut]) == whole
    assert extract_assertions(evs[cut:], None, context=evs[:cut]) == whole
    assert [(a.entity, a.attribute, a.value, a.negated) for a in extract_all(evs)] == [
        ("Oskar", "lives_in", "Ghent", False), ("Tove", "moving_to", "Bergen", False),
        ("Oskar's cousin", "lives_in", "Porto", False), ("Tove", "lives_in", "Oslo", False),
        ("Tove", "moving_to", "Bergen", True), ("Oskar", "works_at", "Brightwater Freight", False)]


def test_without_context_a_slice_reads_only_its_own_turns():
    evs = events(*CONVERSATION, days=1)
    alone = extract_all(evs[1:2])
    assert alone == [] and [(a.attribute, a.value) for a in extract_all(evs[:2])] == [("lives_in", "Ghent")]


def test_a_names_possessive_after_a_preposition_is_a_place_not_a_subject():
    tl = timeline(("Ana", "Nils is staying with us."), ("Leo", "can I go to Ayo's on Saturday? he moved to Brockley"))
    assert entry(tl, "lives_in", "Brockley").entity == "Ayo"


def test_a_relationship_said_with_we_is_the_partners_too():
    tl = timeline(("Nora", "Sam, Mum says you and Inka got engaged?!"), ("Sam", "We did! In Lisbon."),
                  ("Sam", "We got married on the beach, finally."), ("Sam", "We adopted a dog called Pip."))
    married = {a.entity for a in tl if a.value == "married"}
    assert married == {"Sam", "Inka"}
    assert all(a.superseded_by for a in tl if a.value == "engaged")
    assert {a.entity for a in tl if a.attribute.startswith("pet_name")} == {"Sam"}


def test_resigning_ends_the_job_and_a_childs_new_school_is_not_a_job():
    tl = timeline(("Oskar", "I work at Kessler Foods."), ("Oskar", "I resigned from Kessler Foods on Friday."),
                  ("Oskar", "My daughter just started at Ashgrove Primary."), ("Oskar", "I don't drink any more."))
    assert entry(tl, "works_at", "Kessler Foods").superseded_by == entry(tl, "works_at", "Kessler Foods", True).id
    assert [(a.entity, a.attribute) for a in tl if a.value == "Ashgrove Primary"] == [("Oskar's daughter", "school")]
    assert not [a for a in tl if a.attribute.startswith("opinion:")]


def test_we_of_someone_who_speaks_for_an_organisation_is_the_organisations_tool():
    tl = timeline(("Owen", "Is Vantor still on Pipedrive for sales?"), ("Ines", "We are, for now."),
                  ("Ines", "Heads up: we switched from Pipedrive to HubSpot this week."),
                  ("Ines", "I use a Pixel 8 for work."))
    old, new = entry(tl, "uses:crm", "Pipedrive"), entry(tl, "uses:crm", "HubSpot")
    assert old.entity == new.entity == "Vantor" and old.superseded_by == new.id
    assert entry(tl, "uses:phone", "Pixel 8").entity == "Ines"  # her own, said with "I"


def test_we_of_a_team_with_no_organisation_named_is_the_speakers():
    tl = timeline(("Tess", "We use Postgres for the app."), ("Tess", "We switched to SQLite this morning."))
    assert {a.entity for a in tl} == {"Tess"} and entry(tl, "uses:database", "Postgres").superseded_by


@pytest.mark.parametrize("question,attribute,value", [
    ("How was your first week at Ashgrove Academy?", "school", "Ashgrove Academy"),
    ("So how's the new job at Kessler Foods going?", "works_at", "Kessler Foods"),
    ("Is your new flat in Ghent any warmer?", "lives_in", "Ghent"),
])
def test_what_a_question_takes_for_granted_about_the_one_asked(question, attribute, value):
    tl = timeline(("Oskar", "Hi Mira!"), ("Mira", question), days=0)
    assert [(a.entity, a.attribute, a.value) for a in tl] == [("Oskar", attribute, value)]


@pytest.mark.parametrize("question,answer", [
    ("Did Senator Vale propose any reforms?", "Yes, several, mostly on housing."),
    ("Are there any poses that you enjoy practising?", "Yeah, a couple of them."),
    ("Would you like to see the photos?", "Yeah, Mira! Send them over."),
    ("Have you tried restarting the router?", "I was thinking about buying a new one."),
    ("Are you working on the report?", "Yes, as a matter of fact the report is nearly done."),
    ("So what's your next move?", "Thanks Mira! Still thinking."),
])
def test_a_yes_to_a_question_that_claims_nothing_adds_nothing(question, answer):
    assert timeline(("Mira", question), ("Oskar", answer), days=0) == []


@pytest.mark.parametrize("turns,expected", [
    ((("Oskar", "My grandparents sold the farm. They moved to Malaga in May."),),
     {("Oskar's grandparents", "lives_in", "Malaga")}),
    ((("Mira", "Did you hear about the Okafors at number 9?"), ("Oskar", "Yes! They're moving to Tallinn.")),
     {("Okafors", "moving_to", "Tallinn")}),
    ((("Oskar", "Nils and Britt finally tied the knot."), ("Oskar", "They live in Umeå now.")),
     {("Nils", "relationship_status", "married"), ("Britt", "relationship_status", "married"),
      ("Nils", "lives_in", "Umeå"), ("Britt", "lives_in", "Umeå")}),
    ((("Oskar", "I called the council and they said no. They moved to Leeds, apparently."),), set()),
])
def test_they_is_the_group_named_last(turns, expected):
    assert {(a.entity, a.attribute, a.value) for a in timeline(*turns, days=0)} == expected
