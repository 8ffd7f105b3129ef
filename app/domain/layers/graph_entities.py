"""The memory graph's entities (`Entity`) and how names become them (`merge_entities`, `group_names`): by exact
normalised name, then by cosine >= ENTITY_MERGE_COSINE between name embeddings (PRISM App. C.1's merge rule), and a
speaker absorbs short forms of their first name ("Sam" -> Samantha); two speakers never merge. Pure, no I/O: the
name vectors come from the caller's `Encode`.
"""
from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Collection, Sequence

import numpy as np

from app.domain.layers.text import norm_name

ENTITY_MERGE_COSINE = 0.90

Encode = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True, slots=True)
class Entity:
    id: str
    name: str
    kind: str  # person | place | organization | event | animal | concept | thing
    aliases: tuple[str, ...]
    mentions: int
    first_event_id: str


def _slug(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-") or "x"


def _first_name_prefix(short: str, speaker_key: str) -> bool:
    first = speaker_key.split(" ")[0]
    return len(short) >= 3 and " " not in short and first.startswith(short) and short != first


class _UnionFind:
    """Union-find whose groups never join two tagged members (two speakers stay two people)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.tagged: set[str] = set()  # roots of groups holding a tagged member

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb or (ra in self.tagged and rb in self.tagged):
            return
        self.parent[rb] = ra
        if rb in self.tagged:
            self.tagged.discard(rb)
            self.tagged.add(ra)


def merge_entities(
    mentions: Sequence[tuple[str, str, str]],
    speakers: Sequence[str],
    encode: Encode | None = None,
    threshold: float = ENTITY_MERGE_COSINE,
    same_as: Sequence[tuple[str, str]] = (),
) -> tuple[dict[str, str], list[Entity]]:
    """Merge (surface, kind, event_id) mentions into entities.

    Returns (normalised surface -> entity id, entities). Speakers are always entities of kind person.
    """
    surfaces: dict[str, Counter[str]] = defaultdict(Counter)
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    first_event: dict[str, str] = {}
    first_pos: dict[str, int] = {}  # the position of each name's first mention
    for s in speakers:
        if s:
            k = norm_name(s)
            surfaces[k][s] += 0
            kinds[k]["person"] += 100  # a speaker is a person whatever the context says
    for surface, kind, event_id in mentions:
        k = norm_name(surface)
        if not k:
            continue
        surfaces[k][surface] += 1
        kinds[k][kind] += 1
        first_event.setdefault(k, event_id)
        first_pos.setdefault(k, len(first_pos))
    keys = list(surfaces)
    pairs: list[tuple[int, int]] = []
    if encode is not None and len(keys) > 1:
        vecs = np.asarray(encode(keys), dtype=np.float32)
        sims = vecs @ vecs.T
        idx_i, idx_j = np.where(np.triu(sims, k=1) >= threshold)
        pairs = list(zip(idx_i.tolist(), idx_j.tolist()))
    return group_names(keys, surfaces, kinds, first_event, first_pos, speakers,
                       [(norm_name(x), norm_name(y)) for x, y in same_as], pairs)


def group_names(keys: Sequence[str], surfaces: dict[str, Counter[str]], kinds: dict[str, Counter[str]],
                first_event: dict[str, str], first_pos: dict[str, int], speakers: Sequence[str],
                same_as: Sequence[tuple[str, str]], cosine: Sequence[tuple[int, int]],
                memo: dict[tuple[str, ...], tuple] | None = None, touched: Collection[str] = ()
                ) -> tuple[dict[str, str], list[Entity]]:
    """The entities of names already counted (`merge_entities`, and the incremental assembly of
    `app.domain.layers.graph_inc`, which keeps the counts): `keys` in order (speakers' first, then by
    first mention), per key its surfaces and kind votes (a speaker's with their 100 person votes),
    the event of its first mention and its position among first mentions; `same_as`: normalised
    pairs stated or said short and long, in fact order; `cosine`: index pairs (i < j, row-major) of
    `keys` whose names' vectors are close. Unions are applied in that order: speakers' short first
    names, then `same_as`, then `cosine`. `memo`: a group's attributes from the last call, kept for
    a group of the same members none of which is in `touched` (their counts unchanged)."""
    uf = _UnionFind()
    speaker_keys = [norm_name(s) for s in speakers if s]
    for k in speaker_keys:
        uf.find(k)
        uf.tagged.add(k)
    for k in keys:
        uf.find(k)
    # a speaker absorbs short forms of their own first name ("Sam" -> "samantha")
    for k in keys:
        for sk in speaker_keys:
            if _first_name_prefix(k, sk):
                uf.union(sk, k)
    for kx, ky in same_as:  # aliases the extractor saw stated (apposition, "X is my sister")
        if kx in surfaces and ky in surfaces:
            uf.union(kx, ky)
    for i, j in cosine:
        uf.union(keys[i], keys[j])
    groups: dict[str, list[str]] = defaultdict(list)
    for k in keys:
        groups[uf.find(k)].append(k)
    key_to_id: dict[str, str] = {}
    entities: list[Entity] = []
    used_ids: set[str] = set()
    kept: dict[tuple[str, ...], tuple] = {}
    for members in sorted(groups.values(), key=lambda m: min(m)):
        t = tuple(members)
        attrs = memo.get(t) if memo is not None and not any(k in touched for k in members) else None
        if attrs is None:
            attrs = _group_attributes(members, surfaces, kinds, first_event, first_pos, speaker_keys)
        kept[t] = attrs
        id_key, slug, name, kind, aliases, mentions, first = attrs
        eid = f"en:{slug}"
        if eid in used_ids:  # "c++ group" and "c group" slug alike: keep both apart
            eid = f"{eid}-{zlib.crc32(id_key.encode()):08x}"
        used_ids.add(eid)
        for k in members:
            key_to_id[k] = eid
        entities.append(Entity(id=eid, name=name, kind=kind, aliases=aliases, mentions=mentions, first_event_id=first))
    if memo is not None:
        memo.clear()
        memo.update(kept)
    entities.sort(key=lambda e: e.id)
    return key_to_id, entities


def _group_attributes(members: list[str], surfaces: dict[str, Counter[str]], kinds: dict[str, Counter[str]],
                      first_event: dict[str, str], first_pos: dict[str, int], speaker_keys: list[str]) -> tuple:
    """(id key, its slug, name, kind, aliases, mentions, first event) of one group of names."""
    total = Counter[str]()
    kind_votes = Counter[str]()
    for k in members:
        total.update(surfaces[k])
        kind_votes.update(kinds[k])
    speaker_member = next((k for k in members if k in speaker_keys), None)
    # graph/4: the id is the speaker's, else the member named first (counts do not move ids); the
    # name shown is the most mentioned member's most used surface
    id_key = speaker_member or min(members, key=lambda k: (first_pos.get(k, -1), k))
    canonical_key = speaker_member or max(members, key=lambda k: (sum(surfaces[k].values()), len(k)))
    name = max(surfaces[canonical_key].items(), key=lambda kv: (kv[1], kv[0]))[0]
    return (id_key, _slug(id_key), name, kind_votes.most_common(1)[0][0] if kind_votes else "thing",
            tuple(sorted({s for k in members for s in surfaces[k]} - {name})), sum(total.values()),
            min((first_event[k] for k in members if k in first_event), default=""))
