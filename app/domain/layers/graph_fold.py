"""The rule extractor as a fold over the log in time order (graph/4, #18 item 4).

The rules read statistics of the conversation: the words it writes in lower case (a capitalised
one alone is then formatting, not a name), the names seen capitalised mid-sentence (which then also
count when they open a sentence), the recurring concept phrases (in at least 2 events and at most
5% of them), and its speakers. Before graph/4 they were counted over the whole log, so any later
event could change the facts of any earlier one. Here they are counters folded event by event, and
an event's facts are extracted with the counters as they stand `lookahead` events after it: then
they are final ("closed") and kept as data. The last `lookahead` events are "open": their facts use
the counters of the whole log so far and are extracted again when more events come. A batch costs
the batch plus the open tail, and a full build is the same fold from an empty state, so extending
a saved state equals a rebuild by construction. A conversation no longer than `lookahead` events is
extracted exactly as before (every event open: the whole log's statistics).

`to_dict` / `from_dict` keep the state as JSON data (the closed events' facts, the counters, the
open tail by event id and seq); the open events themselves come back from the caller.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from app.domain.layers.aliases import mostly_places, nicknames, not_people, own_kin, short_forms
from app.domain.layers.events import LayerEvent
from app.domain.layers.graph_model import RawFact
from app.domain.layers.text import _WORD_CASE_RE, COMMON_SHARE, NOT_NAMES, capitalised_spans, norm_name
from app.domain.layers.timediscourse import NO_DISCOURSE, Discourse
from app.domain.layers.timeparse import TimeMention
from app.domain.layers.timeturns import DateThread, discourse_from_dict, discourse_to_dict

FOLD_VERSION = "graph_fold/3"  # 2: the closed facts stored apart, in chunks (graph_build); 3: the dates thread
LOOKAHEAD = 40  # part of graph/4: changing it changes closed facts, so bump graph_model.LAYER_VERSION
PREVIOUS_EVENT = -1  # a cause outside the event: the last fact before it


def chain_facts(before: Sequence[RawFact], facts: list[RawFact]) -> list[RawFact]:
    """One event's facts (`RuleExtractor.event_facts`) appended after `before`: their causes become
    indices among before + facts (a cause in an earlier event is dropped when there is no fact before)."""
    base = len(before)
    for f in facts:
        causes = [base + c if c >= 0 else base - 1 for c in f.causes]
        f.causes = [c for c in causes if c >= 0]
        if not f.causes and causes:
            f.cue = None
    return facts


def add_short_forms(facts: Sequence[RawFact], speakers: Sequence[str] = ()) -> None:
    """One name said short and long ("Tallow" ... "Tallow Studio", `short_forms`; "Bron" ... "Bronwen",
    `nicknames`) is one entity: the pair rides on the first fact that names the short form."""
    said = Counter(n for f in facts for n, kind in f.entities if kind != "concept")
    place = Counter(n for f in facts for n, kind in f.entities if kind == "place")
    kinds: dict[str, Counter[str]] = {}
    for f in facts:
        for n, kind in f.entities:
            kinds.setdefault(norm_name(n), Counter())[kind] += 1
    places = mostly_places(place, said)
    others = not_people(kinds)
    pairs = short_forms(list(said), places)
    pairs += nicknames(list(said), frozenset(n for n in said if n in places or norm_name(n) in others), speakers)
    for short, long_ in pairs:
        first = next((f for f in facts if any(n == short for n, _ in f.entities)), None)
        if first is not None:
            first.same_as.append((short, long_))


class _Minus:
    """A set minus some members, by `in` only (the common words less the speakers)."""

    def __init__(self, base: set[str], less: set[str]):
        self.base, self.less = base, less

    def __contains__(self, x: object) -> bool:
        return x in self.base and x not in self.less


class _Concepts:
    """The recurring concepts by `in`: found in at least `lo` events and at most max(lo, share * n)."""

    def __init__(self, df: Counter[str], n: int, lo: int, share: float):
        self.df, self.lo, self.hi = df, lo, max(lo, int(share * n))

    def __contains__(self, c: object) -> bool:
        return self.lo <= self.df.get(c, 0) <= self.hi  # type: ignore[call-overload]


def fact_to_dict(f: RawFact) -> list:
    return [f.text, [list(x) for x in f.entities], [_mention(m) for m in f.dates], f.topic, list(f.causes), f.cue,
            [list(x) for x in f.same_as]]


def fact_from_dict(event_id: str, d: list) -> RawFact:
    return RawFact(event_id, d[0], [tuple(x) for x in d[1]], [TimeMention(**m) for m in d[2]], d[3], list(d[4]),
                   d[5], [tuple(x) for x in d[6]])


def _mention(m: TimeMention) -> dict:
    return {k: v for k, v in m.__dict__.items()}


@dataclass
class FactFold:
    """The rule extractor's statistics, folded; closed events' facts; the open tail."""

    lookahead: int = LOOKAHEAD
    rules: Any = None  # a RuleExtractor: event_facts, concepts_in and its statistics' fields
    n: int = 0
    low: Counter[str] = field(default_factory=Counter)  # lower-case uses per word
    cap: Counter[str] = field(default_factory=Counter)  # capitalised uses per word
    common: set[str] = field(default_factory=set)  # words written mostly in lower case
    known: set[str] = field(default_factory=set)  # names seen mid-sentence, and the speakers
    concept_df: Counter[str] = field(default_factory=Counter)  # events per concept candidate
    speakers: list[str] = field(default_factory=list)  # first-seen order
    # (event id, its facts as data, in JSON: one string per event, not thousands of small objects)
    closed: list[tuple[str, str]] = field(default_factory=list)
    tail: list[LayerEvent] = field(default_factory=list)  # the open events
    dates: DateThread = field(default_factory=DateThread)  # what the log said about dates so far (timeturns)
    said: dict[str, Discourse] = field(default_factory=dict)  # open event id -> the dates before it
    kin: dict[str, str] = field(default_factory=dict)  # "mum" said as a name -> the first speaker who did

    # ---------------------------------------------------------------- the fold

    def add(self, ev: LayerEvent) -> list[TimeMention]:
        """Fold one event (later than every event folded); closes the event `lookahead` before it. Returns
        the event's time expressions as the turns before it settle them (`DateThread.read`: the whole
        turn, its offsets), final once folded: what the context shows beside the words."""
        self.n += 1
        if ev.speaker and ev.speaker not in self.speakers:
            self.speakers.append(ev.speaker)
            self.known.add(norm_name(ev.speaker))
        for w in _WORD_CASE_RE.findall(ev.content):
            lw = w.lower()
            (self.cap if w[0].isupper() else self.low)[lw] += 1
            lo, ca = self.low.get(lw, 0), self.cap.get(lw, 0)
            if lo >= 2 and ca and lo >= COMMON_SHARE * ca:
                self.common.add(lw)
            else:
                self.common.discard(lw)
        common = self._common()
        for s in capitalised_spans(ev.content, common=common, models=True):
            k = norm_name(s)
            if k and k not in NOT_NAMES:
                self.known.add(k)
        self.concept_df.update(self.rules.concepts_in(ev.content))
        own_kin(self.kin, ev.content, ev.speaker)
        self.said[ev.id], mentions = self.dates.read(ev.content, ev.occurred_at)
        self.tail.append(ev)
        while len(self.tail) > self.lookahead:
            done = self.tail.pop(0)
            self.closed.append((done.id, json.dumps([fact_to_dict(f) for f in self._extract(done)])))
            self.said.pop(done.id, None)
        return mentions

    def _common(self) -> _Minus:
        return _Minus(self.common, {norm_name(s) for s in self.speakers})

    def _extract(self, ev: LayerEvent) -> list[RawFact]:
        r = self.rules
        r._common = self._common()
        r._concepts = _Concepts(self.concept_df, self.n, r.min_concept_events, r.max_concept_share)
        r._speakers = list(self.speakers)
        r._kin_owner = self.kin
        return r.event_facts(ev, self.known, {norm_name(s) for s in self.speakers}, self.said.get(ev.id, NO_DISCOURSE))

    def facts(self) -> list[RawFact]:
        """Every event's facts in time order (closed ones as kept, open ones with the counters now),
        causes as indices of this list, short and long forms of one name paired."""
        out: list[RawFact] = []
        for eid, facts in self.closed_data():
            out.extend(chain_facts(out, [fact_from_dict(eid, f) for f in facts]))
        for ev in self.tail:
            out.extend(chain_facts(out, self._extract(ev)))
        add_short_forms(out, self.speakers)
        return out

    def closed_facts(self, start: int = 0) -> list[tuple[str, list[RawFact]]]:
        """The closed events from the `start`-th on, with their facts (causes as the extractor gave
        them: an index among the event's facts, or `PREVIOUS_EVENT`)."""
        return [(eid, [fact_from_dict(eid, f) for f in facts]) for eid, facts in self.closed_data(start)]

    def closed_data(self, start: int = 0) -> list[list]:
        """[event id, its facts as data] of the closed events from the `start`-th on."""
        return [[eid, json.loads(facts)] for eid, facts in self.closed[start:]]

    def tail_facts(self) -> list[tuple[str, list[RawFact]]]:
        """The open events with their facts, extracted with the counters as they stand."""
        return [(ev.id, self._extract(ev)) for ev in self.tail]

    # ---------------------------------------------------------------- state

    def to_dict(self, closed: bool = True) -> dict:
        """The state as JSON data; without `closed`, all but the closed events' facts (their count
        instead: a store keeps them apart, appended as they close)."""
        return {"version": FOLD_VERSION, "lookahead": self.lookahead, "n": self.n, "low": dict(self.low),
                "cap": dict(self.cap), "common": sorted(self.common), "known": sorted(self.known),
                "concept_df": dict(self.concept_df), "speakers": self.speakers,
                "closed": self.closed_data() if closed else len(self.closed),
                "tail": [[e.id, e.seq] for e in self.tail], "dates": self.dates.to_dict(),
                "said": {e.id: discourse_to_dict(self.said.get(e.id, NO_DISCOURSE)) for e in self.tail},
                "kin": self.kin}

    @classmethod
    def from_dict(cls, d: dict, events: Callable[[list[str]], list[LayerEvent]],
                  rules: Any) -> "FactFold":
        """`events(ids)`: the open tail's events (with their seq)."""
        if d.get("version") != FOLD_VERSION:
            raise ValueError("another fold version")
        ids = [i for i, _ in d["tail"]]
        evs = events(ids)
        if [e.id for e in evs] != ids or [e.seq for e in evs] != [s for _, s in d["tail"]]:
            raise ValueError("the tail's events are not the ones folded")
        return cls(d["lookahead"], rules, d["n"], Counter(d["low"]), Counter(d["cap"]),
                   set(d["common"]), set(d["known"]), Counter(d["concept_df"]), list(d["speakers"]),
                   [(eid, json.dumps(facts)) for eid, facts in d["closed"]], list(evs),
                   DateThread.from_dict(d["dates"]), {k: discourse_from_dict(v) for k, v in d["said"].items()},
                   dict(d.get("kin") or {}))  # "kin": since graph_extract/11


def fold_facts(events: Sequence[LayerEvent], rules: Any, lookahead: int | None = None
               ) -> tuple[FactFold, list[RawFact]]:
    """The fold over a whole log (in time order) with these rules (a `RuleExtractor`): the state and
    every event's facts. `lookahead`: `LOOKAHEAD` unless given."""
    fold = FactFold(LOOKAHEAD if lookahead is None else lookahead, rules)
    for ev in events:
        fold.add(ev)
    return fold, fold.facts()
