"""Claims of assertions/13 (stop 44): a title in apposition whose occupation the lexicon now knows ("Ottoline, our
drummer", "Bastian, our CTO", an acronym no longer taken for a word inside a name), a title without the possessive
that introduced it, a job with words before its noun ("a planning job at X"), whom a span claim is about ("your
address in X", "my nephew Corin came down from X", "my mum's coming over from X", "here in X", "I've hired X as
Y"), a saint's name that is no
subject ("St Aldric's in Wexcombe"), a value that stops at an acronym's full stop, "seeing a physio" that is no
date, "the new flat in X" said of one's own home, a colleague's employer ("my colleague Rasmus": where the
speaker works), a home or a move said with "we" that is the named partner's too, and a visit that is no move. The shipped span model reads the names, as the service does.
Sentences invented for these tests; each asserts what a user would read on the timeline."""
from __future__ import annotations

from app.domain.layers.assertion_text import clean_value
from tests.unit.layers_generalise_support import span_claims as claims


def test_a_title_in_apposition_is_the_named_persons_job():
    got = claims(("Idris", "Ottoline, our drummer, has flu again."),
                 ("Idris", "Bastian, our CTO, signed it off this morning."))
    assert ("Ottoline", "job_title", "drummer") in got
    assert ("Bastian", "job_title", "CTO") in got
    assert not any(e == "Idris" and attr == "job_title" for e, attr, _ in got)


def test_a_title_keeps_no_possessive():
    got = claims(("Wendel", "Hello, I'm Dr Varga, I've taken over as your academic adviser."),
                 ("Wendel", "We're staying with the Lipovac choir. Jarmil, their conductor, will meet us at the bus."))
    assert ("Jarmil", "job_title", "conductor") in got
    assert not any(v.lower().startswith(("your ", "their ")) for _, attr, v in got if attr == "job_title")


def test_a_job_with_words_before_its_noun_names_the_employer():
    got = claims(("Sorcha", "Big news, Kacimir took a planning job at Dunleary Borough Council."),
                 ("Sorcha", "And I got the ICU job at Wexcombe General, starting in March."))
    assert ("Kacimir", "works_at", "Dunleary Borough Council") in got
    assert ("Sorcha", "works_at", "Wexcombe General") in got
    assert ("Sorcha", "works_at", "ICU") not in got


def test_a_saints_name_is_a_place_not_a_person():
    got = claims(("Leontyne", "He'll be a Year 5 teacher at St Aldric's in Wexcombe from September."))
    assert not any(e == "Aldric" for e, _, _ in got)
    assert clean_value("Brightmoor IT. Sure", "proper") == "Brightmoor IT"  # an acronym ends a sentence too
    assert clean_value("Pellory Marine's COO", "proper") == "Pellory Marine"  # the firm, not its officer


def test_whose_the_place_is_follows_the_words_before_it():
    got = claims(("Anselma", "Thanks for holding."),
                 ("Gideon", "That's sorted. I've posted the form to your address in Wexcombe."),
                 ("Anselma", "My nephew Corin came down from Saltmarsh Bay for the weekend."),
                 ("Anselma", "Piet's just started at Fellow & Crane here in Brackwater."))
    assert ("Anselma", "lives_in", "Wexcombe") in got and ("Gideon", "lives_in", "Wexcombe") not in got
    assert any(e == "Corin" and v == "Saltmarsh Bay" for e, _, v in got)
    assert not any(e == "Anselma" and v == "Saltmarsh Bay" for e, _, v in got)
    assert ("Anselma", "lives_in", "Brackwater") in got and ("Piet", "lives_in", "Brackwater") not in got


def test_whom_one_hires_holds_the_title():
    got = claims(("Ysolde", "I've hired Perrin Okwu as assistant winemaker, he starts on 1 August."))
    assert ("Perrin Okwu", "job_title", "assistant winemaker") in got
    assert not any(e == "Ysolde" and attr == "job_title" for e, attr, _ in got)


def test_seeing_a_physio_is_no_relationship_and_the_new_flat_is_the_speakers():
    got = claims(("Maelis", "How was the move?"),
                 ("Tobin", "Made it to practice from the new flat in Dunmore Quay with ten minutes to spare."),
                 ("Tobin", "I'm seeing a physio tomorrow about the knee."))
    assert ("Tobin", "lives_in", "Dunmore Quay") in got and ("Maelis", "lives_in", "Dunmore Quay") not in got
    assert not any(attr == "relationship_status" for _, attr, _ in got)
    asked = claims(("Maelis", "Moved in at last."), ("Tobin", "Is the new flat in Dunmore Quay warm enough?"))
    assert ("Maelis", "lives_in", "Dunmore Quay") in asked  # asked of the one spoken to, it is theirs


def test_a_colleague_works_where_the_speaker_works():
    got = claims(("Orsolya", "I'm a pharmacist at Tamarind Row Pharmacy."), ("Bede", "Oh nice."),
                 ("Orsolya", "My colleague Rasmus Voll is covering Saturday."),
                 ("Orsolya", "Ivo, a colleague of mine, says hi."))
    assert ("Rasmus Voll", "works_at", "Tamarind Row Pharmacy") in got
    assert ("Ivo", "works_at", "Tamarind Row Pharmacy") in got
    # with no employer said, a colleague's is not guessed
    assert not any(attr == "works_at" for _, attr, _ in claims(("Bede", "My colleague Rasmus Voll is covering Saturday.")))


def test_a_relation_opening_the_clause_holds_the_place():
    got = claims(("Ravindra", "My mum's coming over from Port Ellery next week."))
    assert ("Ravindra's mum", "lives_in", "Port Ellery") in got
    assert not any(e == "Ravindra" and v == "Port Ellery" for e, _, v in got)
    # the speaker's own clause after it stays the speaker's
    mine = claims(("Ravindra", "My landlord's selling so I'm leaving Tarnside at the end of May, moving to Kelvedge."))
    assert not any(e == "Ravindra's landlord" for e, _, _ in mine)


def test_a_home_or_move_said_with_we_is_the_partners_too():
    got = claims(("Ilka", "My husband Bertrand starts at the depot next week."),
                 ("Ilka", "And we're moving to Carrow Bay in May!"),
                 ("Ilka", "We're going to Porto for Easter too."))
    assert ("Ilka", "moving_to", "Carrow Bay") in got and ("Bertrand", "moving_to", "Carrow Bay") in got
    assert not any(e == "Bertrand" and attr.startswith("plan:") for e, attr, _ in got)  # a plan's "we" may be anyone
    # with no partner named, "we" is the speaker's alone
    alone = claims(("Ilka", "We're moving to Carrow Bay in May!"))
    assert {e for e, attr, _ in alone if attr == "moving_to"} == {"Ilka"}


def test_a_visit_is_no_move():
    got = claims(("Orla", "We finally moved to Kestrel Bay last spring."),
                 ("Orla", "My sister Nuala visited us in Kestrel Bay in April."))
    assert ("Orla", "lives_in", "Kestrel Bay") in got
    assert not any(e == "Nuala" for e, _, _ in got)
