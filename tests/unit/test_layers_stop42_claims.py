"""What /timeline no longer shows since assertions/11 (and graph_extract/14): a sentence adverb that opens a
sentence ("Sadly she left us", "Funnily enough she's just moved") is not the person "she" stands for, so the claim
goes to the one named before; a value that is only a time ("works at Christmas", "Updated from 2 November") names no
place, organisation or plan (a name that is also a month, "a cat called May", still does). What it shows that it did not: an occupation in apposition with words of its own or before a title ("our
office manager, Funmi Adeyemi", "their events manager, Mr Oduya"), living on a named street, a "dev". Sentences
invented for these tests; each asserts what a user would read on the timeline."""
from __future__ import annotations

from app.domain.layers.assertion_text import names_a_time
from tests.unit.layers_generalise_support import entry, timeline


def claims(tl) -> list[tuple[str, str, str, bool]]:
    return [(a.entity, a.attribute, a.value, a.negated) for a in tl]


def test_a_sentence_adverb_is_not_whom_she_stands_for():
    tl = timeline(("Nadia", "Our optometrist Dr Haddad is lovely."),
                  ("Nadia", "Sadly she left us in October, she's at the Moorgate Eye Clinic in York now."))
    assert entry(tl, "works_at", "Moorgate Eye Clinic").entity == "Haddad"
    tl = timeline(("Hanna", "My sister Ewa is coming to stay."),
                  ("Hanna", "Funnily enough she's just moved to Hartley Park as well."))
    assert entry(tl, "lives_in", "Hartley Park").entity == "Ewa"
    # a name that opens the sentence is still the one "she" stands for
    tl = timeline(("Hanna", "Ewa called. She's just moved to Hartley Park."))
    assert entry(tl, "lives_in", "Hartley Park").entity == "Ewa"


def test_a_value_that_is_only_a_time_is_no_claim():
    assert claims(timeline(("Ayse", "I'm working at Christmas again, typical."))) == []
    assert claims(timeline(("Hearthly", "Updated from 2 November: after-school club, Monday to Thursday."))) == []
    # a place beside a time is still read, and a name that is also a month is a name
    tl = timeline(("Ayse", "I'm working at Lakeside Books over Christmas."))
    assert entry(tl, "works_at", "Lakeside Books").entity == "Ayse"
    assert not any(names_a_time(v) for v in ("May", "June", "Sun", "Lakeside Books"))
    assert all(names_a_time(v) for v in ("Christmas", "2 November", "Next Saturday", "Thursdays"))


def test_an_occupation_in_apposition_may_carry_its_own_words_and_a_title():
    assert entry(timeline(("Ola", "Our office manager, Funmi Adeyemi, will call you.")), "job_title",
                 "office manager").entity == "Funmi Adeyemi"
    assert entry(timeline(("Ola", "Their events manager, Mr Oduya, rang this morning.")), "job_title",
                 "events manager").entity == "Oduya"
    assert entry(timeline(("Ola", "My tech lead, Mette, wants the tests first.")), "job_title", "tech lead").entity == "Mette"
    # a job gone, or a friend, is no occupation
    assert claims(timeline(("Ola", "My old boss, Tom, rang."))) == []
    assert claims(timeline(("Ola", "My best friend, Leah, rang."))) == []


def test_living_on_a_named_street_is_where_one_lives():
    assert entry(timeline(("Ola", "Nurten is lovely. She lives on Barrow Lane.")), "lives_in", "Barrow Lane").entity == "Nurten"
    assert claims(timeline(("Ola", "I live on a boat these days."))) == []
    assert claims(timeline(("Ola", "She lives on campus."))) == []


def test_a_dev_is_an_occupation():
    tl = timeline(("Ola", "Marjolein is a senior dev at Brindle Digital."))
    assert entry(tl, "job_title", "senior dev").entity == entry(tl, "works_at", "Brindle Digital").entity == "Marjolein"
