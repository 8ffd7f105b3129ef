"""The evolution edges of the memory graph kept between batches (`graph_inc.Assembly`): per
(entity, attribute), consolidation's assertions in timeline order (time, seq, id), each at the
facet point that states it; consecutive ones stated by two facet points are linked, `changed` saying
whether the value changed or was restated (`graph_model.assemble`). A batch inserts and removes
assertions in their chains and compares the pairs beside what it touched, before and after.
"""
from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from app.domain.layers.assertions import Assertion
from app.domain.layers.graph_model import Edge, FacetPoint

Triple = tuple[str, str, str]


def adjacent(chain: list, keys: Iterable) -> set[tuple]:
    """The consecutive pairs of a sorted chain beside each of `keys` (present or not)."""
    out = set()
    for t in keys:
        i = bisect.bisect_left(chain, t)
        if i < len(chain) and chain[i] == t:
            if i > 0:
                out.add((chain[i - 1], t))
            if i + 1 < len(chain):
                out.add((t, chain[i + 1]))
        elif 0 < i < len(chain):
            out.add((chain[i - 1], chain[i]))
    return out


@dataclass
class Evolution:
    assertions: dict[str, Assertion] = field(default_factory=dict)
    a_by_event: dict[str, set[str]] = field(default_factory=dict)
    achains: dict[tuple, list[tuple]] = field(default_factory=dict)  # (entity key, attribute) -> [(time, seq, id)]
    a2fp: dict[str, str] = field(default_factory=dict)
    edges: dict[Triple, dict[tuple, Edge]] = field(default_factory=dict)  # by (earlier, later) assertion

    @staticmethod
    def _assertion_fp(a: Assertion, fps: dict[str, list[FacetPoint]]) -> str | None:
        """The facet point that states an assertion: the one containing its words, else the first."""
        said = fps.get(a.event_id) or []
        if not said:
            return None
        words_ = [w for w in re.findall(r"\w+", a.value.lower()) if len(w) > 2] or [a.value.lower()]
        return next((fp for fp in said if all(w in fp.text.lower() for w in words_)), said[0]).id

    def _evolution_edges(self, pairs: Iterable[tuple[tuple, tuple]], a2fp: dict[str, str]) -> dict[tuple, Edge]:
        out = {}
        for (_, _, pid), (_, _, aid) in pairs:
            if pid in a2fp and aid in a2fp and a2fp[pid] != a2fp[aid]:
                prev, a = self.assertions[pid], self.assertions[aid]
                changed = prev.value_key != a.value_key or prev.negated != a.negated
                out[(pid, aid)] = Edge(a2fp[pid], a2fp[aid], "evolution",
                                       meta={"attribute": a.attribute, "from": prev.value, "to": a.value,
                                             "changed": changed})
        return out

    def update(self, assertions: Sequence[Assertion], moved: set[str], fps: dict[str, list[FacetPoint]],
               triples: set[Triple]) -> int:
        """Evolution edges: consecutive assertions on one (entity, attribute) in timeline order, each
        at the facet point stating it (`fps`: per event, its facet points now). Touched: the new,
        changed or gone assertions and those of the events whose facet points moved. Adds the edge
        groups it changed to `triples`; returns the change in the number of evolution edges."""
        new = {a.id: a for a in assertions}
        # (the same objects, as a held reader passes them again, compare by identity first: cheap)
        gone = [i for i, a in self.assertions.items() if (b := new.get(i)) is not a and b != a]
        came = [i for i, a in new.items() if (b := self.assertions.get(i)) is not a and b != a]
        touched = set(gone) | set(came) | {i for e in moved for i in self.a_by_event.get(e, ())}
        if not touched:
            return 0
        count = 0
        old_a2fp = {i: self.a2fp[i] for i in touched if i in self.a2fp}

        def key(a: Assertion) -> tuple:
            return (a.entity_key, a.attribute)

        def item(a: Assertion) -> tuple:
            return (a.time, a.seq, a.id)

        by_chain: dict[tuple, set[tuple]] = defaultdict(set)
        for i in touched:
            for a in (self.assertions.get(i), new.get(i)):
                if a is not None:
                    by_chain[key(a)].add(item(a))
        before = {c: adjacent(self.achains.get(c, []), ks) for c, ks in by_chain.items()}
        old_edges = self._evolution_edges({p for ps in before.values() for p in ps}, {**self.a2fp, **old_a2fp})
        for i in gone:
            a = self.assertions.pop(i)
            chain = self.achains[key(a)]
            del chain[bisect.bisect_left(chain, item(a))]
            self.a_by_event[a.event_id].discard(i)
            self.a2fp.pop(i, None)
        for i in came:
            a = new[i]
            self.assertions[i] = a
            bisect.insort(self.achains.setdefault(key(a), []), item(a))
            self.a_by_event.setdefault(a.event_id, set()).add(i)
        for i in touched:
            if i in self.assertions:
                fp = self._assertion_fp(self.assertions[i], fps)
                if fp is None:
                    self.a2fp.pop(i, None)
                else:
                    self.a2fp[i] = fp
        after = {c: adjacent(self.achains.get(c, []), ks) for c, ks in by_chain.items()}
        new_edges = self._evolution_edges({p for ps in after.values() for p in ps}, self.a2fp)
        for k, e in old_edges.items():
            if new_edges.get(k) != e:
                t = (e.src, e.dst, "evolution")
                del self.edges[t][k]
                if not self.edges[t]:
                    del self.edges[t]
                count -= 1
                triples.add(t)
        for k, e in new_edges.items():
            if old_edges.get(k) != e:
                t = (e.src, e.dst, "evolution")
                self.edges.setdefault(t, {})[k] = e
                count += 1
                triples.add(t)
        return count
