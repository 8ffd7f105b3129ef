"""L5 surprise index (True Memory §4.1 Stage 4) on a hand-made conversation."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from app.domain.layers.events import LayerEvent
from app.domain.layers.surprise import SurpriseState, fingerprints, score_conversation

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
LINES = [
    ("Ann", "I live in Boston and I teach at Northeastern."),   # e0 all new
    ("Bob", "ok"),                                             # e1 no facts
    ("Ann", "I live in Boston and I teach at Northeastern."),  # e2 nothing new
    ("Ann", "We moved to Denver last month!"),                 # e3 update verb + conflicting value
    ("Bob", "My daughter graduated from MIT on June 3rd."),    # e4 new facts + life event
    ("Ann", "Denver is sunny."),                               # e5 only a known name
]


def events():
    return [LayerEvent(f"e{i}", s, t, T0 + timedelta(days=i), "c1", seq=i) for i, (s, t) in enumerate(LINES)]


def test_fingerprints_cover_numbers_names_dates_events_and_definitions():
    ev = LayerEvent("x", "Bob", "My daughter graduated from MIT on June 3rd, 2 weeks after her birthday.", T0)
    fp = fingerprints(ev)
    assert "name:mit" in fp and "num:2" in fp
    assert any(f.startswith("date:2023-06-03") or f.startswith("date:2024-06-03") for f in fp)
    assert {"event:graduate", "event:birthday"} <= fp
    ev2 = LayerEvent("y", "Ann", "I live in Boston.", T0)
    assert "def:ann|lives_in=boston" in fingerprints(ev2)


def test_sigma_per_event():
    s = score_conversation(events())
    sig = [x.sigma for x in s]
    assert all(0.0 <= x <= 1.0 for x in sig)
    assert sig[0] >= 0.7 and s[0].new_fact_count == s[0].fact_count > 0
    assert sig[1] == 0.0 and s[1].fact_count == 0
    assert sig[2] == 0.0 and s[2].new_fact_count == 0  # a verbatim repeat surprises nobody
    assert s[3].contradiction and sig[3] >= 0.9  # Boston -> Denver, announced by "moved"
    assert sig[4] > sig[5]
    assert s[5].new_fact_count == 0 and not s[5].contradiction


def test_contradiction_without_update_verb_gets_the_smaller_bonus():
    evs = [LayerEvent("a", "Ann", "I live in Boston.", T0), LayerEvent("b", "Ann", "I live in Denver.", T0 + timedelta(days=1))]
    silent = score_conversation(evs)[1]
    evs[1] = LayerEvent("b", "Ann", "I moved to Denver.", T0 + timedelta(days=1))
    loud = score_conversation(evs)[1]
    assert silent.contradiction and loud.contradiction
    assert loud.sigma > silent.sigma


def test_streaming_equals_batch_and_state_survives_serialisation():
    evs = events()
    batch = score_conversation(evs)
    st = SurpriseState()
    first = [st.update(e) for e in evs[:3]]
    resumed = SurpriseState.from_dict(json.loads(json.dumps(st.to_dict())))
    rest = [resumed.update(e) for e in evs[3:]]
    assert [x.sigma for x in first + rest] == [x.sigma for x in batch]


def test_state_of_another_version_starts_over():
    st = SurpriseState.from_dict({"version": "surprise/0", "seen": ["name:x"], "current": {}, "known_names": [], "events": 1})
    assert st.seen == set() and st.events == 0
