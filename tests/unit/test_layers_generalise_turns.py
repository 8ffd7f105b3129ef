"""What /timeline shows for change forms written apart from the labelled set: what a turn means
given the turns before (stop 23): questions that are not claims, "he"/"she" across turns, answers
about someone else, elided answers, a "yes" or a "no" that says or retracts the question's claim,
"here" and "there", whose claim it is, staying after all."""
from __future__ import annotations

import pytest

from app.domain.layers.assertion_text import in_question
from tests.unit.layers_generalise_support import timeline, entry


def test_a_question_is_not_a_claim_but_a_statement_before_a_tag_question_is():
    tl = timeline(("Ana", "Do you still live in Lyon?"), ("Ana", "So Pia moved to Lyon?"),
                  ("Bo", "I moved to Lyon last week, did I tell you?"))
    assert [(a.entity, a.attribute, a.value) for a in tl] == [("Bo", "lives_in", "Lyon")]
    assert in_question("Has Pia settled in Lyon?", 4, 20)
    assert not in_question("Pia is moving in with me next month, is that okay?", 0, 20)


def test_he_in_an_answer_stands_for_the_person_the_question_named():
    tl = timeline(("Ana", "And what about Teodor?"), ("Bo", "He's moving to Tallinn in May."), days=0)
    assert entry(tl, "moving_to", "Tallinn").entity == "Teodor"


def test_a_no_to_a_question_about_a_standing_claim_retracts_it():
    tl = timeline(("Bo", "I took up karate in the autumn."), ("Ana", "Still doing karate on Fridays?"),
                  ("Bo", "Nope, gave it up. Too many bruises."))
    neg = entry(tl, "hobby", "karate", negated=True)
    assert neg.entity == "Bo" and entry(tl, "hobby", "karate").superseded_by == neg.id


def test_a_no_about_something_never_claimed_retracts_nothing():
    tl = timeline(("Bo", "I took up karate in the autumn."), ("Ana", "Are you still in the choir?"),
                  ("Bo", "No, not since May."))
    assert [a for a in tl if a.negated] == [] and entry(tl, "hobby", "karate").superseded_by is None


@pytest.mark.parametrize("question,answer,entity,attribute,value", [
    ("Where does Tove live these days?", "Bergen, since the spring.", "Tove", "lives_in", "Bergen"),
    ("What does your sister do?", "A dentist, in Cork.", "Oskar's sister", "job_title", "dentist"),
    ("Where is Tove working now?", "Kessler Foods.", "Tove", "works_at", "Kessler Foods"),
    ("Does Tove still work at Vantor?", "She does.", "Tove", "works_at", "Vantor"),
])
def test_an_answer_about_someone_else_is_that_persons_claim(question, answer, entity, attribute, value):
    tl = timeline(("Mira", question), ("Oskar", answer), days=0)
    assert [(a.entity, a.attribute, a.value) for a in tl] == [(entity, attribute, value)]


def test_a_bare_value_answers_the_attribute_the_question_asked_about_for_the_one_asked():
    tl = timeline(("Oskar", "I live in Lyon, near the river."),
                  ("Mira", "Where are you living these days, Oskar?"), ("Oskar", "Still Ghent, funnily enough."))
    ghent = entry(tl, "lives_in", "Ghent")
    assert ghent.entity == "Oskar" and entry(tl, "lives_in", "Lyon").superseded_by == ghent.id
    assert all(a.entity != "Mira" for a in tl)


@pytest.mark.parametrize("question,answer,attribute,value", [
    ("What bank are you with now?", "Revolut, at the moment.", "uses:bank", "Revolut"),
    ("Which Tarn subscription are you on?", "The Studio subscription, I think.", "uses:subscription", "Studio"),
    ("Which phone do you have these days?", "A Pixel 8.", "uses:phone", "Pixel 8"),
    ("So what do you do for a living?", "A pharmacist, mostly weekends.", "job_title", "pharmacist"),
    ("Where are you from originally?", "Valparaíso.", "from", "Valparaíso"),
    ("Where do you work these days?", "Pellucid Labs, since the spring.", "works_at", "Pellucid Labs"),
    ("still based in the city, or did you move?", "nah, still galway", "lives_in", "Galway"),
])
def test_elided_answers(question, answer, attribute, value):
    tl = timeline(("Mira", question), ("Oskar", answer), days=0)
    assert entry(tl, attribute, value).entity == "Oskar"


@pytest.mark.parametrize("question,answer", [
    ("How was the concert?", "Loud."), ("Where do you live now?", "I have no idea what you mean."),
    ("Where do you live now?", "Somewhere near the coast."), ("Where do you live now?", "Same as before."),
    ("Where do you work?", "Home, mostly."), ("Which bank are you with?", "The usual."),
    ("Where are you heading?", "Lunch."), ("Where do you live now?", "Thanks for asking, not sure yet."),
])
def test_a_reply_that_names_nothing_the_question_asked_about_is_no_claim(question, answer):
    assert timeline(("Mira", question), ("Oskar", answer), days=0) == []


def test_a_move_answered_with_a_place_is_a_move_and_still_there_is_where_one_lives():
    tl = timeline(("Mira", "Are you moving after all?"), ("Oskar", "Yes, to Lisbon."),
                  ("Mira", "Tove, are you relocating too?"), ("Tove", "No, still Bergen."), days=0)
    assert entry(tl, "moving_to", "Lisbon").entity == "Oskar" and entry(tl, "lives_in", "Bergen").entity == "Tove"


@pytest.mark.parametrize("question,answer,entity,attribute,value", [
    ("Has Petra settled in Lyon?", "She has, she loves the markets.", "Petra", "lives_in", "Lyon"),
    ("Did you and Ama move to Leeds in the end?", "We did, in March.", "Oskar Ama", "lives_in", "Leeds"),
    ("Still at Brightwater Freight?", "Yep.", "Oskar", "works_at", "Brightwater Freight"),
    ("Is Vantor still on Salesforce for sales?", "We are, until the renewal.", "Vantor", "uses:crm", "Salesforce"),
    ("Ivo tells me you got engaged?!", "I did!", "Oskar", "relationship_status", "engaged"),
])
def test_a_yes_says_the_questions_claim(question, answer, entity, attribute, value):
    tl = timeline(("Mira", question), ("Oskar", answer), days=0)
    assert {a.entity for a in tl if (a.attribute, a.value, a.negated) == (attribute, value, False)} == set(entity.split())


def test_a_no_with_the_old_employer_ends_it_and_a_job_that_is_not_there_implies_it():
    tl = timeline(("Oskar", "Honestly I want a job that isn't at Ferrow Media."),
                  ("Mira", "Are you still with Ferrow Media?"), ("Oskar", "No, not at Ferrow any more."))
    held, ended = entry(tl, "works_at", "Ferrow Media"), entry(tl, "works_at", "Ferrow", negated=True)
    assert held.superseded_by == ended.id
    assert len([a for a in tl if a.attribute == "works_at"]) == 2


def test_a_yes_question_answered_by_someone_with_a_sentence_of_their_own_is_read_as_said():
    tl = timeline(("Mira", "Are you still at Brightwater Freight?"),
                  ("Oskar", "Yes, five years now as their lead analyst, based out of Cork."), days=0)
    assert {(a.entity, a.attribute, a.value) for a in tl} == {
        ("Oskar", "works_at", "Brightwater Freight"), ("Oskar", "job_title", "analyst"), ("Oskar", "lives_in", "Cork")}


def test_here_and_there_are_the_place_named_just_before():
    tl = timeline(("Mira", "Welcome to Toulouse, by the way!"), ("Oskar", "Thanks. I moved here from Tallinn in May."),
                  ("Mira", "We spent a week in Porto once."), ("Oskar", "Oh nice, my cousin lives there now."), days=0)
    assert entry(tl, "lives_in", "Toulouse").entity == "Oskar" and entry(tl, "from", "Tallinn").entity == "Oskar"
    assert entry(tl, "lives_in", "Porto").entity == "Oskar's cousin"


def test_there_does_not_reach_back_past_the_previous_turn():
    tl = timeline(("Mira", "I grew up in Bilbao."), ("Oskar", "The weather is awful today."),
                  ("Mira", "Lea is from there too!"), days=0)
    assert [(a.entity, a.attribute, a.value) for a in tl] == [("Mira", "from", "Bilbao")]


def test_a_job_left_there_ends_the_job_that_stands():
    tl = timeline(("Oskar", "I work at Pellucid Labs."), ("Oskar", "Actually I don't work there any more."))
    assert entry(tl, "works_at", "Pellucid Labs").superseded_by == entry(tl, "works_at", "Pellucid Labs", True).id


@pytest.mark.parametrize("text,expected", [
    ("We live in Ghent and work at Pellucid Labs.", {("lives_in", "Ghent"), ("works_at", "Pellucid Labs")}),
    ("I quit Orrery Ltd and joined Vantor as a product designer.",
     {("works_at", "Orrery Ltd"), ("works_at", "Vantor"), ("job_title", "product designer")}),
    ("I started a new job at the garden centre on Mill Road.", {("works_at", "garden centre")}),
    ("I live in Ghent and I work at Harbor Bank as an analyst.",
     {("lives_in", "Ghent"), ("works_at", "Harbor Bank"), ("job_title", "analyst")}),
    ("lol i moved to tartu last week", {("lives_in", "Tartu")}),
    ("we switched to pytorch from tensorflow last sprint", {("uses:framework", "Pytorch")}),
    ("I moved to the fraud team and I use Linear now.", {("works_in", "fraud team"), ("uses:tracker", "Linear")}),
    ("I've been in Ghent for six years.", {("lives_in", "Ghent")}),
    ("My new address is 22 Quarry Lane, Ghent.", {("lives_in", "22 Quarry Lane")}),
    ("I'm a Platinum member now.", {("uses:tier", "Platinum")}),
    ("My salary goes into Revolut now.", {("uses:bank", "Revolut")}),
    ("We switched the optimizer to AdamW on Monday.", {("uses:optimizer", "AdamW")}),
    ("Our base model is Gemma 2 now.", {("uses:model", "Gemma 2")}),
    ("Our scheduler is Airflow these days.", {("uses:scheduler", "Airflow")}),
    ("I switched banks to Starling.", {("uses:bank", "Starling")}),
    ("I got a job as a nurse at Leeds General.", {("job_title", "nurse"), ("works_at", "Leeds General")}),
    ("I'm starting a new job at Kessler Foods on Monday.", {("works_at", "Kessler Foods")}),
    ("I've been promoted to head of department.", {("job_title", "head of department")}),
    ("I've moved in with my boyfriend in Ghent.", {("lives_in", "Ghent"), ("relationship_status", "in a relationship")}),
    ("I accepted a job in Rotterdam!", {("moving_to", "Rotterdam")}),
])
def test_the_speakers_claims_in_one_turn(text, expected):
    tl = timeline(("Oskar", text))
    assert {(a.attribute, a.value) for a in tl} == expected and {a.entity for a in tl} == {"Oskar"}


@pytest.mark.parametrize("text", ["I moved to town last week.", "I moved to Leeds, and work is far.",
                                  "Marta and I went to see my new flat in Ghent."])
def test_cues_that_name_no_place_or_person_make_no_claim_of_one(text):
    tl = timeline(("Oskar", text))
    assert all(a.entity == "Oskar" for a in tl) and ("lives_in", "Town") not in {(a.attribute, a.value) for a in tl}


def test_a_capitalised_message_keeps_its_lower_case_words():
    tl = timeline(("Oskar", "My sister moved to paris last week, Ghent is quiet."))
    assert all(a.value != "Paris" for a in tl)


@pytest.mark.parametrize("text,entity,attribute,value", [
    ("Tom and Ella moved to Galway together.", {"Ella", "Tom"}, "lives_in", "Galway"),
    ("Greta called. Her son works at Kessler Foods now.", {"Greta's son"}, "works_at", "Kessler Foods"),
    ("Kasia's husband is moving to Oslo.", {"Kasia's husband"}, "moving_to", "Oslo"),
    ("My brother's in Gdynia for now.", {"Oskar's brother"}, "lives_in", "Gdynia"),
    ("Tove's moving to Bergen, she told me.", {"Tove"}, "moving_to", "Bergen"),
    ("Tove's been at Kessler Foods for a year.", {"Tove"}, "works_at", "Kessler Foods"),
    ("Tove's in Bergen now.", {"Tove"}, "lives_in", "Bergen"),
    ("Tove's a paramedic.", {"Tove"}, "job_title", "paramedic"),
    ("Come and stay with me in Ghent next weekend?", {"Oskar"}, "lives_in", "Ghent"),
])
def test_whose_claim_it_is(text, entity, attribute, value):
    hits = [a for a in timeline(("Oskar", text)) if (a.attribute, a.value) == (attribute, value)]
    assert {a.entity for a in hits} == entity  # the date in an invitation is the visit's, not the claim's
    assert all(a.valid_from is None for a in hits)


def test_staying_after_all_is_where_one_lives_and_ends_the_move():
    tl = timeline(("Mira", "Tove is moving to Bergen in the autumn."), ("Mira", "Tove decided to stay in Oslo after all."))
    move, stay = entry(tl, "moving_to", "Bergen"), entry(tl, "lives_in", "Oslo")
    off = entry(tl, "moving_to", "Bergen", negated=True)
    assert stay.entity == off.entity == "Tove" and move.superseded_by == off.id


def test_staying_put_with_no_move_planned_retracts_nothing():
    tl = timeline(("Oskar", "We're staying put, honestly."))
    assert tl == []
