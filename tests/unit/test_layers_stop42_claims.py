"""What /timeline no longer shows since assertions/11 (and graph_extract/14): a sentence adverb that opens a sentence ("Sadly she left us",
"Funnily enough she's just moved") is not the person "she" stands for, so the claim goes to the one named before;
a value that is only a time ("works at Christmas", "Updated from 2 November") names no place, organisation or
plan. Sentences invented for these tests; each asserts what a user would read on the timeline."""
from __future__ import annotations

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
    # a place beside a time is still read
    tl = timeline(("Ayse", "I'm working at Lakeside Books over Christmas."))
    assert entry(tl, "works_at", "Lakeside Books").entity == "Ayse"
