"""The Event shape's pure rules: what makes a retry the same event, and how a batch is planned."""
from __future__ import annotations

from datetime import datetime, timezone

from app.domain.event import Event, StoredEvent, changed_fields, embedding_text, plan_batch, turn_text

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def ev(**kw) -> Event:
    base = {"conversation_id": "c", "event_id": "e1", "speaker": "Ana", "content": "hi", "occurred_at": T0}
    return Event(**(base | kw))


def stored(**kw) -> StoredEvent:
    base = {"conversation_id": "c", "event_id": "e1", "speaker": "Ana", "content": "hi", "occurred_at": T0,
            "id": 7, "ingested_at": T0, "metadata": {}}
    return StoredEvent(**(base | kw))


def test_an_identical_retry_changes_nothing() -> None:
    assert changed_fields(ev(), stored()) == []


def test_each_changed_field_is_named() -> None:
    assert changed_fields(ev(content="hello"), stored()) == ["content"]
    assert changed_fields(ev(speaker="Ben", role="user"), stored()) == ["speaker", "role"]
    assert changed_fields(ev(occurred_at=datetime(2024, 1, 2, tzinfo=timezone.utc)), stored()) == ["occurred_at"]
    assert changed_fields(ev(metadata={"a": 1}), stored()) == ["metadata"]


def test_what_the_server_filled_in_is_not_a_change() -> None:
    # a retry without a time or metadata: the server chose now and {} the first time
    assert changed_fields(ev(occurred_at=None, metadata=None), stored(occurred_at=datetime(2030, 1, 1, tzinfo=timezone.utc),
                                                                      metadata={})) == []
    assert changed_fields(ev(metadata={}), stored(metadata={})) == []


def test_plan_batch_writes_a_repeated_event_id_once() -> None:
    to_write, repeats = plan_batch([ev(), ev(event_id="e2"), ev(), ev(event_id=None), ev(event_id=None)])
    assert to_write == [0, 1, 3, 4] and repeats == {2: 0}


def test_turn_text() -> None:
    assert turn_text("Ana", "We moved.") == "Ana: We moved."
    assert turn_text("", "We moved.") == "We moved."


def test_the_vector_reads_the_words_not_the_name() -> None:
    """What the dense index encodes has no speaker in it (issue #17 item 8); the answer model's
    line of dialogue keeps it."""
    assert embedding_text("How are you finding it?") == "How are you finding it?"
    assert turn_text("Daniel", "How are you finding it?") == "Daniel: How are you finding it?"


def test_the_derived_event_id_is_stable_and_names_all_four_parts() -> None:
    from datetime import timedelta

    from app.domain.event import derive_event_id, with_event_id

    base = derive_event_id("c", "Ana", T0, "hi")
    assert base.startswith("sdk1-") and len(base) == 37
    # the same instant in another zone, or without an offset (taken as UTC), is the same event
    assert derive_event_id("c", "Ana", T0.astimezone(timezone(timedelta(hours=2))), "hi") == base
    assert derive_event_id("c", "Ana", T0.replace(tzinfo=None), "hi") == base
    others = {derive_event_id("d", "Ana", T0, "hi"), derive_event_id("c", "Ben", T0, "hi"),
              derive_event_id("c", "Ana", T0 + timedelta(microseconds=1), "hi"), derive_event_id("c", "Ana", T0, "hi "),
              derive_event_id("c", "Ana", None, "hi")}
    assert base not in others and len(others) == 5
    # an event without an id gets the derived one; a given id is kept
    assert with_event_id(ev(event_id=None)).event_id == base
    assert with_event_id(ev(event_id="mine")).event_id == "mine"


def test_the_sdk_derives_the_same_id_as_the_server() -> None:
    from app.domain.event import derive_event_id
    from palimpsest.client import derive_event_id as sdk_derive

    assert sdk_derive("c", "Ana", T0, "hi") == derive_event_id("c", "Ana", T0, "hi")


def test_a_retry_pointing_its_correction_elsewhere_is_a_change() -> None:
    assert changed_fields(ev(supersedes="e0"), ev(supersedes="e0")) == []
    assert changed_fields(ev(supersedes="e9"), ev(supersedes="e0")) == ["supersedes"]
