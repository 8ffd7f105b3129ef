"""How the LLM assertion extractor reads an answer, without a server: which items it keeps, how it keys
entities and values as the rules do, and which it drops. Its calls over HTTP, and the timeline they
make through the service: tests/integration/test_llm_assertions.py."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.events import LayerEvent
from app.domain.layers.assertion_claims import settle_all
from app.domain.layers.llm_assertions import LLMAssertionExtractor, attribute_of, parse_completion

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
CONTEXT = [LayerEvent("C1", "Maya", "We're going to Lisbon in July!", T0, "c", seq=0)]
BATCH = [
    LayerEvent("B1", "Maya", "My older sister Leah is married now, and I turned 31 today.", T0 + timedelta(days=1), "c", seq=1),
    LayerEvent("B2", "Jon", "Nice. I really hate hiking, by the way.", T0 + timedelta(days=1, minutes=1), "c", seq=2),
    LayerEvent("B3", "Maya", "Sadly the trip is off.", T0 + timedelta(days=2), "c", seq=3),
]


def read(items: list[dict]) -> tuple[list[tuple], dict]:
    stats = {"items": 0, "kept": 0, "dropped": {}}
    parsed = parse_completion(json.dumps({"assertions": items}))
    out = LLMAssertionExtractor(llm=None)._assertions(parsed, BATCH, CONTEXT, stats)  # type: ignore[arg-type]
    return [(a.id, a.entity, a.attribute, a.value, a.value_key, a.negated) for a in out], stats


@pytest.mark.parametrize("raw, expected", [
    ("lives_in", "lives_in"), ("Works_At", "works_at"), ("favorite:book", "favourite:book"),
    ("opinion : hiking", "opinion:hiking"), ("plan:vacation", "plan:trip"), ("pet_name:dog", "pet_name:dog"),
    ("pet_name", None), ("favourite_colour", None), ("plan:", None), ("lives in", None)])
def test_attributes_are_the_vocabularys(raw, expected):
    assert attribute_of(raw) == expected


def test_entities_values_and_numbers_are_keyed_as_the_rules_key_them():
    rows, stats = read([
        {"event_id": "B1", "entity": "my older sister", "attribute": "relationship_status", "value": "Married"},
        {"event_id": "B1", "entity": "Leah", "attribute": "relationship_status", "value": "married"},
        {"event_id": "B1", "entity": "I", "attribute": "age", "value": 31},
        {"event_id": "B2", "entity": "Jon", "attribute": "opinion:hiking", "value": "dislikes"},
    ])
    assert rows == [
        ("B1#0", "Maya's older sister", "relationship_status", "married", "married", False),
        ("B1#1", "Leah", "relationship_status", "married", "married", False),
        ("B1#2", "Maya", "age", "31", "31", False),
        ("B2#0", "Jon", "opinion:hiking", "dislikes", "dislikes", False),
    ]
    assert stats == {"items": 4, "kept": 4, "dropped": {}}


def test_items_not_grounded_in_the_messages_are_dropped_by_reason():
    _, stats = read([
        {"event_id": "B1", "entity": "she", "attribute": "lives_in", "value": "Lisbon"},  # a pronoun
        {"event_id": "B1", "entity": "Carla", "attribute": "lives_in", "value": "Lisbon"},  # named nowhere
        {"event_id": "B1", "entity": "Maya", "attribute": "relationship_status", "value": "complicated"},
        {"event_id": "B1", "entity": "Maya", "attribute": "age", "value": "30"},  # the message says 31
        {"event_id": "B2", "entity": "Jon", "attribute": "opinion:swimming", "value": "dislikes"},
        {"event_id": "B2", "entity": "Jon", "attribute": "lives_in", "value": "Lisbon"},  # said by Maya, earlier
        {"event_id": "C1", "entity": "Maya", "attribute": "plan:trip", "value": "Lisbon"},  # context, not the batch
        {"event_id": "B2", "entity": "Jon", "attribute": "mood", "value": "happy"},
        {"event_id": "B2", "entity": "Jon", "value": "happy"},
    ])
    assert stats["kept"] == 0 and stats["dropped"] == {"bad_entity": 2, "ungrounded_value": 4, "unknown_event": 1,
                                                       "unknown_attribute": 1, "schema": 1}


def test_a_retraction_may_name_what_the_context_said_and_a_bare_one_takes_the_plan_it_ends():
    rows, _ = read([{"event_id": "B3", "entity": "Maya", "attribute": "plan:vacation", "value": "Lisbon", "negated": True}])
    assert rows == [("B3#0", "Maya", "plan:trip", "Lisbon", "lisbon", True)]
    rows, _ = read([{"event_id": "B3", "entity": "Maya", "attribute": "plan:trip", "value": "planned", "negated": True}])
    assert rows == [("B3#0", "Maya", "plan:trip", "planned", "", True)]  # retracts whatever plan stands
    plan = read([{"event_id": "B1", "entity": "Maya", "attribute": "plan:trip", "value": "planned"}])
    assert plan[0] == [("B1#0", "Maya", "plan:trip", "planned", "planned", False)]


def test_a_bare_cancellation_takes_the_latest_plan_of_its_kind():
    from app.domain.layers.assertions import Assertion

    plan = Assertion("B1#0", "B1", "Maya", "plan:trip", "Lisbon", "lisbon", T0, "Lisbon")
    off = Assertion("B3#0", "B3", "Maya", "plan:trip", "planned", "", T0, "planned", negated=True)
    assert settle_all([plan, off])[1].value_key == "lisbon"


def test_an_answer_without_the_schema_is_refused():
    for bad in ("no json here", '{"facts": []}', '{"assertions": "none"}'):
        with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
            parse_completion(bad)
    assert parse_completion('```json\n{"assertions": []}\n```').assertions == []


def test_a_shorter_form_of_a_named_value_meets_the_claim_it_is_about():
    from app.domain.layers.assertions import Assertion

    joined = Assertion("B1#0", "B1", "Maya", "works_at", "Tallow Studio", "tallow studio", T0, "Tallow Studio")
    left = Assertion("B3#0", "B3", "Maya", "works_at", "Tallow", "tallow", T0, "Tallow", negated=True)
    assert settle_all([joined, left])[1].value_key == "tallow studio"
