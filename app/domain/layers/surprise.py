"""L5 surprise index: True Memory §4.1 Stage 4 (the "predictive coder").

σ_t ∈ [0, 1] per event, computed over extracted fact sets rather than a learned predictor, as in the
paper's production implementation: the share of the event's fact fingerprints (numbers, proper nouns,
dates, event keywords, definitional predicates) that the conversation has not produced before, plus
small length, detail and event bonuses, plus a contradiction bonus when an update verb ("moved",
"switched", "no longer", ...) comes with an assertion that conflicts with the current value of the
same (entity, attribute). At query time (Stage 9) a candidate with σ > 0 is boosted by (1 + 0.2·σ).

Streaming: `SurpriseState.update(event)` scores one event and folds its facts into the state; the
state serialises with `to_dict`/`from_dict`, so a worker can resume where the last run stopped.
Events must arrive in time order.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from app.domain.layers.assertions import extract_assertions
from app.domain.layers.events import LayerEvent, in_time_order
from app.domain.layers.text import (
    capitalised_spans,
    norm_name,
    numbers_in,
    parse_number,
    words,
)
from app.domain.layers.timeparse import resolve_time_expressions

LAYER_VERSION = "surprise/1"

W_NEW = 0.70  # weight of the new-fact share
LENGTH_BONUS = (80, 0.05, 200, 0.05)  # +0.05 past 80 characters, another +0.05 past 200
DETAIL_BONUS, DETAIL_CAP = 0.05, 2  # per number or date, at most two
EVENT_BONUS = 0.10  # a life event keyword
UPDATE_VERB_BONUS = 0.05
CONTRADICTION_BONUS = 0.30  # conflicting assertion announced by an update verb
SILENT_CONTRADICTION_BONUS = 0.15  # conflicting assertion without one

EVENT_KEYWORDS = {
    w: stem
    for stem, forms in {
        "wedding": "wedding weddings married marry marrying",
        "engaged": "engaged engagement proposed proposal",
        "divorce": "divorce divorced",
        "birthday": "birthday birthdays",
        "graduate": "graduated graduation graduate graduating",
        "promotion": "promotion promoted",
        "hired": "hired new-job",
        "fired": "fired laid layoff",
        "quit": "quit resigned",
        "moved": "moved moving relocated relocation",
        "born": "born birth newborn",
        "pregnant": "pregnant pregnancy expecting",
        "died": "died passed funeral death",
        "accident": "accident crash injured injury",
        "hospital": "hospital surgery diagnosed diagnosis",
        "adopted": "adopted adoption adopt",
        "trip": "trip vacation holiday traveled travelled visited",
        "concert": "concert festival show performance",
        "competition": "competition tournament race marathon contest won award",
        "launch": "launched launch opened started",
        "retired": "retired retirement",
        "breakup": "breakup broke",
        "exam": "exam exams test interview",
        "party": "party celebration celebrated",
    }.items()
    for w in forms.split()
}
UPDATE_VERB_RE = re.compile(
    r"\b(moved|moving|relocated|switched|changed|change|now|no longer|anymore|quit|new job|started|became|"
    r"got (?:married|divorced|engaged)|actually|instead|broke up|left|transferred|turned|updated)\b",
    re.I,
)


@dataclass(frozen=True)
class SurpriseScore:
    event_id: str
    sigma: float
    fact_count: int
    new_fact_count: int
    contradiction: bool
    layer_version: str = LAYER_VERSION


def fingerprints(event: LayerEvent, known_names: frozenset[str] = frozenset()) -> set[str]:
    """The event's facts as comparable strings ("num:3", "name:boston", "date:2023-05-06", ...)."""
    text = event.content
    fp: set[str] = set()
    for n in numbers_in(text):
        v = parse_number(n)
        fp.add(f"num:{v if v is not None else n.lower()}")
    for span in capitalised_spans(text, known_names):
        key = norm_name(span)
        if key:
            fp.add(f"name:{key}")
    for m in resolve_time_expressions(text, event.occurred_at):
        fp.add(f"date:{m.range_start}/{m.range_end}" if m.resolved else f"when:{m.surface.lower()}")
    for w in words(text):
        stem = EVENT_KEYWORDS.get(w.lower())
        if stem:
            fp.add(f"event:{stem}")
    for a in extract_assertions(event):
        fp.add(f"def:{a.entity_key}|{a.attribute}={a.value_key}")
    return fp


@dataclass
class SurpriseState:
    """What the conversation has said so far: seen fingerprints and current attribute values."""

    seen: set[str] = field(default_factory=set)
    current: dict[str, str] = field(default_factory=dict)  # "entity|attribute" -> value_key
    known_names: set[str] = field(default_factory=set)
    events: int = 0

    def update(self, event: LayerEvent) -> SurpriseScore:
        if event.speaker:
            self.known_names.add(norm_name(event.speaker))
        fp = fingerprints(event, frozenset(self.known_names))
        new = fp - self.seen
        text = event.content
        sigma = W_NEW * (len(new) / len(fp)) if fp else 0.0
        if len(text) > LENGTH_BONUS[0]:
            sigma += LENGTH_BONUS[1]
        if len(text) > LENGTH_BONUS[2]:
            sigma += LENGTH_BONUS[3]
        details = sum(1 for f in new if f.startswith(("num:", "date:")))
        sigma += DETAIL_BONUS * min(DETAIL_CAP, details)
        if any(f.startswith("event:") for f in new):
            sigma += EVENT_BONUS
        update_verb = bool(UPDATE_VERB_RE.search(text))
        conflict = False
        for a in extract_assertions(event):
            if not a.single_valued:
                continue
            key = f"{a.entity_key}|{a.attribute}"
            before = self.current.get(key)
            if a.negated:
                if before == a.value_key:
                    conflict = True
                    self.current.pop(key, None)
                continue
            if before is not None and before != a.value_key:
                conflict = True
            self.current[key] = a.value_key
        if conflict:
            sigma += CONTRADICTION_BONUS if update_verb else SILENT_CONTRADICTION_BONUS
        elif update_verb:
            sigma += UPDATE_VERB_BONUS
        self.seen |= fp
        self.events += 1
        return SurpriseScore(event.id, round(min(1.0, max(0.0, sigma)), 4), len(fp), len(new), conflict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": LAYER_VERSION,
            "seen": sorted(self.seen),
            "current": dict(self.current),
            "known_names": sorted(self.known_names),
            "events": self.events,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SurpriseState":
        if data.get("version") != LAYER_VERSION:
            return cls()  # another version's state is not comparable: start over
        return cls(set(data["seen"]), dict(data["current"]), set(data["known_names"]), int(data["events"]))


def score_conversation(events: Sequence[LayerEvent], state: SurpriseState | None = None) -> list[SurpriseScore]:
    """σ for every event of one conversation, in time order (the batch form of `update`)."""
    st = state if state is not None else SurpriseState()
    st.known_names |= {norm_name(e.speaker) for e in events if e.speaker}
    return [st.update(e) for e in in_time_order(events)]
