"""Changes said in many wordings: the new claim supersedes the old one on the timeline (what a user reads as
"was X, now Y"). Two-turn paraphrase probes written for these tests, none taken from the labelled set."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 2, 5, 9, 0, tzinfo=timezone.utc)


def changes(*texts: str) -> set[tuple]:
    evs = [LayerEvent(str(i), "Ines", t, T0 + timedelta(days=7 * i), "c", seq=i) for i, t in enumerate(texts)]
    tl = build_timeline(extract_all(evs))[0]
    by = {a.id: a for a in tl}
    return {((a.attribute, a.value, a.negated), (by[a.superseded_by].attribute, by[a.superseded_by].value, by[a.superseded_by].negated))
            for a in tl if a.superseded_by in by}


@pytest.mark.parametrize("first, then, old, new", [
    ("I live in Bath.", "We've just moved to Bristol.", ("lives_in", "Bath", False), ("lives_in", "Bristol", False)),
    ("I'm based in Oslo.", "I relocated to Bergen last month.", ("lives_in", "Oslo", False), ("lives_in", "Bergen", False)),
    ("We're in Lyon.", "We're in Dijon now.", ("lives_in", "Lyon", False), ("lives_in", "Dijon", False)),
    ("I work for Arlen.", "I'm at Corvis now.", ("works_at", "Arlen", False), ("works_at", "Corvis", False)),
    ("I work at Holt & Sons.", "I got a job with Marlow Health.", ("works_at", "Holt & Sons", False), ("works_at", "Marlow Health", False)),
    ("I work at Pine Labs.", "I've left Pine Labs.", ("works_at", "Pine Labs", False), ("works_at", "Pine Labs", True)),
    ("I'm a barista.", "I'm a junior developer now.", ("job_title", "barista", False), ("job_title", "junior developer", False)),
    ("I work as a cashier.", "I got promoted to store manager.", ("job_title", "cashier", False), ("job_title", "store manager", False)),
    ("I'm on the sales team.", "I've moved to the marketing team.", ("works_in", "sales team", False), ("works_in", "marketing team", False)),
    ("I study law.", "I switched to history.", ("studies", "law", False), ("studies", "history", False)),
    ("I'm single.", "I'm seeing someone now!", ("relationship_status", "single", False), ("relationship_status", "in a relationship", False)),
    ("I have a boyfriend.", "We broke up last week.", ("relationship_status", "in a relationship", False), ("relationship_status", "single", False)),
    ("We're engaged!", "We got married in June.", ("relationship_status", "engaged", False), ("relationship_status", "married", False)),
    ("I'm 34.", "I turned 35 yesterday.", ("age", "34", False), ("age", "35", False)),
    ("We're going to Rome in May.", "We've switched the trip to Naples.", ("plan:trip", "Rome", False), ("plan:trip", "Naples", False)),
    ("We're going to Rome in May.", "Rome is cancelled.", ("plan:trip", "Rome", False), ("plan:trip", "Rome", True)),
    ("We use Jira.", "We moved to Linear.", ("uses:tracker", "Jira", False), ("uses:tracker", "Linear", False)),
    ("I drive a Corolla.", "I traded the Corolla for a Tesla.", ("uses:car", "Corolla", False), ("uses:car", "Tesla", False)),
    ("I'm with Monzo.", "I've switched to Starling.", ("uses:bank", "Monzo", False), ("uses:bank", "Starling", False)),
    ("I'm a member of Peak Gym.", "I cancelled my Peak Gym membership.", ("member_of", "Peak Gym", False), ("member_of", "Peak Gym", True)),
    ("I play in the Oak Lane band.", "I left the band.", ("member_of", "Oak Lane band", False), ("member_of", "Oak Lane band", True)),
    ("My sister lives in Cork.", "My sister just moved to Galway.", ("lives_in", "Cork", False), ("lives_in", "Galway", False)),
    ("Tom works at Brisk.", "Tom is at Kestrel now.", ("works_at", "Brisk", False), ("works_at", "Kestrel", False)),
])
def test_a_change_in_other_words_supersedes_the_old_claim(first, then, old, new):
    assert (old, new) in changes(first, then)


def test_being_somewhere_now_is_no_new_job_for_one_who_holds_none():
    assert changes("I'm at Heathrow now.", "I'm at Gatwick now.") == set()


def test_a_switch_to_a_word_of_another_kind_changes_nothing():
    assert changes("I study law.", "I switched to decaf.") == set()


def test_a_choice_between_options_replaces_the_plan_and_a_cancellation_to_come_ends_it():
    assert (("plan:trip", "Lisbon", False), ("plan:trip", "Porto", False)) in changes(
        "We're thinking Lisbon for Easter.", "Okay, Porto it is then.")
    assert (("plan:trip", "Porto", False), ("plan:trip", "Porto", True)) in changes(
        "We're going to Porto in April.", "Work's mad, so I'll cancel Porto.")
    assert changes("I'm thinking Sam should come along.", "Pizza it is, then.") == set()
