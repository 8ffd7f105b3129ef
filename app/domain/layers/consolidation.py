"""L4 consolidation: True Memory §4.1 Stage 3 (episodes with summaries, contradiction records, and a
timeline of assertions with superseded-by links).

* Episodes (`app.domain.layers.episodes`): 6-hour gaps and topic shifts, with extractive summaries.
* Timeline: assertions (app.domain.layers.assertions) per (entity, attribute) in event-time order; a later
  different value of a single-valued attribute supersedes the earlier ones and is recorded as a
  contradiction ("I live in Boston" -> "we moved to Denver").
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Sequence

import numpy as np

from app.domain.layers.assertion_spans import SpanModel
from app.domain.layers.assertions import Assertion, extract_all
from app.domain.layers.episodes import (  # noqa: F401 (re-exported: the episodes are part of L4)
    EPISODES_VERSION,
    Episode,
    EpisodeConfig,
    EpisodeFold,
    segment_episodes,
    summarise,
)
from app.domain.layers.events import LayerEvent

# 2: episodes by a fold with a bounded lookahead (app.domain.layers.episodes), the timeline as a fold
LAYER_VERSION = "consolidation/2"


@dataclass(frozen=True)
class Contradiction:
    id: str
    entity: str
    attribute: str
    earlier_assertion_id: str
    later_assertion_id: str
    earlier_event_id: str
    later_event_id: str
    earlier_value: str
    later_value: str
    earlier_time: datetime
    later_time: datetime
    kind: str  # "update" (a new value) or "retraction" ("I don't live in Boston anymore")
    layer_version: str = LAYER_VERSION


@dataclass(frozen=True)
class Consolidation:
    episodes: list[Episode]
    timeline: list[Assertion]
    contradictions: list[Contradiction]
    layer_version: str = LAYER_VERSION
    stats: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------- timeline and contradictions

def build_timeline(assertions: Sequence[Assertion]) -> tuple[list[Assertion], list[Contradiction]]:
    """Order assertions by event time, link superseded ones, and record contradictions.

    Single-valued attribute: a value different from the current one supersedes every entry not yet
    superseded and is a contradiction (kind "update"); a negation of the current value ("I don't live
    in Boston anymore") supersedes it (kind "retraction"). Restating the current value changes nothing.
    Multi-valued attributes only get superseded by a negation of the same value.
    `LiveTimeline` over the whole list (contradictions in the order they happen).
    """
    ordered = sorted(assertions, key=lambda a: (a.time, a.seq, a.id))
    step = LiveTimeline().add(ordered)
    superseded = {old.id: new.id for old, new in step.superseded}
    timeline = [replace(a, superseded_by=superseded.get(a.id)) for a in ordered]
    return timeline, step.contradictions


@dataclass
class TimelineStep:
    """What adding assertions changed: (earlier assertion, the one that superseded it), contradictions."""

    superseded: list[tuple[Assertion, Assertion]] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)


@dataclass
class LiveTimeline:
    """`build_timeline` as a fold: per (entity, attribute), the assertions not superseded yet (the
    `live` lists). Adding the assertions of later events extends it exactly as the whole timeline
    would, and says which earlier assertions they superseded; `standing()` lists the live ones in
    timeline order, which is what `current_values` keeps of the whole timeline (an assertion leaves
    its live list exactly when it is superseded, and a negation never enters one)."""

    live: dict[str, list[Assertion]] = field(default_factory=dict)

    def add(self, assertions: Sequence[Assertion]) -> TimelineStep:
        step = TimelineStep()
        for a in sorted(assertions, key=lambda a: (a.time, a.seq, a.id)):
            key = f"{a.entity_key}\x1f{a.attribute}"
            live = self.live.get(key, [])
            if a.negated:
                # an empty value_key retracts whatever stands ("we called off the trip")
                hit = [x for x in live if not x.negated and a.value_key in ("", x.value_key)]
                step.superseded += [(x, a) for x in hit]
                if hit:
                    step.contradictions.append(_contradiction(hit[-1], a, "retraction"))
                live = [x for x in live if x not in hit]
            else:
                if a.single_valued:
                    current = [x for x in live if not x.negated]
                    if current and current[-1].value_key != a.value_key and current[-1].event_id != a.event_id:
                        step.superseded += [(x, a) for x in live]
                        step.contradictions.append(_contradiction(current[-1], a, "update"))
                        live = []
                live = live + [a]
            if live:
                self.live[key] = live
            else:
                self.live.pop(key, None)
        return step

    def standing(self) -> list[Assertion]:
        return sorted((a for live in self.live.values() for a in live), key=lambda a: (a.time, a.seq, a.id))

    def to_dict(self) -> dict:
        return {k: [[a.id, a.event_id, a.entity, a.attribute, a.value, a.value_key, a.time.isoformat(), a.surface,
                     a.negated, a.seq, a.valid_from.isoformat() if a.valid_from else None] for a in v]
                for k, v in self.live.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "LiveTimeline":
        def one(i, ev, en, at, va, vk, t, su, ng, sq, vf=None) -> Assertion:  # noqa: ANN001 (a state saved before valid_from has 10 items)
            return Assertion(i, ev, en, at, va, vk, datetime.fromisoformat(t), su, ng, sq,
                             valid_from=date.fromisoformat(vf) if vf else None)

        return cls({k: [one(*row) for row in v] for k, v in d.items()})


def _contradiction(old: Assertion, new: Assertion, kind: str) -> Contradiction:
    return Contradiction(
        id=f"ct:{old.id}>{new.id}",
        entity=new.entity,
        attribute=new.attribute,
        earlier_assertion_id=old.id,
        later_assertion_id=new.id,
        earlier_event_id=old.event_id,
        later_event_id=new.event_id,
        earlier_value=old.value,
        later_value=("not " + new.value) if new.negated else new.value,
        earlier_time=old.time,
        later_time=new.time,
        kind=kind,
    )


def current_values(timeline: Sequence[Assertion]) -> dict[tuple[str, str], list[str]]:
    """(entity, attribute) -> the values still standing (what a profile would show)."""
    out: dict[tuple[str, str], list[str]] = {}
    for a in timeline:
        if a.superseded_by is None and not a.negated:
            vals = out.setdefault((a.entity, a.attribute), [])
            if a.value not in vals:
                vals.append(a.value)
    return out


def consolidate(
    events: Sequence[LayerEvent],
    embeddings: np.ndarray | None = None,
    config: EpisodeConfig = EpisodeConfig(),
    assertions: Sequence[Assertion] | None = None,
    spans: SpanModel | None = None,
) -> Consolidation:
    """The whole L4 job for one conversation: episodes, timeline, contradictions. `assertions`: the
    events' assertions (`app.domain.layers.extractors.extract_assertions`; the rules, with the learned
    reader of names `spans` when given, when not given)."""
    episodes = segment_episodes(events, embeddings, config)
    timeline, contradictions = build_timeline(extract_all(events, spans=spans) if assertions is None else assertions)
    stats = {
        "episodes": len(episodes),
        "episodes_by_gap": sum(e.boundary in ("start", "gap") for e in episodes),
        "episodes_by_topic": sum(e.boundary == "topic" for e in episodes),
        "assertions": len(timeline),
        "superseded": sum(a.superseded_by is not None for a in timeline),
        "contradictions": len(contradictions),
    }
    return Consolidation(episodes, timeline, contradictions, stats=stats)



def track_plans(assertions: Sequence[Assertion], plans: dict[str, list]) -> dict[str, list]:
    """The events a later batch's extraction must read again so that a cancellation naming no plan
    ("we called off the trip") takes the plan it ends (`assertions.extract_all`'s cross-event state):
    per (entity, plan kind) and per plan kind, [event id, seq] of the latest standing plan."""
    for a in assertions:
        if a.attribute.startswith("plan:") and not a.negated:
            plans[f"{a.entity_key}\x1f{a.attribute}"] = plans[f"*\x1f{a.attribute}"] = [a.event_id, a.seq]
    return plans

