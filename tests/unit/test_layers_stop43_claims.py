"""Whom a claim read off a name is about, since assertions/12 (the span reader's subjects, stop 43): a person named
just before an employer ("Tobias from Quarrymill Joinery", "Dr Achebe at Fernbank Surgery"), a name beside a role
("my line manager Oksana", "Gustaf, my manager"), a question put to the one spoken to ("So how's Dunmarrow?", "Are
you still at Fennick & Rowe?"), the person "he" or "she" carries on from ("Funke's leaving us in March, she's got a
fellowship in Trevane"); and "said yes" is an engagement only where a proposal was made. The shipped span model
reads the names, as the service does. Sentences invented for these tests; each asserts what a user would read on the
timeline."""
from __future__ import annotations

from app.domain.layers.assertion_spans import role_holder
from tests.unit.layers_generalise_support import span_claims as claims


def test_a_person_named_just_before_an_employer_works_there_not_the_speaker():
    got = claims(("Noor", "Tobias from Quarrymill Joinery is coming to measure up on Thursday."),
                 ("Noor", "Dr Achebe at Fernbank Surgery wants to see me again next week."))
    assert ("Tobias", "works_at", "Quarrymill Joinery") in got
    assert ("Dr Achebe", "works_at", "Fernbank Surgery") in got
    assert ("Mei-Ling", "works_at", "Harbour Lane Dental") in claims(  # a name may end in -ing
        ("Noor", "Mei-Ling from Harbour Lane Dental rang."))
    assert not any(e == "Noor" and attr == "works_at" for e, attr, _ in got)


def test_a_greeting_or_an_acronym_before_at_or_from_is_no_one():
    got = claims(("Noor", "Greetings from Harlow Bay! We moved in on Friday."),
                 ("Noor", "I'm an SRE at Corvane Systems."))
    assert ("Noor", "lives_in", "Harlow Bay") in got
    assert ("Noor", "works_at", "Corvane Systems") in got
    assert not any(e in ("Greetings", "SRE") for e, _, _ in got)


def test_a_name_beside_a_role_holds_it():
    assert role_holder("my line manager Oksana wants it by Friday", 3, 15) == "Oksana"
    assert role_holder("Gustaf, my manager, wants it by Friday", 11, 18) == "Gustaf"
    assert role_holder("the new lead is Arjun Castell from Monday", 8, 12) == "Arjun Castell"
    assert role_holder("Tuan's our stage manager", 11, 24) == "Tuan"
    assert role_holder("my manager, Monday to Friday", 3, 10) is None  # a weekday is no one
    assert role_holder("I'm a nurse at Kelso General", 6, 11) is None
    assert role_holder("I'm a nurse, Tom, nights are normal", 6, 11) is None  # Tom is spoken to
    got = claims(("Noor", "Honestly, my line manager Oksana wants the report by Friday."))
    assert ("Oksana", "job_title", "line manager") in got and ("Noor", "job_title", "line manager") not in got


def test_a_question_about_a_place_is_about_the_one_asked():
    got = claims(("Tom", "Finally unpacked, the new place is lovely."),
                 ("Noor", "So how's Dunmarrow?"), ("Tom", "Quiet. Good quiet."),
                 ("Noor", "Are you still at Fennick & Rowe?"))
    assert ("Tom", "lives_in", "Dunmarrow") in got and ("Tom", "works_at", "Fennick & Rowe") in got
    assert not any(e == "Noor" for e, _, _ in got)


def test_he_or_she_carries_the_claim_of_the_person_named_before():
    got = claims(("Noor", "Funke's leaving us in March, she's got a fellowship in Trevane."),
                 ("Noor", "And Mr Okafor is leaving us at half term, he's off to teach in Doha."))
    assert ("Funke", "moving_to", "Trevane") in got and ("Okafor", "moving_to", "Doha") in got
    assert not any(e == "Noor" for e, _, _ in got)  # "us" is no first-person subject


def test_said_yes_is_an_engagement_only_after_a_proposal():
    assert not any(attr == "relationship_status" for _, attr, _ in claims(
        ("Noor", "Good news: the council said yes to the extension."),
        ("Noor", "Wiremu said yes, so the catalogue moves next week."),
        ("Noor", "The landlord said yes! I'll ring you tonight with the details.")))  # "ring" a verb: no proposal
    assert ("Noor", "relationship_status", "engaged") in claims(("Noor", "Kai proposed on the pier and I said yes!"))
    assert ("Noor", "relationship_status", "engaged") in claims(("Tom", "Did he ask you in the end?"),
                                                                ("Noor", "He got down on one knee and I said yes"))
