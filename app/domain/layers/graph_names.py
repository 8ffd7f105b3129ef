"""The entity merge of the memory graph (`graph_entities.merge_entities`) over counts kept between
batches (#18 item 4).

What the merge reads of the facts is counted per name (`NameCounts`): per normalised key its
surfaces and kind votes, the event and position of its first mention; per surface the first fact
naming it, whether it was ever named other than as a concept, or as a place; the stated same-as
pairs with the fact stating them. The closed events' facts never change (`graph_fold`), so their
counts only grow; the open tail's are counted again each batch and laid over them (`NameMerge`).
The name-vector cosines are kept as the pairs found, each name compared once with the names before
it (a batch compares its new names with all, not every name with every other). The short forms
("Tallow" ... "Tallow Studio") are looked up from an index of the longer names by their first and
last word. What stays proportional to the number of distinct names (not to the log): the union-find
over them and the entities' attributes, recomputed per batch from those counts (`group_names`),
a few milliseconds for thousands of names.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from app.domain.layers.aliases import initials, mostly_places, nick_key, nicknames, not_people, short_forms
from app.domain.layers.graph_entities import ENTITY_MERGE_COSINE, Entity, group_names
from app.domain.layers.graph_model import RawFact
from app.domain.layers.text import norm_name


@dataclass
class NameCounts:
    """What the merge reads of a run of facts, counted (facts numbered from `offset`)."""

    offset: int = 0
    facts: int = 0
    surf: dict[str, Counter[str]] = field(default_factory=dict)
    kind: dict[str, Counter[str]] = field(default_factory=dict)
    first_event: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # keys by first mention
    surface_first: dict[str, int] = field(default_factory=dict)  # surface -> index of the first fact naming it
    named: set[str] = field(default_factory=set)  # surfaces named other than as a concept
    places: Counter[str] = field(default_factory=Counter)  # surface -> mentions as a place
    said: Counter[str] = field(default_factory=Counter)  # surface -> mentions other than as a concept
    stated: list[tuple[int, str, str]] = field(default_factory=list)  # (fact index, x, y)
    by_word: dict[str, set[str]] = field(default_factory=dict)  # first / last word, initials -> longer names
    by_nick: dict[str, set[str]] = field(default_factory=dict)  # `nick_key` -> names (`nicknames`)

    def add(self, facts: Iterable[RawFact]) -> None:
        for f in facts:
            i = self.offset + self.facts
            self.facts += 1
            for name, kind in f.entities:
                self.surface_first.setdefault(name, i)
                if kind != "concept" and name not in self.named:
                    self.named.add(name)
                    self.by_nick.setdefault(nick_key(name), set()).add(name)
                    toks = name.split()
                    if len(toks) >= 2:
                        self.by_word.setdefault(toks[0], set()).add(name)
                        if len(toks) == 2:
                            self.by_word.setdefault(toks[1], set()).add(name)
                        if letters := initials(name):
                            self.by_word.setdefault(letters, set()).add(name)
                if kind != "concept":
                    self.said[name] += 1
                if kind == "place":
                    self.places[name] += 1
                k = norm_name(name)
                if not k:
                    continue
                self.surf.setdefault(k, Counter())[name] += 1
                self.kind.setdefault(k, Counter())[kind] += 1
                if k not in self.first_event:
                    self.first_event[k] = f.event_id
                    self.order.append(k)
            for x, y in f.same_as:
                self.stated.append((i, x, y))


Encode = Callable[[list[str]], np.ndarray]


@dataclass
class NameMerge:
    """The closed facts' counts, the cosine pairs found among their names (and the speakers'), and
    the merge of those with an open tail's counts."""

    closed: NameCounts = field(default_factory=NameCounts)
    compared: list[str] = field(default_factory=list)  # keys whose cosines with the ones before are known
    cosine: set[tuple[str, str]] = field(default_factory=set)  # (earlier compared, later compared)
    threshold: float = ENTITY_MERGE_COSINE
    matrix: np.ndarray | None = None  # the compared keys' vectors (float32), a row each
    memo: dict[tuple[str, ...], tuple] = field(default_factory=dict)  # groups' attributes (`group_names`)
    was_open: set[str] = field(default_factory=set)  # the keys the last tail named
    closed_touched: set[str] = field(default_factory=set)  # keys the facts closed since the last merge named
    memo_keys: set[str] = field(default_factory=set)  # the keys of the last merge

    def close(self, facts: Iterable[RawFact]) -> None:
        """Count facts that closed (in order)."""
        facts = list(facts)
        self.closed.add(facts)
        self.closed_touched.update(norm_name(n) for f in facts for n, _ in f.entities)

    def _close_pairs(self, vectors: Encode, new: list[str], old: np.ndarray | None, old_keys: list[str]
                     ) -> tuple[list[tuple[str, str]], np.ndarray]:
        """(old or earlier new, new) pairs of names at cosine >= threshold, and the new names' vectors."""
        vn = np.asarray(vectors(new), dtype=np.float32) if new else np.zeros((0, 0), np.float32)
        out = []
        if not new:
            return out, vn
        if old is not None and len(old_keys):
            sims = vn @ old.T
            for i, j in zip(*np.where(sims >= self.threshold)):
                out.append((old_keys[int(j)], new[int(i)]))
        sims = vn @ vn.T
        for i, j in zip(*np.where(np.triu(sims, k=1) >= self.threshold)):
            out.append((new[int(i)], new[int(j)]))
        return out, vn

    def merge(self, speakers: Sequence[str], tail: NameCounts, vectors: Encode | None
              ) -> tuple[dict[str, str], list[Entity]]:
        """`merge_entities` over the closed facts then the tail's (counted from `closed.facts`)."""
        c = self.closed
        surfaces: dict[str, Counter[str]] = {}
        kinds: dict[str, Counter[str]] = {}
        for s in speakers:
            if s:
                k = norm_name(s)
                if k not in surfaces:
                    surfaces[k] = Counter(c.surf.get(k, ()))
                    kinds[k] = Counter({"person": 0})
                surfaces[k][s] += 0
                kinds[k]["person"] += 100
        for k in surfaces:
            kinds[k].update(c.kind.get(k, ()))
        spoken = set(surfaces)
        for k in c.order:
            if k not in spoken:
                surfaces[k], kinds[k] = c.surf[k], c.kind[k]
        for k in tail.order:
            if k in surfaces:
                if k not in spoken and k in c.surf:  # a closed key: a new Counter, the kept one untouched
                    surfaces[k], kinds[k] = c.surf[k] + Counter(), c.kind[k] + Counter()
                surfaces[k].update(tail.surf[k])
                kinds[k].update(tail.kind[k])
            else:
                surfaces[k], kinds[k] = Counter(tail.surf[k]), Counter(tail.kind[k])
        keys = list(surfaces)
        first_event = {**tail.first_event, **c.first_event}
        first_pos = {k: i for i, k in enumerate(c.order)}
        for k in tail.order:
            first_pos.setdefault(k, len(first_pos))
        pos = {k: i for i, k in enumerate(keys)}
        cosine: list[tuple[int, int]] = []
        if vectors is not None and len(keys) > 1:
            done = set(self.compared)
            lasting = [k for k in keys if k in spoken or k in c.first_event]
            new = [k for k in lasting if k not in done]
            found, vn = self._close_pairs(vectors, new, self.matrix, self.compared)
            self.cosine.update(found)
            if new:
                self.matrix = vn if self.matrix is None else np.vstack([self.matrix, vn])
                self.compared += new
            fresh = set(new)
            passing = [k for k in keys if k not in done and k not in fresh]
            pairs = list(self.cosine) + self._close_pairs(vectors, passing, self.matrix, self.compared)[0]
            cosine = sorted({(min(pos[a], pos[b]), max(pos[a], pos[b])) for a, b in pairs if a in pos and b in pos})
        now_open = set(tail.order)
        touched = now_open | self.was_open | self.closed_touched | spoken | (set(surfaces) - self.memo_keys)
        self.was_open, self.closed_touched = now_open, set()
        out = group_names(keys, surfaces, kinds, first_event, first_pos, speakers, self._same_as(tail, speakers), cosine,
                          self.memo, touched)
        self.memo_keys = set(keys)
        return out

    def _same_as(self, tail: NameCounts, speakers: Sequence[str]) -> list[tuple[str, str]]:
        """The stated pairs and the short forms' and nicknames' (`add_short_forms`: each rides on the
        first fact naming the short form, after that fact's stated pairs), in fact order, normalised."""
        c = self.closed
        named, places = c.named | tail.named, mostly_places(c.places + tail.places, c.said + tail.said)
        first = {**tail.surface_first, **c.surface_first}
        ordered: list[tuple[int, int, str, str, str]] = []
        for n, (i, x, y) in enumerate(c.stated + tail.stated):
            ordered.append((i, 0, f"{n:09d}", x, y))
        words = set(c.by_word) | set(tail.by_word)
        pairs: dict[tuple[str, str], None] = {}
        for w in words:  # a short form said alone ("Okoro", "MCS") or with a title ("Mr Okoro")
            longs = sorted(c.by_word.get(w, set()) | tail.by_word.get(w, set()))
            if w in named or len(longs) > 1 or any(n.split()[-1] == w for n in longs):
                pairs.update(dict.fromkeys(short_forms([w, *longs] if w in named else longs, places)))
        for key in set(c.by_nick) | set(tail.by_nick):  # "Bron" ... "Bronwen": one group per first letters
            group = sorted(c.by_nick.get(key, set()) | tail.by_nick.get(key, set()))
            if len(group) < 2:
                continue
            kinds = {k: c.kind.get(k, Counter()) + tail.kind.get(k, Counter()) for k in map(norm_name, group)}
            others = not_people(kinds)
            blocked = frozenset(n for n in group if n in places or norm_name(n) in others)
            pairs.update(dict.fromkeys(nicknames(group, blocked, speakers)))
        for short, long_ in pairs:
            ordered.append((first[short], 1, short, short, long_))
        ordered.sort()
        return [(norm_name(x), norm_name(y)) for _, _, _, x, y in ordered]
