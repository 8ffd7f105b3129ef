"""Change patterns and their supersession: moves, jobs, teams, relationships, preferences, tools,
plans and their cancellation, on a timeline built from several turns."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from app.domain.layers.assertion_text import tool_kind
from app.domain.layers.assertions import extract_all, extract_assertions
from app.domain.layers.consolidation import LiveTimeline, build_timeline, current_values
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 2, 1, 9, 0)


def events(*turns: tuple[str, str]) -> list[LayerEvent]:
    return [LayerEvent(str(i), sp, text, T0 + timedelta(days=7 * i), "c", seq=i) for i, (sp, text) in enumerate(turns)]


def claims(text: str, speaker: str = "Rosa") -> set[tuple[str, str, str, bool]]:
    return {(a.entity, a.attribute, a.value, a.negated) for a in extract_assertions(events((speaker, text))[0])}


@pytest.mark.parametrize("text, expected", [
    ("I'm relocating to Tromsø in the spring.", ("Rosa", "moving_to", "Tromsø", False)),
    ("We've settled in Valparaíso at last!", ("Rosa", "lives_in", "Valparaíso", False)),
    ("I joined Quillworks as a designer.", ("Rosa", "works_at", "Quillworks", False)),
    ("I left Quillworks in March.", ("Rosa", "works_at", "Quillworks", True)),
    ("I transferred to the logistics team.", ("Rosa", "works_in", "logistics team", False)),
    ("I've been a staff nurse at Greyhaven Clinic for a year.", ("Rosa", "works_at", "Greyhaven Clinic", False)),
    ("We've been dating since the autumn.", ("Rosa", "relationship_status", "in a relationship", False)),
    ("I'm still single, sadly.", ("Rosa", "relationship_status", "single", False)),
    ("I don't eat mushrooms anymore.", ("Rosa", "opinion:mushrooms", "dislikes", False)),
    ("We migrated to MariaDB last sprint.", ("Rosa", "uses:database", "MariaDB", False)),
    ("I upgraded to Python 3.13 this week.", ("Rosa", "uses:python", "3.13", False)),
    ("We're planning a trip to Reykjavík in June.", ("Rosa", "plan:trip", "Reykjavík", False)),
    ("I turned forty on Sunday.", ("Rosa", "age", "40", False)),
    ("i moved to Ghent last month", ("Rosa", "lives_in", "Ghent", False)),
    ("I've moved into a flat in Ostrava.", ("Rosa", "lives_in", "Ostrava", False)),
    ("My new job at Corvid Systems starts Monday.", ("Rosa", "works_at", "Corvid Systems", False)),
    ("Fennick hired me last week.", ("Rosa", "works_at", "Fennick", False)),
    ("I was promoted to senior engineer.", ("Rosa", "job_title", "senior engineer", False)),
    ("The Prague trip is cancelled.", ("Rosa", "plan:trip", "Prague", True)),
    ("I prefer tea these days.", ("Rosa", "opinion:tea", "likes", False)),
])
def test_one_turn_states_the_change(text, expected):
    assert expected in claims(text)


def test_a_calendar_word_never_extends_a_name():
    assert ("Rosa", "works_at", "Larkspur Labs", False) in claims("I start at Larkspur Labs on May 6.")


def test_moving_to_a_hosting_service_is_a_migration_not_a_move():
    got = claims("We're moving to Fly.io next month and we deploy to Render today.")
    assert not any(a == "moving_to" for _, a, _, _ in got)
    assert ("Rosa", "uses:hosting", "Render", False) in got


def test_pronoun_and_co_subject_name_the_person_meant():
    got = claims("Idris and I are moving to Lagos, he got a job at Palmline.")
    assert ("Idris", "moving_to", "Lagos", False) in got and ("Rosa", "moving_to", "Lagos", False) in got
    assert ("Idris", "works_at", "Palmline", False) in got


def test_pet_named_in_the_next_sentence():
    got = claims("I just adopted a kitten. Her name is Pistachio.")
    assert ("Rosa", "has_pet", "cat", False) in got and ("Rosa", "pet_name:cat", "Pistachio", False) in got  # one spelling per kind


def test_a_new_value_supersedes_the_old_one_and_the_current_value_is_the_newest():
    evs = events(("Rosa", "I work at Quillworks, mostly on the billing team."),
                 ("Rosa", "I switched to the search team last week."),
                 ("Rosa", "We use MySQL for everything."),
                 ("Rosa", "We switched back to Postgres this morning."))
    timeline, contradictions = build_timeline(extract_all(evs))
    by = {(a.attribute, a.value): a for a in timeline}
    assert by[("works_in", "billing team")].superseded_by == by[("works_in", "search team")].id
    assert by[("uses:database", "MySQL")].superseded_by == by[("uses:database", "Postgres")].id
    now = current_values(timeline)
    assert now[("Rosa", "works_in")] == ["search team"] and now[("Rosa", "uses:database")] == ["Postgres"]
    assert {c.kind for c in contradictions} == {"update"}


def test_a_cancelled_plan_ends_the_plan_it_names_or_the_last_one():
    evs = events(("Rosa", "We're planning a trip to Reykjavík in June."),
                 ("Rosa", "Sadly we cancelled the trip."),
                 ("Rosa", "I'm throwing a surprise party for Idris."),
                 ("Rosa", "The party is off."))
    timeline, contradictions = build_timeline(extract_all(evs))
    trip = [a for a in timeline if a.attribute == "plan:trip"]
    assert [a.negated for a in trip] == [False, True] and trip[1].value == "Reykjavík"
    assert trip[0].superseded_by == trip[1].id
    party = [a for a in timeline if a.attribute == "plan:party"]
    assert party[0].superseded_by == party[1].id
    assert ("Rosa", "plan:trip") not in current_values(timeline)
    assert [c.kind for c in contradictions] == ["retraction", "retraction"]


def test_a_cancellation_read_turn_by_turn_ends_the_plan_as_the_whole_log_does():
    """The incremental fold (one event at a time) gets the same standing values as the whole timeline."""
    evs = events(("Rosa", "We're planning a trip to Reykjavík in June."), ("Rosa", "We called off the trip."))
    live = LiveTimeline()
    for e in evs:
        live.add(extract_assertions(e))
    assert not [a for a in live.standing() if a.attribute == "plan:trip"]


def test_a_breakup_outweighs_the_status_the_same_turn_implies():
    got = claims("My girlfriend and I broke up.")
    assert {v for _, a, v, _ in got if a == "relationship_status"} == {"single"}


def test_the_same_claim_twice_in_one_turn_is_one_claim():
    got = [a for a in extract_assertions(events(("Rosa", "We've been dating a year and my girlfriend is lovely."))[0])
           if a.attribute == "relationship_status"]
    assert len(got) == 1


def test_tool_kinds():
    assert tool_kind("PostgreSQL") == "database" and tool_kind("Pixel 8") == "phone" and tool_kind("Quillworks") is None
