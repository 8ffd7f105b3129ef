"""The Event shape's pure rules: what makes a retry the same event, and how a batch is planned."""
from __future__ import annotations

from datetime import datetime, timezone

from app.domain.event import Event, StoredEvent, changed_fields, plan_batch, turn_text

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
