"""What /timeline shows for change forms written apart from the labelled set: dated claims (valid_from),
questions that are not claims, "he"/"she" across turns, a "no" that retracts, one name said short and
long, switches, cancellations, promotions, self-introductions; and the time and entity rules behind
them. Every case is a timeline entry a user would read: attribute, value, negation, what it ends, and
the day it holds from."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from app.domain.layers.aliases import short_forms
from app.domain.layers.assertion_text import in_question
from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.timeparse import resolve_time_expressions

T0 = datetime(2024, 2, 5, 9, 0, tzinfo=timezone.utc)  # a Monday


def events(*turns: tuple[str, str], days: int = 7) -> list[LayerEvent]:
    return [LayerEvent(str(i), sp, text, T0 + timedelta(days=days * i), "c", seq=i)
            for i, (sp, text) in enumerate(turns)]


def timeline(*turns: tuple[str, str], days: int = 7):
    return build_timeline(extract_all(events(*turns, days=days)))[0]


def entry(tl, attribute: str, value: str, negated: bool = False):
    hits = [a for a in tl if a.attribute == attribute and a.value == value and a.negated == negated]
    assert hits, f"no {attribute} = {'NOT ' if negated else ''}{value} in {[(a.attribute, a.value, a.negated) for a in tl]}"
    return hits[0]


# ------------------------------------------------------------------ dated claims

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


# ------------------------------------------------------------------ questions, pronouns, answers

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


# ------------------------------------------------------------------ changes that link

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


# ------------------------------------------------------------------ times and entities

@pytest.mark.parametrize("text, surface, start", [
    ("I'm in Oslo till the 10th for work.", "the 10th", "2024-02-10"),
    ("I'm away from the 20th to the 25th.", "the 20th", "2024-02-20"),
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
    ("I retired in May, finally.", "job_title", "retired"),
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


# ------------------------------------------------------------------ stop 23: what a turn means given the turns before

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


# ------------------------------------------------------------------ the same on a slice with earlier events as context

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
