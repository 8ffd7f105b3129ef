"""L4 consolidation on hand-made conversations: episodes, summaries, assertions, timeline, contradictions."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from app.domain.layers.assertions import extract_assertions
from app.domain.layers.consolidation import (
    EpisodeConfig,
    build_timeline,
    consolidate,
    current_values,
    segment_episodes,
)
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


def conv(lines, start=T0, step=timedelta(minutes=1)):
    """[(speaker, text) | (speaker, text, offset)] -> events; an offset (timedelta) jumps the clock."""
    out, t = [], start
    for i, line in enumerate(lines):
        if len(line) == 3:
            t = t + line[2]
        out.append(LayerEvent(f"e{i}", line[0], line[1], t, "c1", seq=i))
        t = t + step
    return out


@pytest.fixture(scope="module")
def encode():
    from app.adapters.embedder import get_embedder

    return get_embedder().encode


COOKING = [
    ("Ann", "I baked sourdough bread this morning with my new starter."),
    ("Bob", "Nice! How long did you let the dough proof?"),
    ("Ann", "About twelve hours in the fridge, then two hours at room temperature."),
    ("Bob", "My loaves always come out flat, maybe my oven is not hot enough."),
    ("Ann", "Preheat a Dutch oven to 250 degrees and bake the bread covered for twenty minutes."),
    ("Bob", "I will try that recipe with whole wheat flour this weekend."),
    ("Ann", "Add a little more water, whole wheat flour soaks it up."),
    ("Bob", "Thanks, I love the smell of fresh bread in the kitchen."),
]
CARS = [
    ("Bob", "By the way, my car's transmission broke down on the highway yesterday."),
    ("Ann", "Oh no, did you have to get the car towed to a mechanic?"),
    ("Bob", "Yes, the mechanic says replacing the gearbox costs 3,000 dollars."),
    ("Ann", "That is expensive, maybe a used transmission from a junkyard is cheaper."),
    ("Bob", "The garage also found worn brake pads and a leaking radiator."),
    ("Ann", "Get a second quote from another auto repair shop before paying."),
    ("Bob", "Good idea, I'll call the dealership service center tomorrow."),
    ("Ann", "Ask them whether the car warranty covers the engine parts."),
]


def test_a_six_hour_gap_starts_a_new_episode():
    evs = [
        LayerEvent("e0", "Ann", "Hi Bob, I moved to Denver.", T0, "c1"),
        LayerEvent("e1", "Bob", "Wow, congrats!", T0 + timedelta(minutes=1), "c1"),
        LayerEvent("e2", "Ann", "Back again, the movers broke my lamp.", T0 + timedelta(hours=6, minutes=1), "c1"),
        LayerEvent("e3", "Bob", "Sorry to hear that.", T0 + timedelta(hours=11, minutes=59), "c1"),
        LayerEvent("e4", "Ann", "Still sad about it.", T0 + timedelta(hours=18), "c1"),
    ]
    eps = segment_episodes(evs)
    # 6 h exactly splits; 5 h 58 min does not
    assert [e.event_ids for e in eps] == [("e0", "e1"), ("e2", "e3"), ("e4",)]
    assert [e.boundary for e in eps] == ["start", "gap", "gap"]
    assert eps[1].start == evs[2].occurred_at and eps[1].end == evs[3].occurred_at
    assert eps[0].id == "ep:e0" and eps[0].speakers == ("Ann", "Bob")


def test_a_topic_shift_splits_a_run_without_a_gap(encode):
    evs = conv(COOKING + CARS)
    emb = encode([e.content for e in evs])
    eps = segment_episodes(evs, emb)
    assert [len(e.event_ids) for e in eps] == [8, 8]
    assert eps[1].boundary == "topic" and eps[1].event_ids[0] == "e8"
    # without embeddings the same run stays one episode
    assert len(segment_episodes(evs)) == 1


def test_topic_split_respects_the_minimum_episode_length(encode):
    evs = conv(COOKING[:4] + CARS[:4])
    emb = encode([e.content for e in evs])
    assert len(segment_episodes(evs, emb, EpisodeConfig(min_events=6))) == 1


def test_events_and_embeddings_may_come_in_any_order(encode):
    evs = conv(COOKING + CARS)
    emb = encode([e.content for e in evs])
    perm = np.random.default_rng(0).permutation(len(evs))
    eps = segment_episodes([evs[i] for i in perm], emb[perm])
    assert [e.event_ids[0] for e in eps] == ["e0", "e8"]


def test_summaries_are_extractive_bounded_and_in_time_order(encode):
    evs = conv(COOKING + CARS)
    eps = segment_episodes(evs, encode([e.content for e in evs]), EpisodeConfig(summary_chars=240))
    by_id = {e.id: e for e in evs}
    for ep in eps:
        assert 0 < len(ep.summary) <= 240
        assert set(ep.summary_event_ids) <= set(ep.event_ids)
        assert list(ep.summary_event_ids) == sorted(ep.summary_event_ids, key=lambda i: int(i[1:]))
        for eid in ep.summary_event_ids:  # every quoted sentence comes from the event it names
            quoted = [s for s in ep.summary.split(f"{by_id[eid].speaker}: ")[1:]]
            assert any(q.strip() and q.strip().split(" Ann:")[0].split(" Bob:")[0][:20] in by_id[eid].content
                       for q in quoted)
    assert "?" not in eps[0].summary  # questions are not summaries
    assert any(w in eps[1].summary.lower() for w in ("transmission", "mechanic", "gearbox", "brake"))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I live in Boston now.", [("Ann", "lives_in", "Boston", False)]),
        ("We moved to Denver last month!", [("Ann", "lives_in", "Denver", False)]),
        ("I work at Google as a software engineer.",
         [("Ann", "works_at", "Google", False), ("Ann", "job_title", "software engineer", False)]),
        ("My sister lives in New York City.", [("Ann's sister", "lives_in", "New York City", False)]),
        ("I have two kids and a dog named Max.",
         [("Ann", "children_count", "2", False), ("Ann", "pet_name:dog", "Max", False),
          ("Ann", "has_pet", "dog", False)]),  # a pet named is a pet one has
        ("I'm 32 years old.", [("Ann", "age", "32", False)]),
        ("My favorite book is Charlotte's Web.", [("Ann", "favourite:book", "Charlotte's Web", False)]),
        ("I don't live in Boston anymore.", [("Ann", "lives_in", "Boston", True)]),
        ("Lost my job as a banker yesterday.", [("Ann", "job_title", "banker", True)]),
        ("We broke up last week.", [("Ann", "relationship_status", "single", False)]),
        ("I'm a big fan of jazz", [("Ann", "opinion:jazz", "likes", False)]),
        ("I'm a bit tired today", []),
        ("I love you!", []),
    ],
)
def test_assertion_rules(text, expected):
    ev = LayerEvent("x", "Ann", text, T0)
    got = [(a.entity, a.attribute, a.value, a.negated) for a in extract_assertions(ev)]
    assert got == expected


def test_a_move_is_a_contradiction_and_supersedes_the_old_value():
    evs = conv([
        ("Ann", "I live in Boston with my two cats."),
        ("Bob", "Boston is lovely in the fall."),
        ("Ann", "I still live in Boston, near the harbor.", timedelta(days=30)),
        ("Ann", "Big news: we moved to Denver last month!", timedelta(days=60)),
        ("Bob", "My sister lives in Seattle."),
    ])
    c = consolidate(evs)
    assert len(c.contradictions) == 1
    ct = c.contradictions[0]
    assert (ct.entity, ct.attribute, ct.earlier_value, ct.later_value, ct.kind) == ("Ann", "lives_in", "Boston", "Denver", "update")
    assert (ct.earlier_event_id, ct.later_event_id) == ("e2", "e3")  # the latest standing statement
    lives = [a for a in c.timeline if a.attribute == "lives_in" and a.entity == "Ann"]
    assert [a.value for a in lives] == ["Boston", "Boston", "Denver"]
    assert [a.superseded_by for a in lives] == [lives[2].id, lives[2].id, None]
    assert current_values(c.timeline)[("Ann", "lives_in")] == ["Denver"]
    # another person's residence is not Ann's contradiction
    assert current_values(c.timeline)[("Bob's sister", "lives_in")] == ["Seattle"]


def test_restating_a_value_is_not_a_contradiction_and_a_retraction_is():
    evs = conv([
        ("Ann", "I work at Acme."),
        ("Ann", "I still work at Acme, ten years now."),
        ("Ann", "I no longer work at Acme.", timedelta(days=3)),
    ])
    timeline, contradictions = build_timeline([a for e in evs for a in extract_assertions(e)])
    assert [c.kind for c in contradictions] == ["retraction"]
    assert contradictions[0].later_value == "not Acme"
    assert [a.superseded_by is not None for a in timeline] == [True, True, False]


def test_multi_valued_attributes_do_not_contradict():
    evs = conv([("Ann", "My dog Rex is napping."), ("Ann", "My dog Bella loves the beach.")])
    assert consolidate(evs).contradictions == []


def test_timeline_orders_by_event_time_not_input_order():
    evs = conv([("Ann", "I live in Paris."), ("Ann", "I moved to Rome.", timedelta(days=1))])
    timeline, contradictions = build_timeline(list(reversed([a for e in evs for a in extract_assertions(e)])))
    assert [a.value for a in timeline] == ["Paris", "Rome"]
    assert contradictions[0].earlier_value == "Paris"
