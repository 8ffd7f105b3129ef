"""The folds behind the incremental layers (#18 item 4), without a database: a conversation folded in
batches, the state serialised to JSON and read back between batches, ends where one pass over the
whole conversation ends (speaker profiles, standing assertions, surprise scores)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers import engrams, surprise
from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import LiveTimeline, build_timeline, current_values
from app.domain.layers.events import LayerEvent, jsonable

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
LINES = [
    ("Ana", "I live in Boston and I work at Google as an engineer."),
    ("Ben", "Nice! My sister Clara lives in Boston too. She loves hiking!"),
    ("Ana", "Ben, I like jazz and I like climbing. Do you like jazz?"),
    ("Ben", "I like jazz too :) My dog Rex likes the park on Sundays."),
    ("Ana", "Big news: we moved to Denver last month!"),
    ("", "[the call dropped for a minute]"),
    ("Ben", "Ana, my favourite book is Dune. What is yours?"),
    ("Ana", "I don't like climbing anymore, my knee hurts since March 3, 2023."),
    ("Ben", "I no longer live in Portland, I live in Seattle now."),
    ("Ana", "I work at Figma now. Ben and Clara should visit Denver."),
]


def conversation(n: int) -> list[LayerEvent]:
    out = []
    for i in range(n):
        speaker, line = LINES[i % len(LINES)]
        recipient = "Ben" if i % 7 == 3 else None
        out.append(LayerEvent(str(100 + i), speaker, f"{line} #{i}", T0 + timedelta(minutes=5 * i), "c", recipient, i))
    return out


def roundtrip(d: dict) -> dict:
    return json.loads(json.dumps(d))


@pytest.mark.parametrize("batch", [1, 3, 7, 20])
def test_engram_state_folded_in_batches_equals_the_whole_build(batch):
    evs = conversation(45)
    whole = engrams.build_profiles(evs)
    state = engrams.EngramState(["Ana", "Ben"])
    for i in range(0, len(evs), batch):
        state = engrams.EngramState.from_dict(roundtrip(state.to_dict()))
        for e in evs[i : i + batch]:
            state.add(e)
    assert jsonable(state.profiles()) == jsonable(whole)
    assert whole["Ana"].attributes["lives_in"] == ["Denver"]  # Boston was superseded
    assert whole["Ben"].message_count == sum(e.speaker == "Ben" for e in evs)


def test_engram_state_of_another_version_is_not_read():
    d = engrams.EngramState(["Ana"]).to_dict()
    d["version"] = "engrams/0"
    assert engrams.EngramState.from_dict(d) is None
    assert not engrams.EngramState(["Ana"]).knows(["Ana", "Clara"]) and engrams.EngramState(["Ana"]).knows(["Ana", ""])


def test_live_timeline_stands_where_the_whole_timeline_stands():
    asserts = extract_all(conversation(40))
    timeline, _ = build_timeline(asserts)
    live = LiveTimeline()
    for i in range(0, len(asserts), 4):
        live = LiveTimeline.from_dict(roundtrip(live.to_dict()))
        live.add(asserts[i : i + 4])
    assert current_values(live.standing()) == current_values(timeline)
    assert {a.id for a in live.standing()} == {a.id for a in timeline if a.superseded_by is None and not a.negated}


def test_surprise_state_resumed_from_json_scores_like_one_pass():
    evs = conversation(30)
    whole = surprise.score_conversation(evs)
    state = surprise.SurpriseState()
    state.known_names |= {"ana", "ben"}
    scores = []
    for i in range(0, len(evs), 6):
        state = surprise.SurpriseState.from_dict(roundtrip(state.to_dict()))
        scores += [state.update(e) for e in evs[i : i + 6]]
    assert scores == whole
