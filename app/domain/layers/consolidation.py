"""L4 consolidation: True Memory §4.1 Stage 3 (episodes with summaries, contradiction records, and a
timeline of assertions with superseded-by links).

* Episodes: a gap of 6 hours or more between consecutive events starts a new episode (the paper's
  `episodes` table: "6-hour-gap session boundaries"); inside a gap-bounded run, a topic shift also
  splits it. A shift is a local minimum of the cosine between the mean embeddings of the `window`
  events before and after a boundary, below `shift_threshold` (TextTiling's idea on sentence
  embeddings), keeping at least `min_events` events on each side.
* Summaries are extractive: the sentences that are both central (close to the episode's centroid)
  and informative (rare words, numbers, names), capped in sentences and characters, in time order.
* Timeline: assertions (app.domain.layers.assertions) per (entity, attribute) in event-time order; a later
  different value of a single-valued attribute supersedes the earlier ones and is recorded as a
  contradiction ("I live in Boston" -> "we moved to Denver").
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Sequence

import numpy as np

from app.domain.event import turn_text
from app.domain.layers.assertions import Assertion, extract_all
from app.domain.layers.events import LayerEvent
from app.domain.layers.text import (
    capitalised_spans,
    content_words,
    numbers_in,
    split_sentences,
)
from app.domain.layers.timeparse import find_time_expressions

LAYER_VERSION = "consolidation/1"


@dataclass(frozen=True)
class EpisodeConfig:
    gap: timedelta = timedelta(hours=6)
    window: int = 4
    shift_threshold: float = 0.40
    min_events: int = 6
    summary_sentences: int = 3
    summary_chars: int = 360


@dataclass(frozen=True)
class Episode:
    id: str
    conversation_id: str
    index: int
    event_ids: tuple[str, ...]
    start: datetime
    end: datetime
    speakers: tuple[str, ...]
    boundary: str  # why it starts: "start", "gap" or "topic"
    summary: str
    summary_event_ids: tuple[str, ...]
    layer_version: str = LAYER_VERSION


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


# ---------------------------------------------------------------- episodes

def _normalise_rows(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


def topic_boundaries(embeddings: np.ndarray, config: EpisodeConfig = EpisodeConfig()) -> list[int]:
    """Indices i (events i-1 | i) where the topic shifts, for one gap-free run of events."""
    n = len(embeddings)
    w, lo = config.window, config.min_events
    if n < 2 * lo:
        return []
    csum = np.vstack([np.zeros((1, embeddings.shape[1]), dtype=np.float64), np.cumsum(embeddings, axis=0)])
    sims = np.full(n, np.inf)
    for i in range(lo, n - lo + 1):
        left = csum[i] - csum[max(0, i - w)]
        right = csum[min(n, i + w)] - csum[i]
        sims[i] = float(_normalise_rows(left) @ _normalise_rows(right))
    cuts: list[int] = []
    # deepest valleys first; each cut keeps `min_events` on both sides of every other cut
    for i in np.argsort(sims):
        if not np.isfinite(sims[i]) or sims[i] >= config.shift_threshold:
            break
        local_min = sims[i] <= sims[i - 1] and (i + 1 >= n or sims[i] <= sims[i + 1])
        if local_min and all(abs(int(i) - c) >= lo for c in cuts):
            cuts.append(int(i))
    return sorted(cuts)


def _idf(events: Sequence[LayerEvent]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for e in events:
        df.update(set(content_words(e.content)))
    n = max(1, len(events))
    return {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}


def summarise(
    events: Sequence[LayerEvent],
    embeddings: np.ndarray | None,
    idf: dict[str, float],
    max_sentences: int = 3,
    max_chars: int = 360,
) -> tuple[str, tuple[str, ...]]:
    """Extractive summary: (text, ids of the events it quotes). At most one sentence per event."""
    if not events:
        return "", ()
    if embeddings is not None and len(embeddings):
        centroid = _normalise_rows(embeddings.mean(axis=0))
        central = embeddings @ centroid
    else:  # no embeddings: centrality by shared vocabulary with the episode
        vocab = Counter(w for e in events for w in set(content_words(e.content)))
        central = np.array([
            sum(vocab[w] for w in set(content_words(e.content))) / (1 + len(set(content_words(e.content))))
            for e in events
        ], dtype=float)
        central = central / (central.max() or 1.0)
    # per event, its most informative sentence: rare words (mean idf) plus countable facts
    candidates: list[tuple[float, int, int, str]] = []
    for i, e in enumerate(events):
        best: tuple[float, int, str] | None = None
        for s in split_sentences(e.content):
            cw = content_words(s)
            if len(cw) < 3 or s.rstrip().endswith("?") or s.lstrip().startswith("["):
                continue  # questions, small talk and bracketed annotations describe nothing that happened
            info = sum(idf.get(w, 1.0) for w in cw) / len(cw)
            facts = len(numbers_in(s)) + len(find_time_expressions(s)) + len(capitalised_spans(s))
            if best is None or info + facts > best[0] + best[1]:
                best = (info, facts, s)
        if best is not None:
            candidates.append((best[0], min(3, best[1]), i, best[2]))
    if not candidates:
        return "", ()

    def minmax(xs: list[float]) -> list[float]:
        lo, hi = min(xs), max(xs)
        return [(x - lo) / (hi - lo) if hi > lo else 0.5 for x in xs]

    cen = minmax([float(central[i]) for _, _, i, _ in candidates])
    inf = minmax([c[0] for c in candidates])
    scored = sorted(
        ((0.4 * c + 0.3 * f + 0.3 * k[1] / 3, k[2], k[3]) for c, f, k in zip(cen, inf, candidates)),
        key=lambda x: (-x[0], x[1]),
    )
    chosen: list[tuple[int, str]] = []
    used = 0
    for _, i, s in scored:
        line = turn_text(events[i].speaker, s)
        if len(line) > max_chars:
            line = line[: max_chars - 1].rsplit(" ", 1)[0] + "…"
        if chosen and used + len(line) + 1 > max_chars:
            continue
        chosen.append((i, line))
        used += len(line) + 1
        if len(chosen) >= max_sentences:
            break
    chosen.sort()
    return " ".join(line for _, line in chosen), tuple(events[i].id for i, _ in chosen)


def segment_episodes(
    events: Sequence[LayerEvent],
    embeddings: np.ndarray | None = None,
    config: EpisodeConfig = EpisodeConfig(),
) -> list[Episode]:
    """Split one conversation's events into episodes. `embeddings[i]` belongs to `events[i]`
    (any order; both are put in time order here). Without embeddings only time gaps split."""
    order = sorted(range(len(events)), key=lambda i: (events[i].occurred_at, events[i].seq))
    evs = [events[i] for i in order]
    emb = _normalise_rows(np.asarray(embeddings, dtype=np.float64)[order]) if embeddings is not None and len(events) else None
    if not evs:
        return []
    # runs separated by time gaps
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(evs)):
        if evs[i].occurred_at - evs[i - 1].occurred_at >= config.gap:
            runs.append((start, i))
            start = i
    runs.append((start, len(evs)))
    pieces: list[tuple[int, int, str]] = []
    for r, (a, b) in enumerate(runs):
        cuts = topic_boundaries(emb[a:b], config) if emb is not None else []
        bounds = [a] + [a + c for c in cuts] + [b]
        for k in range(len(bounds) - 1):
            reason = ("start" if r == 0 else "gap") if k == 0 else "topic"
            pieces.append((bounds[k], bounds[k + 1], reason))
    idf = _idf(evs)
    out = []
    for idx, (a, b, reason) in enumerate(pieces):
        chunk = evs[a:b]
        summary, quoted = summarise(chunk, emb[a:b] if emb is not None else None, idf, config.summary_sentences, config.summary_chars)
        speakers = tuple(dict.fromkeys(e.speaker for e in chunk if e.speaker))
        out.append(
            Episode(
                id=f"ep:{chunk[0].id}",
                conversation_id=chunk[0].conversation_id,
                index=idx,
                event_ids=tuple(e.id for e in chunk),
                start=chunk[0].occurred_at,
                end=chunk[-1].occurred_at,
                speakers=speakers,
                boundary=reason,
                summary=summary,
                summary_event_ids=quoted,
            )
        )
    return out


# ---------------------------------------------------------------- timeline and contradictions

def build_timeline(assertions: Sequence[Assertion]) -> tuple[list[Assertion], list[Contradiction]]:
    """Order assertions by event time, link superseded ones, and record contradictions.

    Single-valued attribute: a value different from the current one supersedes every entry not yet
    superseded and is a contradiction (kind "update"); a negation of the current value ("I don't live
    in Boston anymore") supersedes it (kind "retraction"). Restating the current value changes nothing.
    Multi-valued attributes only get superseded by a negation of the same value.
    """
    ordered = sorted(assertions, key=lambda a: (a.time, a.seq, a.id))
    superseded: dict[str, str] = {}
    contradictions: list[Contradiction] = []
    groups: dict[tuple[str, str], list[Assertion]] = {}
    for a in ordered:
        groups.setdefault((a.entity_key, a.attribute), []).append(a)
    for items in groups.values():
        live: list[Assertion] = []  # entries not yet superseded
        for a in items:
            if a.negated:
                # an empty value_key retracts whatever stands ("we called off the trip")
                hit = [x for x in live if not x.negated and a.value_key in ("", x.value_key)]
                for x in hit:
                    superseded[x.id] = a.id
                if hit:
                    contradictions.append(_contradiction(hit[-1], a, "retraction"))
                live = [x for x in live if x not in hit]
                continue
            if a.single_valued:
                current = [x for x in live if not x.negated]
                if current and current[-1].value_key != a.value_key and current[-1].event_id != a.event_id:
                    for x in live:
                        superseded[x.id] = a.id
                    contradictions.append(_contradiction(current[-1], a, "update"))
                    live = []
            live.append(a)
    timeline = [replace(a, superseded_by=superseded.get(a.id)) for a in ordered]
    return timeline, contradictions


@dataclass
class LiveTimeline:
    """`build_timeline` as a fold: per (entity, attribute), the assertions not superseded yet (the
    `live` lists). Adding the assertions of later events extends it exactly as the whole timeline
    would; `standing()` lists the live ones in timeline order, which is what `current_values` keeps
    of the whole timeline (an assertion leaves its live list exactly when it is superseded, and a
    negation never enters one)."""

    live: dict[str, list[Assertion]] = field(default_factory=dict)

    def add(self, assertions: Sequence[Assertion]) -> None:
        for a in sorted(assertions, key=lambda a: (a.time, a.seq, a.id)):
            key = f"{a.entity_key}\x1f{a.attribute}"
            live = self.live.get(key, [])
            if a.negated:
                live = [x for x in live if x.negated or a.value_key not in ("", x.value_key)]
            else:
                if a.single_valued:
                    current = [x for x in live if not x.negated]
                    if current and current[-1].value_key != a.value_key and current[-1].event_id != a.event_id:
                        live = []
                live = live + [a]
            if live:
                self.live[key] = live
            else:
                self.live.pop(key, None)

    def standing(self) -> list[Assertion]:
        return sorted((a for live in self.live.values() for a in live), key=lambda a: (a.time, a.seq, a.id))

    def to_dict(self) -> dict:
        return {k: [[a.id, a.event_id, a.entity, a.attribute, a.value, a.value_key, a.time.isoformat(), a.surface,
                     a.negated, a.seq] for a in v] for k, v in self.live.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "LiveTimeline":
        return cls({k: [Assertion(i, ev, en, at, va, vk, datetime.fromisoformat(t), su, ng, sq)
                         for i, ev, en, at, va, vk, t, su, ng, sq in v] for k, v in d.items()})


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
) -> Consolidation:
    """The whole L4 job for one conversation: episodes, timeline, contradictions."""
    episodes = segment_episodes(events, embeddings, config)
    timeline, contradictions = build_timeline(extract_all(events))
    stats = {
        "episodes": len(episodes),
        "episodes_by_gap": sum(e.boundary in ("start", "gap") for e in episodes),
        "episodes_by_topic": sum(e.boundary == "topic" for e in episodes),
        "assertions": len(timeline),
        "superseded": sum(a.superseded_by is not None for a in timeline),
        "contradictions": len(contradictions),
    }
    return Consolidation(episodes, timeline, contradictions, stats=stats)

