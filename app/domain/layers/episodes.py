"""L4 episodes (True Memory §4.1 Stage 3), as a fold over the log in time order (#18 item 4).

* A gap of 6 hours or more between consecutive events starts a new episode (the paper's
  "6-hour-gap session boundaries"); inside a gap-free run, a topic shift also splits it.
* A shift at run position i (events i-1 | i) is where the cosine between the mean embeddings of the
  `window` events before and after i is below `shift_threshold` and is the lowest within
  `min_events - 1` positions on either side (the earlier one wins a tie): TextTiling's valleys on
  sentence embeddings, at least `min_events` apart. The similarity at i reads events up to
  i + window - 1 only, so the decision at i is final once the run has reached i + 2*min_events - 1
  events (or has ended at a gap): an episode never changes after that (it is "closed").
* Summaries are extractive: the sentences that are both central (close to the episode's centroid)
  and informative (rare words: an IDF over the conversation, numbers, names), capped in sentences
  and characters, in time order. A closed episode's summary uses the IDF of the conversation as it
  stood when the episode closed; the episodes still open use the IDF of the whole conversation.

`EpisodeFold` is that fold: `segment_episodes` runs it over a whole log; the consolidation layer keeps
its state (`to_dict`: the counters and the open run's tail, by event id) and extends it with a batch,
so a batch costs the batch plus the open tail, and the result is the whole-log one by construction.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Iterable, Sequence

import numpy as np

from app.domain.event import turn_text
from app.domain.layers.events import LayerEvent
from app.domain.layers.text import capitalised_spans, content_words, numbers_in, split_sentences
from app.domain.layers.timeparse import find_time_expressions

EPISODES_VERSION = "episodes/3"  # 2: valleys decided with a bounded lookahead; closed summaries frozen
# 3: a word opening a sentence that only a name fits ("Margaux and I") counts as a named thing (text.capitalised_spans)


@dataclass(frozen=True)
class EpisodeConfig:
    gap: timedelta = timedelta(hours=6)
    window: int = 4  # must not exceed min_events (a decision reads window - 1 events past it)
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
    layer_version: str = EPISODES_VERSION


def _normalise_rows(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


class Idf:
    """log((n + 1) / (df + 0.5)) per word over `n` events, read on demand (1.0 for unseen words)."""

    def __init__(self, df: Counter[str], n: int):
        self.df, self.n = df, max(1, n)

    def get(self, w: str, default: float = 1.0) -> float:
        c = self.df.get(w)
        return default if not c else math.log((self.n + 1) / (c + 0.5))


def summarise(
    events: Sequence[LayerEvent],
    embeddings: np.ndarray | None,
    idf: Idf | dict[str, float],
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


@dataclass
class EpisodeFold:
    """Episodes of a log fed in time order. `closed` episodes are final; `open_episodes()` are the
    current run's undecided rest. The open run's tail (from `window` events before its first open
    episode) is kept with its events and unit vectors; `to_dict` stores it by event id and seq only
    (`from_dict` takes the events and vectors back from the caller)."""

    config: EpisodeConfig = field(default_factory=EpisodeConfig)
    with_vectors: bool = True
    n: int = 0  # events folded
    df: Counter[str] = field(default_factory=Counter)  # events per content word
    closed: int = 0  # episodes closed so far (their indices are 0..closed-1)
    runs: int = 0  # gap-free runs started
    run_len: int = 0  # events in the current run
    start: int = 0  # run position of the first open episode
    boundary: str = "start"  # why the first open episode starts
    decided: int = 0  # run positions below this are decided (no cut, or a cut that closed an episode)
    tail_pos: int = 0  # run position of tail[0]
    tail: list[LayerEvent] = field(default_factory=list)
    vecs: list[np.ndarray] = field(default_factory=list)  # unit vectors, aligned with tail
    sims: dict[int, float] = field(default_factory=dict)  # run position -> similarity across it
    last_at: datetime | None = None

    # ---------------------------------------------------------------- the fold

    def add(self, event: LayerEvent, vector: np.ndarray | None = None) -> list[Episode]:
        """Fold one event (later than every event folded); returns the episodes it closed."""
        out: list[Episode] = []
        if self.last_at is not None and event.occurred_at - self.last_at >= self.config.gap:
            out += self._decide(self.run_len, final=True)  # the run ended: every undecided position is decided
            out += self._close_through(self.run_len, "gap")
            self.runs += 1
            self.run_len, self.start, self.decided, self.tail_pos = 0, 0, 0, 0
            self.tail, self.vecs, self.sims = [], [], {}
        if self.with_vectors and vector is None:
            raise ValueError("a fold with vectors was given an event without one")
        self.tail.append(event)
        if self.with_vectors:
            v = np.asarray(vector, dtype=np.float64)
            self.vecs.append(_normalise_rows(v))
        self.run_len += 1
        self.n += 1
        self.df.update(set(content_words(event.content)))
        self.last_at = event.occurred_at
        if self.with_vectors:
            self._similarity_at(self.run_len - self.config.min_events)
            out += self._decide(self.run_len, final=False)
        return out

    def _similarity_at(self, i: int) -> None:
        w, lo = self.config.window, self.config.min_events
        if i < lo or i in self.sims:
            return
        a, b = i - w - self.tail_pos, i - self.tail_pos
        if a < 0 or b + w > len(self.vecs):
            raise ValueError(f"similarity at {i} needs events the tail does not hold")
        left, right = np.sum(self.vecs[a:b], axis=0), np.sum(self.vecs[b:b + w], axis=0)
        self.sims[i] = float(_normalise_rows(left) @ _normalise_rows(right))

    def _is_cut(self, i: int) -> bool:
        lo = self.config.min_events
        s = self.sims.get(i)
        if s is None or s >= self.config.shift_threshold:
            return False
        for j in range(i - lo + 1, i + lo):
            o = self.sims.get(j)
            if o is not None and j != i and (o < s if j > i else o <= s):
                return False
        return True

    def _decide(self, run_len: int, final: bool) -> list[Episode]:
        """Decide the positions whose window is complete (all of them when `final`), closing an
        episode at each cut."""
        lo = self.config.min_events
        upto = run_len if final else run_len - 2 * lo + 2  # positions < upto are decidable
        out: list[Episode] = []
        while self.decided < upto:
            i = self.decided
            self.decided += 1
            if self.with_vectors and self._is_cut(i):
                out += self._close_through(i, "topic")
        return out

    def _close_through(self, end: int, next_boundary: str) -> list[Episode]:
        """Close the open episodes up to run position `end` (exclusive) and start one there."""
        out: list[Episode] = []
        if end > self.start:
            out.append(self._episode(self.closed, self.start, end, self.boundary))
            self.closed += 1
        self.start, self.boundary = end, next_boundary
        keep = max(0, self.start - self.config.window) - self.tail_pos
        if keep > 0:
            del self.tail[:keep]
            del self.vecs[:keep]
            self.tail_pos += keep
            self.sims = {k: v for k, v in self.sims.items() if k >= self.start - self.config.min_events}
        return out

    def _episode(self, index: int, a: int, b: int, boundary: str) -> Episode:
        chunk = self.tail[a - self.tail_pos : b - self.tail_pos]
        emb = np.vstack(self.vecs[a - self.tail_pos : b - self.tail_pos]) if self.with_vectors else None
        summary, quoted = summarise(chunk, emb, Idf(self.df, self.n), self.config.summary_sentences,
                                    self.config.summary_chars)
        return Episode(
            id=f"ep:{chunk[0].id}", conversation_id=chunk[0].conversation_id, index=index,
            event_ids=tuple(e.id for e in chunk), start=chunk[0].occurred_at, end=chunk[-1].occurred_at,
            speakers=tuple(dict.fromkeys(e.speaker for e in chunk if e.speaker)), boundary=boundary,
            summary=summary, summary_event_ids=quoted,
        )

    def open_episodes(self) -> list[Episode]:
        """The current run's episodes after the closed ones, as the log stands (not final)."""
        if not self.tail:
            return []
        cuts = [i for i in range(self.decided, self.run_len) if self._is_cut(i)] if self.with_vectors else []
        bounds = [self.start, *cuts, self.run_len]
        out = []
        for k in range(len(bounds) - 1):
            out.append(self._episode(self.closed + k, bounds[k], bounds[k + 1], self.boundary if k == 0 else "topic"))
        return out

    # ---------------------------------------------------------------- state

    def to_dict(self) -> dict:
        return {"with_vectors": self.with_vectors, "n": self.n, "df": dict(self.df), "closed": self.closed,
                "runs": self.runs, "run_len": self.run_len, "start": self.start, "boundary": self.boundary,
                "decided": self.decided, "tail_pos": self.tail_pos, "tail": [[e.id, e.seq] for e in self.tail],
                "last_at": self.last_at.isoformat() if self.last_at else None}

    @classmethod
    def from_dict(cls, d: dict, events: Callable[[list[str]], tuple[list[LayerEvent], list[np.ndarray] | None]],
                  config: EpisodeConfig = EpisodeConfig()) -> "EpisodeFold":
        """`events(ids)`: the tail's events (with their seq) and, for a fold with vectors, their vectors."""
        ids = [i for i, _ in d["tail"]]
        evs, vecs = events(ids)
        if [e.id for e in evs] != ids or [e.seq for e in evs] != [s for _, s in d["tail"]]:
            raise ValueError("the tail's events are not the ones folded")
        st = cls(config, d["with_vectors"], d["n"], Counter(d["df"]), d["closed"], d["runs"], d["run_len"], d["start"],
                 d["boundary"], d["decided"], d["tail_pos"], list(evs),
                 [_normalise_rows(np.asarray(v, dtype=np.float64)) for v in vecs] if d["with_vectors"] and vecs else [],
                 {}, datetime.fromisoformat(d["last_at"]) if d["last_at"] else None)
        if st.with_vectors:
            for i in range(st.tail_pos + st.config.window, st.run_len - st.config.min_events + 1):
                st._similarity_at(i)
        return st


def segment_episodes(
    events: Sequence[LayerEvent],
    embeddings: np.ndarray | None = None,
    config: EpisodeConfig = EpisodeConfig(),
) -> list[Episode]:
    """Split one conversation's events into episodes. `embeddings[i]` belongs to `events[i]`
    (any order; both are put in time order here). Without embeddings only time gaps split."""
    order = sorted(range(len(events)), key=lambda i: (events[i].occurred_at, events[i].seq))
    fold = EpisodeFold(config, with_vectors=embeddings is not None and len(events) > 0)
    out: list[Episode] = []
    emb = np.asarray(embeddings) if fold.with_vectors else None
    for i in order:
        out += fold.add(events[i], emb[i] if emb is not None else None)
    return out + fold.open_episodes()


def fold_all(fold: EpisodeFold, events: Iterable[tuple[LayerEvent, np.ndarray | None]]) -> list[Episode]:
    """Feed (event, vector) pairs in time order; the episodes they closed."""
    out: list[Episode] = []
    for e, v in events:
        out += fold.add(e, v)
    return out
