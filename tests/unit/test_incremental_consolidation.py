"""The consolidation layer's folds (#18 item 4): the episode fold and the timeline fold, stopped after
any batch, saved (`to_dict`, through JSON), restored and fed the rest, give exactly what one pass over
the whole log gives: the same episodes (boundaries, summaries, indices) and the same timeline
(superseded-by links, contradictions). Plus the segmentation's promises: 6-hour gaps split, topic
shifts split, and an episode whose end is decided never changes when events arrive later.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import LiveTimeline, build_timeline, track_plans
from app.domain.layers.episodes import EpisodeConfig, EpisodeFold, segment_episodes

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
DIM = 16

TOPICS = {
    "bread": ["I baked sourdough bread with my starter in Lyon.", "The dough proofed twelve hours in the fridge.",
              "Preheat the Dutch oven to 250 degrees for the bread.", "Whole wheat flour soaks up more water."],
    "cars": ["My car's transmission broke on the highway near Leeds.", "The mechanic says the gearbox costs 3,000 dollars.",
             "The garage found worn brake pads and a leaking radiator.", "Ask whether the warranty covers engine parts."],
    "moves": ["I live in Boston and I work at Google.", "We moved to Denver last month!",
              "I got a job at Stripe, so we relocated.", "Actually we moved to Austin, Denver was too cold.",
              "We are planning a trip to Lisbon in June.", "We called off the trip, sadly."],
}


def make_log(seed: int, n: int) -> tuple[list, np.ndarray]:
    """A conversation of `n` events: topic blocks of random length (embeddings near the topic's
    direction), 6-hour gaps now and then; the contents carry moves, jobs, plans and cancellations."""
    from app.domain.layers.events import LayerEvent

    rng = np.random.default_rng(seed)
    centres = {k: rng.normal(size=DIM) for k in TOPICS}
    names = list(TOPICS)
    evs, vecs, t, topic, left = [], [], T0, names[0], 0
    for i in range(n):
        if left == 0:
            topic, left = names[int(rng.integers(len(names)))], int(rng.integers(3, 25))
        left -= 1
        t += timedelta(hours=7) if rng.random() < 0.04 else timedelta(minutes=int(rng.integers(0, 3)))
        line = TOPICS[topic][int(rng.integers(len(TOPICS[topic])))]
        evs.append(LayerEvent(str(1000 + i), ["Ana", "Ben"][i % 2], f"{line} ({i})", t, "c1", seq=i))
        vecs.append(centres[topic] + rng.normal(scale=0.6, size=DIM))
    return evs, np.array(vecs, dtype=np.float32)


def roundtrip(d: dict) -> dict:
    return json.loads(json.dumps(d))


def folded_in_batches(evs, vecs, cuts: list[int]):
    """Episodes and timeline from a fold saved and restored at every cut."""
    by_id = {e.id: (e, v) for e, v in zip(evs, vecs)}
    fold, live, plans = EpisodeFold(), LiveTimeline(), {}
    closed, superseded, contradictions, timeline = [], {}, [], []
    bounds = [0, *sorted(set(cuts)), len(evs)]
    for a, b in zip(bounds, bounds[1:]):
        if a == b:
            continue
        state = roundtrip({"episodes": fold.to_dict(), "timeline": live.to_dict(), "plans": plans})
        fold = EpisodeFold.from_dict(state["episodes"], lambda ids: ([by_id[i][0] for i in ids],
                                                                      [by_id[i][1] for i in ids]))
        live, plans = LiveTimeline.from_dict(state["timeline"]), state["plans"]
        for e, v in zip(evs[a:b], vecs[a:b]):
            closed += fold.add(e, v)
        # the batch's assertions, read with the events holding the latest plans before it
        context = sorted({(int(s), i) for i, s in plans.values()})
        ctx_evs = [by_id[i][0] for _, i in context]
        new = [x for x in extract_all(ctx_evs + list(evs[a:b])) if x.event_id not in {e.id for e in ctx_evs}]
        step = live.add(new)
        superseded.update({old.id: n.id for old, n in step.superseded})
        contradictions += step.contradictions
        timeline += new
        plans = track_plans(new, dict(plans))
    return closed + fold.open_episodes(), sorted((x.id, superseded.get(x.id)) for x in timeline), contradictions


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 160), cuts=st.lists(st.integers(0, 160), max_size=12))
def test_the_folds_in_batches_equal_one_pass_over_the_log(seed, n, cuts):
    evs, vecs = make_log(seed, n)
    episodes, links, contradictions = folded_in_batches(evs, vecs, [c for c in cuts if c < n])
    whole = segment_episodes(evs, vecs)
    assert episodes == whole
    timeline, whole_contradictions = build_timeline(extract_all(evs))
    assert links == sorted((a.id, a.superseded_by) for a in timeline)
    assert sorted(c.id for c in contradictions) == sorted(c.id for c in whole_contradictions)


def test_the_log_used_by_the_property_has_gaps_shifts_and_supersessions():
    """The generated logs exercise what the property is about (else it would pass vacuously)."""
    evs, vecs = make_log(4, 160)
    eps = segment_episodes(evs, vecs)
    assert {e.boundary for e in eps} == {"start", "gap", "topic"} and eps[0].boundary == "start"
    assert [ep.index for ep in eps] == list(range(len(eps)))
    assert [i for ep in eps for i in ep.event_ids] == [e.id for e in evs]  # every event in one episode, in order
    timeline, contradictions = build_timeline(extract_all(evs))
    assert any(a.superseded_by for a in timeline) and contradictions
    assert any(c.kind == "retraction" for c in contradictions)  # a cancelled plan


def test_a_six_hour_gap_and_a_topic_shift_split_and_closed_episodes_stay_put():
    evs, vecs = make_log(5, 200)
    fold = EpisodeFold()
    closed_at: list[tuple[int, object]] = []
    for i, (e, v) in enumerate(zip(evs, vecs)):
        closed_at += [(i, ep) for ep in fold.add(e, v)]
    final = segment_episodes(evs, vecs)
    assert closed_at and len(final) > len(closed_at)
    for _, ep in closed_at:  # an episode, once closed, is the final one at its index
        assert final[ep.index] == ep
    for prev, ep in zip(final, final[1:]):
        gap = ep.start - prev.end >= EpisodeConfig().gap
        assert (ep.boundary == "gap") == gap
        assert len(ep.event_ids) >= (1 if ep.boundary == "gap" else EpisodeConfig().min_events)


def test_a_late_event_cannot_be_folded():
    evs, vecs = make_log(1, 30)
    fold = EpisodeFold()
    for e, v in zip(evs, vecs):
        fold.add(e, v)
    assert fold.n == 30 and fold.tail  # the service checks the watermark before folding (a late event recomputes)


def test_a_restored_fold_holds_every_similarity_a_later_decision_reads():
    """After any event, the saved fold restores the similarities from its first open episode on
    (what the undecided positions compare with), equal to the unbroken fold's, and the same open episodes."""
    evs, vecs = make_log(9, 220)
    by_id = {e.id: (e, v) for e, v in zip(evs, vecs)}
    fold = EpisodeFold()
    for e, v in zip(evs, vecs):
        fold.add(e, v)
        back = EpisodeFold.from_dict(roundtrip(fold.to_dict()), lambda ids: ([by_id[i][0] for i in ids],
                                                                             [by_id[i][1] for i in ids]))
        need = range(max(fold.start, fold.config.min_events), fold.run_len - fold.config.min_events + 1)
        assert {k: back.sims[k] for k in need} == {k: fold.sims[k] for k in need}
        assert back.open_episodes() == fold.open_episodes()
