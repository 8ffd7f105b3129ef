"""The rules' general layer (`assertion_lexicon`): verb and noun lexicons per attribute compiled into clause
frames, so that a wording no pattern was written for still reads as the claim it states. The sentences are
paraphrase probes written for these tests, several wordings per attribute, none taken from the labelled set;
each case is what a user would read on the timeline."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.assertion_values import teacher_of, title, typed_attribute
from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 2, 5, 9, 0, tzinfo=timezone.utc)  # a Monday
N = "Ines"


def rows(*turns: tuple[str, str]) -> set[tuple]:
    evs = [LayerEvent(str(i), sp, text, T0 + timedelta(days=7 * i), "c", seq=i) for i, (sp, text) in enumerate(turns)]
    return {(a.entity, a.attribute, a.value, a.negated) for a in extract_all(evs)}


def timeline(*texts: str):
    evs = [LayerEvent(str(i), N, t, T0 + timedelta(days=7 * i), "c", seq=i) for i, t in enumerate(texts)]
    return build_timeline(extract_all(evs))[0]


# ------------------------------------------------------------------ paraphrase probes, per attribute

PROBES = [
    # where one lives
    ("We're in Lisbon now.", {(N, "lives_in", "Lisbon", False)}),
    ("I relocated to Tallinn in March.", {(N, "lives_in", "Tallinn", False)}),
    ("I call Vienna home now.", {(N, "lives_in", "Vienna", False)}),
    ("We ended up in Leeds after all that.", {(N, "lives_in", "Leeds", False)}),
    ("We've made the move to Porto.", {(N, "lives_in", "Porto", False)}),
    ("We finally settled down in Aarhus.", {(N, "lives_in", "Aarhus", False)}),
    ("I'm back in Dundee for good.", {(N, "lives_in", "Dundee", False)}),
    ("My parents live out in Galway.", {("Ines's parents", "lives_in", "Galway", False)}),
    ("Happy Sunday from my tiny flat in Whitby!", {(N, "lives_in", "Whitby", False)}),
    # a move to come
    ("We're relocating to Perth in the autumn.", {(N, "moving_to", "Perth", False)}),
    ("I'm thinking of moving to Oslo.", {(N, "moving_to", "Oslo", False)}),
    ("We're about to move to Ghent.", {(N, "moving_to", "Ghent", False)}),
    ("The plan is to move to Cardiff in June.", {(N, "moving_to", "Cardiff", False)}),
    ("Arvane is sending me to Osaka for two years.", {(N, "moving_to", "Osaka", False)}),
    # origin
    ("I was born in Accra.", {(N, "from", "Accra", False)}),
    ("I come from Tromsø originally.", {(N, "from", "Tromsø", False)}),
    # employer
    ("I'm with Corvex now.", {(N, "works_at", "Corvex", False)}),
    ("I'm employed by Marrow Group.", {(N, "works_at", "Marrow Group", False)}),
    ("I'm now at Orrin Systems.", {(N, "works_at", "Orrin Systems", False)}),
    ("I'm joining Vantor next month.", {(N, "works_at", "Vantor", False)}),
    ("I handed in my notice at Calder.", {(N, "works_at", "Calder", True)}),
    ("I got the Fennick job!", {(N, "works_at", "Fennick", False)}),
    ("I'm driving for Tolland Freight now.", {(N, "works_at", "Tolland Freight", False), (N, "job_title", "driver", False)}),
    ("I'm still temping at Ashby Library.", {(N, "works_at", "Ashby Library", False), (N, "job_title", "temp", False)}),
    # occupation
    ("I've been working as a translator.", {(N, "job_title", "translator", False)}),
    ("I'm the new office manager.", {(N, "job_title", "office manager", False)}),
    ("I retrained as a plumber.", {(N, "job_title", "plumber", False)}),
    ("I'm an emergency call handler now.", {(N, "job_title", "emergency call handler", False)}),
    ("I teach piano, mostly to adults.", {(N, "job_title", "piano teacher", False)}),
    ("I've taken over from Rob as site coordinator.", {(N, "job_title", "site coordinator", False)}),
    # team
    ("I joined the data team in May.", {(N, "works_in", "data team", False)}),
    ("I got moved onto the night team.", {(N, "works_in", "night team", False)}),
    # study and school
    ("I'm doing a degree in history.", {(N, "studies", "history", False)}),
    ("I'm enrolled at Dunmore College.", {(N, "school", "Dunmore College", False)}),
    ("I'm in my second year of geology at Tarnwell University.",
     {(N, "studies", "geology", False), (N, "school", "Tarnwell University", False)}),
    # relationships
    ("I've got a girlfriend now.", {(N, "relationship_status", "in a relationship", False)}),
    ("I've been single since March.", {(N, "relationship_status", "single", False)}),
    # pets
    ("I come with a very needy whippet called Dot.", {(N, "has_pet", "dog", False), (N, "pet_name:dog", "Dot", False)}),
    ("I adopted a second cat, Miso.", {(N, "has_pet", "cat", False), (N, "pet_name:cat", "Miso", False)}),
    # likes and dislikes
    ("I'm obsessed with pottery.", {(N, "opinion:pottery", "likes", False)}),
    ("I've grown to love cycling.", {(N, "opinion:cycling", "likes", False)}),
    ("Honestly, opera is not my thing.", {(N, "opinion:opera", "dislikes", False)}),
    # plans
    ("We're thinking of going to Iceland in spring.", {(N, "plan:trip", "Iceland", False)}),
    ("We've booked flights to Reykjavik for March.", {(N, "plan:trip", "Reykjavik", False)}),
    ("We want two weeks in Crete this summer.", {(N, "plan:trip", "Crete", False)}),
    ("I signed up for the Dale half marathon.", {(N, "plan:race", "Dale half marathon", False)}),
    # tools, services, apps
    ("I have my car insurance with Brookline.", {(N, "uses:insurer", "Brookline", False)}),
    ("Our mortgage is with Hallam Building Society.", {(N, "uses:lender", "Hallam Building Society", False)}),
    ("I switched from Android to an iPhone.", {(N, "uses:phone", "iPhone", False)}),
    ("I deleted Tindle this morning.", {(N, "uses:app", "Tindle", True)}),
    # hobbies, groups, ages
    ("I took up pottery.", {(N, "hobby", "pottery", False)}),
    ("I've stepped down from the committee.", {(N, "member_of", "committee", True)}),
    ("I'll be 50 in June.", {(N, "age", "50", False)}),
    # relatives and named people
    ("My husband's a firefighter.", {("Ines's husband", "job_title", "firefighter", False), (N, "relationship_status", "married", False)}),
    ("My brother just started uni in Leeds.", {("Ines's brother", "school", "Leeds", False)}),
    ("Tom works for the council now.", {("Tom", "works_at", "council", False)}),
    ("I married Tom in June.", {(N, "relationship_status", "married", False)}),
    ("We've split.", {(N, "relationship_status", "single", False)}),
    ("We're emigrating to Canada in the new year.", {(N, "moving_to", "Canada", False)}),
    ("I'm doing an MSc in data science at Coldharbour University.",
     {(N, "studies", "data science", False), (N, "school", "Coldharbour University", False)}),
    ("We cancelled the trip to Bruges.", {(N, "plan:trip", "Bruges", True)}),
    ("Our holiday in Corfu got cancelled.", {(N, "plan:trip", "Corfu", True)}),
    ("I joined the Riverside Runners last month.", {(N, "member_of", "Riverside Runners", False)}),
    ("I joined a book lovers group.", {(N, "member_of", "book lovers group", False)}),
    ("I bank with Monzo.", {(N, "uses:bank", "Monzo", False)}),
    ("I'm taking my dog to the vet.", {(N, "has_pet", "dog", False)}),
    # named third parties, trips in progress, degrees by name
    ("Jonas left Fenwick to join Quarry Labs.", {("Jonas", "works_at", "Fenwick", True), ("Jonas", "works_at", "Quarry Labs", False)}),
    ("We're flying out to Lima next Thursday.", {(N, "plan:trip", "Lima", False)}),
    ("I'm taking the kids to Devon for half term.", {(N, "plan:trip", "Devon", False)}),
    ("Tom's taking a job in Dubai.", {("Tom", "moving_to", "Dubai", False)}),
    ("I've been promoted to team lead.", {(N, "job_title", "team lead", False)}),
    ("I'm studying for my nursing degree.", {(N, "studies", "nursing", False)}),
    ("Sophie's just started her PhD in chemistry at Aldgate University.",
     {("Sophie", "studies", "chemistry", False), ("Sophie", "school", "Aldgate University", False)}),
    ("I'm worried about my son, he's 21 and studying abroad.", {("Ines's son", "age", "21", False)}),  # not the speaker's
    ("I got a Labrador puppy last week, she's called Maple.", {(N, "has_pet", "dog", False), (N, "pet_name:dog", "Maple", False)}),
    ("We've finally bought a house in Leamington!", {(N, "lives_in", "Leamington", False)}),
    ("We're spending Christmas in Vienna this year.", {(N, "plan:trip", "Vienna", False)}),
    ("I've been made head of marketing.", {(N, "job_title", "head of marketing", False)}),
    ("I've been made redundant.", set()),
    # chat register: lower case, subjects left out, clauses run together
    ("omg i got the job!! starting at brightwave on monday", {(N, "works_at", "Brightwave", False)}),
    ("Working at Fernwood Labs these days.", {(N, "works_at", "Fernwood Labs", False)}),
    ("Currently living in a tiny flat in Hackney.", {(N, "lives_in", "Hackney", False)}),
    ("ugh I'm so done with running", {(N, "opinion:running", "dislikes", False)}),
    ("After ten years at Halden I finally left.", {(N, "works_at", "Halden", True)}),
    ("We adopted two kittens, Salt and Pepper!",
     {(N, "has_pet", "cat", False), (N, "pet_name:cat", "Salt", False), (N, "pet_name:cat", "Pepper", False)}),
    ("Big news: I'm going back to uni to study nursing.", {(N, "studies", "nursing", False)}),
    ("I've been working at the Grand Hotel since May, as a receptionist.",
     {(N, "works_at", "Grand Hotel", False), (N, "job_title", "receptionist", False)}),
    ("My boss at Kestrel Bank is lovely.", {(N, "works_at", "Kestrel Bank", False)}),
    ("First day at Tern Labs tomorrow!", {(N, "works_at", "Tern Labs", False)}),
    ("I'm seeing a guy from work.", {(N, "relationship_status", "in a relationship", False)}),
    ("I'm a widow.", {(N, "relationship_status", "widowed", False)}),
    ("I've always loved swimming.", {(N, "opinion:swimming", "likes", False)}),
    ("I've gone off coffee.", {(N, "opinion:coffee", "dislikes", False)}),
    ("We've decided against the Paris trip.", {(N, "plan:trip", "Paris", True)}),
    ("I'm hosting a dinner party on Saturday.", {(N, "plan:party", "planned", False)}),
    ("I play in a five-a-side league on Thursdays.", {(N, "member_of", "five-a-side league", False)}),
    ("I've started learning Spanish.", {(N, "hobby", "Spanish", False)}),
    ("We've moved from Jenkins to GitHub Actions.", {(N, "uses:ci", "GitHub Actions", False)}),
    ("I am doing my internship at the Larch Institute in August.", {(N, "plan:internship", "Larch Institute", False)}),
]


@pytest.mark.parametrize("text, expected", PROBES)
def test_paraphrases_read_as_the_claim_they_state(text, expected):
    assert rows((N, text)) == expected


@pytest.mark.parametrize("text", [
    "I'm going to Tesco.",  # no time: an errand, not a trip
    "Yes, as a matter of fact the report is done.",  # "a matter of": no title
    "I'm the reason we were late.",
    "I'm cooking for Sam tonight.",  # a person cooked for, not an employer
    "I'm a morning person.",
    "I was at the Hollis Group party on Friday.",  # was there, not works there
    "I'm off to bed.",
    "Our old dog Rufus died last year.",  # a pet that is gone
    "We split the bill.",
    "It made me remember how lucky I am.",
    "We got a few fish at the lake.",  # caught, not kept
    "Cycling is a great way to relax.",
    "He taught us to be kind.",
    "Studying old maps is fun.",
    "I'm an expert hiker by now.",
    "I'm obsessed with the way the light falls here.",
    "My parents are well taken care of.",
    "I'm gonna visit the Kettle Street Library on Monday.",  # a venue, not a trip
    "Marta has been a great mentor to me.",
    "Here's my horse painting from class.",
    "I'm over the moon about it!",
    "I finished my engineering course last month.",  # a course done is no study now
    "I'm studying Ferrand's proofs for the exam.",
])
def test_words_that_state_no_such_claim_add_nothing(text):
    assert rows((N, text)) == set()


# ------------------------------------------------------------------ the mechanisms behind the frames

def test_the_mood_of_the_clause_picks_residence_or_move():
    assert rows((N, "We moved to Lyon in June.")) == {(N, "lives_in", "Lyon", False)}
    assert rows((N, "We're hoping to relocate to Lyon in June.")) == {(N, "moving_to", "Lyon", False)}
    assert rows((N, "We're not living in Lyon any more.")) == {(N, "lives_in", "Lyon", True)}


@pytest.mark.parametrize("value, attribute", [
    ("Harbour Choir", "member_of"), ("Kestrel University", "school"), ("Tern Labs", "works_at"),
    ("billing team", "works_in"), ("Postgres", None),
])
def test_a_named_values_head_noun_picks_its_attribute(value, attribute):
    assert typed_attribute("works_at", value) == attribute


def test_joining_a_name_takes_the_attribute_its_head_noun_says():
    assert rows((N, "I'm joining Kestrel University in September.")) == {(N, "school", "Kestrel University", False)}
    assert rows((N, "I'm joining Tern Labs next month.")) == {(N, "works_at", "Tern Labs", False)}


@pytest.mark.parametrize("raw, expected", [
    ("senior data analyst at", "data analyst"), ("dispatcher", "dispatcher"), ("volunteer coordinator", "volunteer coordinator"),
    ("matter of fact", None), ("member", None), ("head of sales", "head of sales"), ("dinner", None),
])
def test_a_title_ends_in_an_occupation_or_a_titles_shape(raw, expected):
    assert title(raw) == expected


def test_what_one_teaches_names_the_teacher():
    assert teacher_of("English") == "English teacher" and teacher_of("kids") is None
    tl = timeline("I teach guitar.", "I'm quitting the guitar teaching in September.")
    ended = [a for a in tl if a.attribute == "job_title" and a.negated]
    assert [a.value for a in ended] == ["guitar teacher"]


def test_a_band_played_with_is_a_membership_that_leaving_ends():
    tl = build_timeline(extract_all([
        LayerEvent("0", "Dev", "Priya's great, she's played with Lowfield Static for years.", T0, "c", seq=0),
        LayerEvent("1", "Dev", "Priya joined us. She left Lowfield Static last month.", T0 + timedelta(days=9), "c", seq=1),
    ]))[0]
    assert {(a.entity, a.attribute, a.value, a.negated) for a in tl} >= {
        ("Priya", "member_of", "Lowfield Static", False), ("Priya", "member_of", "Lowfield Static", True)}


def test_a_switch_to_a_new_name_takes_the_one_kind_of_service_held():
    tl = timeline("I have my home insurance with Brookline.", "We're switching to Calder Mutual at renewal.")
    new = next(a for a in tl if a.value == "Calder Mutual")
    assert new.attribute == "uses:insurer"
    assert next(a for a in tl if a.value == "Brookline").superseded_by == new.id


def test_a_swap_names_the_old_and_the_new_value():
    tl = timeline("We use Asana.", "We've swapped Asana for Trello.")
    new = next(a for a in tl if a.value == "Trello" and not a.negated)
    assert new.attribute == "uses:tracker"
    assert next(a for a in tl if a.value == "Asana" and not a.negated).superseded_by == new.id


@pytest.mark.parametrize("then", ["Crete isn't happening any more.", "Crete's been cancelled, sadly."])
def test_a_plan_said_to_be_off_in_other_words_ends(then):
    tl = timeline("We're going to Crete in June.", then)
    assert any(a.attribute == "plan:trip" and a.value == "Crete" and a.negated for a in tl)


def test_a_plan_that_is_over_has_happened_and_is_not_cancelled():
    tl = timeline("We're going to Crete in June.", "Well, Crete is over, what a week that was.")
    assert not any(a.negated for a in tl)


def test_she_stands_for_the_whole_name_and_not_for_a_thing_named_with_the():
    assert rows((N, "I sat next to Joyce Pemberton, she's chaired the committee for years.")) == {
        ("Joyce Pemberton", "member_of", "committee", False)}
    assert rows((N, "Priya's joined the Tin Orchard. She left Lowfield Static.")) == {("Priya", "works_at", "Lowfield Static", True)}


def test_a_pet_of_someone_named_is_theirs():
    assert rows((N, "Joyce's terrier Mabel patrols the paths.")) == {
        ("Joyce", "pet_name:dog", "Mabel", False), ("Joyce", "has_pet", "dog", False)}


def test_notice_handed_in_for_a_new_job_is_no_claim_of_its_own_but_a_quit_is():
    assert rows((N, "I handed in my notice at Calder. I start at Brisk on May 6.")) == {(N, "works_at", "Brisk", False)}
    assert (N, "works_at", "Calder", True) in rows((N, "I quit Calder in December. Now I work at Brisk."))


def test_a_child_starting_at_a_nursery_goes_to_school_there():
    assert rows((N, "My daughter Orla starts at Hollybank Nursery on the 2nd.")) == {
        ("Orla", "school", "Hollybank Nursery", False)}


def test_a_relative_named_with_a_place_lives_there_and_a_stay_with_them_is_the_speakers_too():
    assert rows((N, "We're staying with my sister Hanne in Ilkley for now.")) == {
        (N, "lives_in", "Ilkley", False), ("Hanne", "lives_in", "Ilkley", False)}


def test_a_speaker_named_in_full_before_speaking_is_one_holder_and_their_change_supersedes():
    evs = [LayerEvent("0", "Bea", "You'll be next to Joyce Pemberton, she's chaired the committee for years.", T0, "c", seq=0),
           LayerEvent("1", "Joyce", "I've stepped down from the committee, by the way.", T0 + timedelta(days=9), "c", seq=1)]
    tl = build_timeline(extract_all(evs))[0]
    held = next(a for a in tl if not a.negated)
    ended = next(a for a in tl if a.negated)
    assert held.entity == ended.entity == "Joyce Pemberton" and held.superseded_by == ended.id


def test_a_title_said_as_a_fragment_before_its_start():
    assert (N, "job_title", "sound engineer", False) in rows((N, "I got the Halvard job!! sound engineer, started on the 7th"))


def test_leaving_us_ends_the_job_that_stands_and_a_home_named_by_its_place_is_where_one_lives():
    tl = build_timeline(extract_all([
        LayerEvent("0", "Ana", "We've hired Greta as our first designer at Tallyo.", T0, "c", seq=0),
        LayerEvent("1", "Ana", "Greta is leaving us at the end of the month.", T0 + timedelta(days=9), "c", seq=1),
    ]))[0]
    ended = [a for a in tl if a.negated and a.entity == "Greta"]
    assert [(a.attribute, a.value) for a in ended] == [("works_at", "Tallyo")]
    assert rows((N, "The Hamburg flat is great, tiny kitchen though.")) == {(N, "lives_in", "Hamburg", False)}


@pytest.mark.parametrize("first, then, expected", [
    ("I work at Pallas.", "I finished at Pallas on Friday.", (N, "works_at", "Pallas", True)),
    ("We use Heroku.", "We've moved off Heroku.", (N, "uses:hosting", "Heroku", True)),
    ("I'm dating Leo.", "Leo and I are over.", (N, "relationship_status", "single", False)),
])
def test_endings_said_in_other_words(first, then, expected):
    assert expected in rows((N, first), (N, then))


def test_with_two_speakers_you_in_the_first_turn_is_the_other_one():
    evs = [LayerEvent("0", "Grace", "How was your first week at Dunmore College?", T0, "c", seq=0),
           LayerEvent("1", "Leo", "Fine, thanks.", T0 + timedelta(minutes=1), "c", seq=1)]
    assert {(a.entity, a.attribute, a.value) for a in extract_all(evs)} == {("Leo", "school", "Dunmore College")}


def test_doing_a_subject_of_study_is_studying_it_and_doing_a_hobby_is_not():
    assert rows((N, "I'm doing biochemistry at Larch.")) == {(N, "studies", "biochemistry", False)}
    assert not any(r[1] == "studies" for r in rows((N, "I'm doing pottery on Tuesdays.")))
