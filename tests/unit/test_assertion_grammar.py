"""Grammar the rules read through (assertions/7: `assertion_grammar`, `assertion_forms`): subjects in
apposition, "'s" as "has"/"is" after a relation or a name, "a firm called X", a favourite said first or
given as the answer to a question, the clause's own subject for "a dog called X", and the verb families
added (a place at a school, going somewhere to study, tools swapped, starting at an employer in any
mood, departments by function, a liking denied, a visit to family, a divorce or a wedding). Every
sentence is made up for these tests; each case is what a user would read on the timeline."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.assertion_grammar import clause_subject, normalise
from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent

T0 = datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)  # a Monday
N = "Oona"


def rows(*turns: tuple[str, str]) -> set[tuple]:
    evs = [LayerEvent(str(i), sp, text, T0 + timedelta(days=7 * i), "c", seq=i) for i, (sp, text) in enumerate(turns)]
    return {(a.entity, a.attribute, a.value, a.negated) for a in extract_all(evs)}


PROBES = [
    # a subject in apposition is the name it gives
    ("His wife, Marisol, teaches chemistry.", {("Marisol", "job_title", "chemistry teacher", False)}),
    ("Teodor, my brother-in-law, works at Quayle Bank.", {("Teodor", "works_at", "Quayle Bank", False)}),
    ("My landlady (Mrs Ferris) has moved to Truro.", {("Ferris", "lives_in", "Truro", False)}),
    # "'s" after a relation or a name: a perfect before a participle, a progressive before a verb in -ing
    ("My nephew's just turned nineteen.", {("Oona's nephew", "age", "19", False)}),
    ("My stepson's relocating to Perth.", {("Oona's stepson", "moving_to", "Perth", False)}),
    ("Our youngest is eleven.", {("Oona's youngest", "age", "11", False)}),
    ("My flatmate's switched to the night team.", {("Oona's flatmate", "works_in", "night team", False)}),
    # an employer introduced by its kind
    ("I work for a tiny design agency called Pebble & Pine.", {(N, "works_at", "Pebble & Pine", False)}),
    # favourites said first, or as an answer
    ("Marmite is honestly my favourite spread.", {(N, "favourite:spread", "Marmite", False)}),
    ("What's your favourite museum? Mine's the Tate Modern.", {(N, "favourite:museum", "Tate Modern", False)}),
    # verb families
    ("I was offered a place at Brackley College!", {(N, "school", "Brackley College", False)}),
    ("I'm heading to Norwich in October to study geology.", {(N, "studies", "geology", False)}),
    ("We traded our Jira for Linear.", {(N, "uses:tracker", "Linear", False)}),
    ("I'm thrilled to start at Corvid Analytics.", {(N, "works_at", "Corvid Analytics", False)}),
    ("I can't wait to start at Yarrow Biotech in June.", {(N, "works_at", "Yarrow Biotech", False)}),
    ("I've moved into payroll.", {(N, "works_in", "payroll", False)}),
    ("I work in procurement now.", {(N, "works_in", "procurement", False)}),
    ("I've never really liked golf.", {(N, "opinion:golf", "dislikes", False)}),
    ("We're visiting my grandparents in Kraków over Easter.", {(N, "plan:trip", "Kraków", False)}),
    ("Our divorce has finally been finalised.", {(N, "relationship_status", "divorced", False)}),
    ("We tied the knot on Saturday!", {(N, "relationship_status", "married", False)}),
    ("I've been made redundant from Tollgate Freight.", {(N, "works_at", "Tollgate Freight", True)}),
    ("I just quit my job at Harrow Mills.", {(N, "works_at", "Harrow Mills", True)}),
    ("I've been doing pilates for a couple of years.", {(N, "hobby", "pilates", False)}),
    # relative clauses and nouns in apposition say what a name is to someone
    ("We adore Ludlow, where my grandparents live.", {("Oona's grandparents", "lives_in", "Ludlow", False)}),
    ("I drop Sam at Fenwick Press, where I work.", {(N, "works_at", "Fenwick Press", False)}),
    ("My college, Kellerton Sixth Form, has a new library.", {(N, "school", "Kellerton Sixth Form", False)}),
    ("Our choir, the Harbour Larks, sings on Friday.", {(N, "member_of", "Harbour Larks", False)}),
    ("My employer, Quillon, pays monthly.", {(N, "works_at", "Quillon", False)}),
    # trades said as verbs, cars got and given up, code rewritten
    ("I'm going to intern at Marrow Labs this summer.", {(N, "works_at", "Marrow Labs", False), (N, "job_title", "intern", False)}),
    ("I temp for Hollis Group now.", {(N, "works_at", "Hollis Group", False)}),
    ("We're leasing a Kia.", {(N, "uses:car", "Kia", False)}),
    ("I sold my old Fiat.", {(N, "uses:car", "Fiat", True)}),
    ("We are selling the Skoda and buying a Volvo.", {(N, "uses:car", "Skoda", False), (N, "uses:car", "Volvo", False)}),
    ("I rewrote the parser in Haskell.", {(N, "uses:language", "Haskell", False)}),
]


@pytest.mark.parametrize("text, expected", PROBES)
def test_probe(text: str, expected: set) -> None:
    assert expected <= rows((N, text))


@pytest.mark.parametrize("text, attribute", [
    ("I've been a vegan for years.", "job_title"),              # a diet is no occupation
    ("My cousin has started law school.", "hobby"),             # a school is no hobby
    ("I've ditched Netflix.", "plan:trip"),                     # a subscription dropped is no trip cancelled
    ("Efua, my sister, and I went to Rome last spring.", "lives_in"),  # a list, not an apposition
])
def test_no_false_claim(text: str, attribute: str) -> None:
    assert not [r for r in rows((N, text)) if r[1] == attribute]


def test_a_pet_is_the_clause_subjects() -> None:
    """"Ines said: Joaquín has a cat called Mote": Joaquín's cat, not the speaker's."""
    got = rows((N, "Joaquín has a cat called Mote."))
    assert ("Joaquín", "pet_name:cat", "Mote", False) in got
    assert not [r for r in got if r[0] == N]
    assert clause_subject("They have got a parrot named Kiwi", 15) == "They"
    assert clause_subject("I have got a parrot named Kiwi", 13) is None


def test_a_trip_named_and_cancelled_in_one_sentence_is_only_cancelled() -> None:
    got = rows((N, "We've cancelled our trip to Malta."))
    assert (N, "plan:trip", "Malta", True) in got and (N, "plan:trip", "Malta", False) not in got


def test_a_favourite_asked_in_the_turn_before() -> None:
    got = rows(("Bo", "Go on then, what's your favourite board game?"), (N, "Mine would be Carcassonne."))
    assert (N, "favourite:game", "Carcassonne", False) in got


def test_a_swap_supersedes_the_old_tool() -> None:
    evs = [LayerEvent("0", N, "I use a Pixel.", T0, "c", seq=0),
           LayerEvent("1", N, "I swapped my Pixel for an iPhone.", T0 + timedelta(days=7), "c", seq=1)]
    tl = build_timeline(extract_all(evs))[0]
    old = [a for a in tl if a.attribute == "uses:phone" and a.value == "Pixel" and not a.negated]
    assert old and old[0].superseded_by is not None


def test_normalise_keeps_nouns_in_ing() -> None:
    assert normalise("My sister's wedding is in May.") == "My sister's wedding is in May."
    assert normalise("My sister's moving to Hull.") == "My sister is moving to Hull."


def timeline_of(*turns: tuple[str, str]):
    evs = [LayerEvent(str(i), sp, text, T0 + timedelta(days=7 * i), "c", seq=i) for i, (sp, text) in enumerate(turns)]
    return build_timeline(extract_all(evs))[0]


def test_a_plan_changed_with_instead_alone() -> None:
    tl = timeline_of((N, "We're thinking of Madeira for the anniversary."), (N, "Change of plan, we're doing Gozo instead."))
    old = [a for a in tl if a.value == "Madeira"]
    assert old and old[0].superseded_by is not None
    assert [a for a in tl if a.attribute == "plan:trip" and a.value == "Gozo" and not a.negated]


def test_moved_again_and_a_get_passive() -> None:
    tl = timeline_of((N, "We moved to Ripon in 2019."), (N, "We've moved again, to Selby this time."),
                     (N, "My cousin Wilf works for Dunmere Bank."), (N, "Wilf got headhunted by Ostrander Capital."))
    assert [a.value for a in tl if a.attribute == "lives_in"] == ["Ripon", "Selby"]
    wilf = [(a.value, a.superseded_by is not None) for a in tl if a.entity == "Wilf" and a.attribute == "works_at"]
    assert wilf == [("Dunmere Bank", True), ("Ostrander Capital", False)]


def test_she_is_the_person_talked_about_not_an_organisation_or_an_opening_word() -> None:
    tl = timeline_of(("Rhys", "Is Ottoline still at the bakery?"), ("Gwen", "No. She's working at the garden centre now."),
                     ("Gwen", "Actually she's just been made supervisor there."),
                     ("Gwen", "Her brother got poached by Thistle Analytics. He's left Thistle already, he's freelancing now."),
                     ("Gwen", "Right, she changed her major to physics."))
    people = {(a.entity, a.attribute, a.value) for a in tl}
    assert ("Ottoline", "job_title", "supervisor") in people
    assert not [p for p in people if p[0] in ("Thistle", "Thistle Analytics", "Right")]


def test_a_welcome_names_what_one_joins_and_a_team_one_is_in() -> None:
    got = rows(("Priya", "Welcome to Calloway Insurance, Omar!"), ("Omar", "Thanks! I'm in the claims team, right?"),
               ("Priya", "Welcome to Lisbon, Omar!"))
    assert ("Omar", "works_at", "Calloway Insurance", False) in got
    assert not [r for r in got if r[2] == "Lisbon"]
    assert (N, "studies", "politics", False) in rows((N, "Done, I've switched to politics."))


def test_a_name_after_she_can_be_who_he_is() -> None:
    got = rows((N, "She met Anselm at the gym. He is a paramedic."))
    assert ("Anselm", "job_title", "paramedic", False) in got


def test_a_provider_one_is_with_where_a_service_is_talked_about() -> None:
    tl = timeline_of(("Agent", "Which energy supplier are you with at the moment?"),
                     (N, "We're with Corrigan Power, but the deal ends soon."),
                     ("Agent", "Would you consider moving to us?"), (N, "Yes, we've signed up with Lumen Home now."))
    got = [(a.attribute, a.value, a.superseded_by is not None) for a in tl]
    assert ("uses:energy", "Corrigan Power", True) in got and ("uses:energy", "Lumen Home", False) in got
    assert not [a for a in tl if a.attribute == "works_at"]


def test_more_pets_schools_homes_and_hobbies() -> None:
    tl = timeline_of((N, "We got a dog last month."), (N, "She's a cavapoo called Dot."),
                     ("Ma", "Is Ivo at big school yet?"), ("Pa", "He's starting at Fenmore Grammar next term."),
                     (N, "We've found a flat in Wells."), (N, "I'm not doing archery any more."))
    got = {(a.entity, a.attribute, a.value, a.negated) for a in tl}
    assert {(N, "pet_name:dog", "Dot", False), ("Ivo", "school", "Fenmore Grammar", False),
            (N, "moving_to", "Wells", False), (N, "hobby", "archery", True)} <= got
    assert not [g for g in got if g[1] == "works_at"]


def test_a_lab_is_no_dog() -> None:
    assert not [r for r in rows((N, "Sorry, I have a lab until 8.")) if r[1] == "has_pet"]


def test_a_student_studies_a_subject_at_a_school() -> None:
    got = rows((N, "I'm a third-year geology student at Pellham."), (N, "My cousin is a law undergrad."))
    assert {(N, "studies", "geology", False), (N, "school", "Pellham", False),
            ("Oona's cousin", "studies", "law", False)} <= got
    assert not [r for r in got if r[1] in ("job_title", "works_at")]


def test_a_named_subject_shares_its_second_verb_and_plural_relations_are_subjects() -> None:
    got = rows((N, "Uncle Ferdie has sold his boat and moved into a cottage in Alnwick."),
               (N, "Our neighbours have moved to Crete."), (N, "I'm a part-time barista at Quill Coffee."))
    assert {("Uncle Ferdie", "lives_in", "Alnwick", False), ("Oona's neighbours", "lives_in", "Crete", False),
            (N, "job_title", "barista", False)} <= got


@pytest.mark.parametrize("text, thing, liking", [
    ("I really enjoyed The Glass Orchard.", "glass orchard", "likes"),
    ("I quite like bouldering.", "bouldering", "likes"),
    ("I'm a lifelong fan of Nina Simone.", "nina simone", "likes"),
    ("I can't get enough of oat biscuits.", "oat biscuits", "likes"),
    ("I'm loving the new Hollis album.", "new hollis album", "likes"),
    ("I thought Quiet Harbour was gripping.", "quiet harbour", "likes"),
    ("I didn't really enjoy the sequel.", "sequel", "dislikes"),
    ("I found Wolf Hall a bit of a slog.", "wolf hall", "dislikes"),
    ("Sudoku's never really been my thing.", "sudoku", "dislikes"),
    ("I couldn't get into Ulysses.", "ulysses", "dislikes"),
])
def test_likings_in_any_tense(text: str, thing: str, liking: str) -> None:
    got = {(r[1], r[2]) for r in rows((N, text)) if r[1].startswith("opinion:")}
    assert (f"opinion:{thing}", liking) in {(a.lower(), v) for a, v in got}


@pytest.mark.parametrize("text", ["I love you!", "I like the sound of that.", "I really enjoyed our chat.",
                                  "I like to think so.", "I loved every minute.", "I really like your new haircut."])
def test_no_liking_of_a_person_a_chat_or_a_manner_of_speaking(text: str) -> None:
    assert not [r for r in rows((N, text)) if r[1].startswith("opinion:")]


def test_parties_of_every_name_and_their_fate() -> None:
    got = rows((N, "We're throwing Bea a leaving do on Friday."), (N, "The barbecue's cancelled, sadly."),
               (N, "We're having a christening for Tam in June."))
    assert {(N, "plan:party", "planned", False), (N, "plan:barbecue", "planned", True),
            (N, "plan:christening", "planned", False)} <= got


def test_people_ages_and_titles() -> None:
    got = rows((N, "My boyfriend Caio moved in last week."), (N, "I've been with Caio for two years."),
               (N, "Jem dumped me."), (N, "Our little girl turned three yesterday."), (N, "My son is in Year 5 at Holt Lane."),
               (N, "I'll be forty in May."), (N, "I've been at the Larder for a decade as the sous chef."))
    assert not [r for r in got if r[1] == "works_at" and r[2] == "Caio"]
    assert not [r for r in got if r[1] == "lives_in"]
    assert {(N, "relationship_status", "single", False), ("Oona's little girl", "age", "3", False), (N, "age", "40", False),
            (N, "job_title", "sous chef", False)} <= got


def test_roles_said_as_nouns() -> None:
    got = rows((N, "This is Marguerite, our HR manager."), (N, "As a physiotherapist, I'd rest it."),
               (N, "Ivo from payroll is leaving."))
    assert {("Marguerite", "job_title", "hr manager", False), (N, "job_title", "physiotherapist", False),
            ("Ivo", "works_in", "payroll", False)} <= got


def test_a_move_to_a_firm_is_a_new_job_and_its_title() -> None:
    tl = timeline_of((N, "I'm a junior designer at Pallet Studio."), (N, "I've moved to Fernhill Games as art director."),
                     (N, "I'm learning the cello."), (N, "I gave up the cello."))
    got = {(a.attribute, a.value, a.superseded_by is not None) for a in tl}
    assert {("works_at", "Pallet Studio", True), ("works_at", "Fernhill Games", False), ("job_title", "art director", False),
            ("hobby", "cello", True)} <= got
    assert not [a for a in tl if a.attribute == "lives_in"]


def test_a_thing_chosen_as_our_something_is_no_title() -> None:
    assert not [r for r in rows((N, "We went with Brindle as our caterer.")) if r[1] == "job_title"]


def test_households_upbringing_work_kept_and_pet_lists() -> None:
    got = rows((N, "We've relocated the whole family to Tralee."), (N, "I was brought up in Ålesund."),
               (N, "I've worked at Brack & Sons since 2012."), (N, "I've taken a job as a postman."),
               (N, "I've become a grandmother!"), (N, "We have a dog and two hamsters."))
    assert {(N, "lives_in", "Tralee", False), (N, "from", "Ålesund", False), (N, "works_at", "Brack & Sons", False),
            (N, "job_title", "postman", False), (N, "has_pet", "dog", False), (N, "has_pet", "hamster", False)} <= got
    assert (N, "job_title", "grandmother", False) not in got


def test_a_switch_only_thought_about_a_move_home_and_a_new_starter_are_no_changes() -> None:
    tl = timeline_of(("Jules", "Hi, I'm a second-year history student."), ("Jules", "I'm thinking about switching to politics."),
                     ("Pat", "I've moved to Deal now, so I'll need a new GP."), ("Omar", "Hi, I'm the new starter."))
    got = {(a.entity, a.attribute, a.value, a.superseded_by is not None) for a in tl}
    assert ("Jules", "studies", "history", False) in got
    assert not [g for g in got if g[2] in ("politics", "starter") or g[1].startswith("uses:")]
