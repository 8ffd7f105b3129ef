"""The memory graph assembled batch by batch (#18 item 4): `graph_model.assemble`'s output,
kept with what extends it, so a batch touches only what it changes.

Kept: per event its facts and facet points; per normalised name its counts (`graph_names`) and the
events naming it; per entity its temporal chain (facet points in the order of the dates they are
about) and its facets; per facet its members; per (entity, attribute) its assertions in timeline
order; per edge group (src, dst, type) its edges. A batch:

1. sets the facts of the events it closes and of the open tail (the events extracted this batch);
2. merges the names again from their counts (O(distinct names), `NameMerge.merge`) and compares
   each name's entity with the last batch's;
3. recomputes the facet points of the events whose facts, names' entities, episode or speakers'
   entities changed, and moves them between facets and chains: an insertion into a chain changes
   the edges beside it only; the same for the evolution chains of the assertions of those events
   and of the new assertions;
4. returns the rows it touched (`RowDelta`): nodes and edge groups to replace or delete, and the
   events whose graph signals to rewrite (theirs changed, or an entity they name changed its name).

A full build is the same `update` from an empty assembly with every event; `rows()` lists all
rows, equal to `graph_rows.fragment_rows(graph_model.assemble(...))` over the same facts
(tests/unit/test_incremental_graph.py).
"""
from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from app.domain.layers.assertions import Assertion
from app.domain.layers.episodes import Episode
from app.domain.layers.graph_entities import Entity
from app.domain.layers.graph_model import EDGE_TYPES, Edge, FacetPoint, RawFact
from app.domain.layers.graph_evolution import Evolution, adjacent
from app.domain.layers.graph_names import NameCounts, NameMerge
from app.domain.layers.graph_rows import edge_row, entity_row, episode_row, event_signal, facet_point_row, facet_row
from app.domain.layers.text import norm_name

Encode = Callable[[list[str]], np.ndarray]
Triple = tuple[str, str, str]


@dataclass
class RowDelta:
    node_keys: list[str]  # nodes to delete (then `nodes` inserted)
    nodes: list[dict]
    edge_triples: list[Triple]  # edge groups to delete (then `edges` inserted)
    edges: list[dict]
    signals: list[dict]  # per-event signal rows to upsert


def _time_counts(facts: Iterable[RawFact]) -> Counter[str]:
    c: Counter[str] = Counter()
    for f in facts:
        for m in f.dates:
            c["mentions"] += 1
            if m.kind in ("relative", "vague"):
                c["relative"] += 1
                c["relative_resolved"] += bool(m.resolved)
            if m.kind == "absolute":
                c["absolute"] += 1
                c["absolute_resolved"] += bool(m.resolved)
    return c


@dataclass
class Assembly:
    version: str = ""  # the layer version written into the signal rows
    names: NameMerge = field(default_factory=NameMerge)
    events: dict[str, tuple[str | None, str, int]] = field(default_factory=dict)  # id -> (speaker, time, seq)
    turn_dates: dict[str, list[dict]] = field(default_factory=dict)  # id -> its turn's time mentions (the fold's)
    order: list[str] = field(default_factory=list)  # event ids in time order
    pos: dict[str, int] = field(default_factory=dict)
    speakers: list[str] = field(default_factory=list)
    facts: dict[str, list[RawFact]] = field(default_factory=dict)
    causes: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)  # per event, per fact: causes' fp ids
    tail: list[str] = field(default_factory=list)
    event_keys: dict[str, set[str]] = field(default_factory=dict)  # event -> names it says
    postings: dict[str, set[str]] = field(default_factory=dict)  # name -> events saying it
    key_to_id: dict[str, str] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    speaker_ids: set = field(default_factory=set)
    fps: dict[str, list[FacetPoint]] = field(default_factory=dict)
    facets: dict[str, list] = field(default_factory=dict)  # id -> [episode, entity, topic, members]
    entity_facets: dict[str, set[str]] = field(default_factory=dict)
    chains: dict[str, list[tuple]] = field(default_factory=dict)  # entity -> [(date, seq, k, fp id)]
    owned: dict[Triple, tuple[Edge, ...]] = field(default_factory=dict)  # facet points' and facets' edges
    fp_edges: dict[str, tuple[Edge, ...]] = field(default_factory=dict)  # a facet point's own edges
    temporal: dict[Triple, dict[str, Edge]] = field(default_factory=dict)  # by entity
    episodes: dict[str, Episode] = field(default_factory=dict)
    evolution: Evolution = field(default_factory=Evolution)
    ep_of_event: dict[str, str] = field(default_factory=dict)
    time_counts: dict[str, Counter[str]] = field(default_factory=dict)
    time_total: Counter[str] = field(default_factory=Counter)
    edge_count: Counter[str] = field(default_factory=Counter)
    fp_count: int = 0

    # ---------------------------------------------------------------- a batch

    def update(self, new_events: Sequence[tuple], closed: Sequence[tuple[str, list[RawFact]]],
               tail: Sequence[tuple[str, list[RawFact]]], episodes: Sequence[Episode],
               assertions: Sequence[Assertion], vectors: Encode | None, delta: bool = True) -> RowDelta | None:
        """`new_events`: (id, speaker, ISO time, seq[, the turn's time mentions as data]) in time order (the
        mentions go into the event's signal row, `graph_rows.signal_row`); `closed`: the events closed since
        the last update with their facts (in order); `tail`: every open event with its facts now.
        Without `delta` (a full build, or an assembly made again, which write `rows()`), the rows
        touched are not listed: None."""
        nodes: set[str] = set()
        triples: set[Triple] = set()
        for eid, speaker, at, seq, *turn in new_events:
            self.events[eid] = (speaker, at, seq)
            if turn:
                self.turn_dates[eid] = turn[0]
            self.pos[eid] = len(self.order)
            self.order.append(eid)
            if speaker and speaker not in self.speakers:
                self.speakers.append(speaker)
        refact = set(self.tail) | {e for e, _ in closed} | {e for e, _ in tail}
        for eid, fs in closed:
            self.facts[eid] = fs
            self.names.close(fs)
        counts = NameCounts(offset=self.names.closed.facts)
        for eid, fs in tail:
            self.facts[eid] = fs
            counts.add(fs)
        self.tail = [e for e, _ in tail]
        for eid in sorted(refact, key=self.pos.__getitem__):
            self._set_causes(eid)
            self._post(eid)
        # names -> entities
        key_to_id, ents = self.names.merge(self.speakers, counts, vectors)
        new_entities = {e.id: e for e in ents}
        moved = {k for k, v in key_to_id.items() if self.key_to_id.get(k) != v}
        moved |= {k for k in self.key_to_id if k not in key_to_id}
        changed = {i for i, e in new_entities.items() if self.entities.get(i) != e}
        changed |= {i for i in self.entities if i not in new_entities}
        renamed = {i for i in changed if (i not in new_entities or i not in self.entities
                                          or (new_entities[i].name, new_entities[i].aliases)
                                          != (self.entities[i].name, self.entities[i].aliases))}
        speaker_ids = {key_to_id.get(norm_name(s)) for s in self.speakers}
        flipped = speaker_ids ^ self.speaker_ids
        nodes |= changed
        members: dict[str, list[str]] = defaultdict(list)
        for k, v in key_to_id.items():
            members[v].append(k)
        for k, v in self.key_to_id.items():
            members[v].append(k)
        self.key_to_id, self.entities, self.speaker_ids = key_to_id, new_entities, speaker_ids

        def naming(ids: Iterable[str]) -> set[str]:
            return {e for i in ids for k in members.get(i, ()) for e in self.postings.get(k, ())}

        dirty = refact | {e for k in moved for e in self.postings.get(k, ())} | naming(flipped)
        dirty |= self._set_episodes(episodes, nodes)
        signals = dirty | naming(renamed)
        # facet points
        chain_keys: dict[str, set[tuple]] = defaultdict(set)
        moves: list[tuple[str, list[FacetPoint], list[FacetPoint]]] = []
        for eid in sorted(dirty, key=self.pos.__getitem__):
            old, new = self.fps.get(eid, []), self._facet_points(eid)
            if old != new or any(self.fp_edges.get(fp.id) != self._fp_edges(fp, self.causes[eid][i])
                                 for i, fp in enumerate(new)):
                moves.append((eid, old, new))
                for fp in (*old, *new):
                    for en in fp.entity_ids:
                        chain_keys[en].add((fp.reference_date, self.events[eid][2], int(fp.id.rsplit(":", 1)[1]), fp.id))
        before = {en: adjacent(self.chains.get(en, []), ks) for en, ks in chain_keys.items()}
        touched_facets: set[str] = set()
        for eid, old, new in moves:
            for fp in old:
                self._drop_fp(fp, touched_facets, nodes, triples)
            for i, fp in enumerate(new):
                self._add_fp(fp, self.causes[eid][i], touched_facets, nodes, triples)
            self.fps[eid] = new
            self.fp_count += len(new) - len(old)
        for en, ks in chain_keys.items():
            after = adjacent(self.chains.get(en, []), ks)
            for a, b in before[en] - after:
                t = (a[3], b[3], "temporal")
                del self.temporal[t][en]
                if not self.temporal[t]:
                    del self.temporal[t]
                self.edge_count["temporal"] -= 1
                triples.add(t)
            for a, b in after - before[en]:
                t = (a[3], b[3], "temporal")
                self.temporal.setdefault(t, {})[en] = Edge(a[3], b[3], "temporal",
                                                           meta={"entity": en, "from": a[0], "to": b[0]})
                self.edge_count["temporal"] += 1
                triples.add(t)
        for en in renamed:
            touched_facets |= self.entity_facets.get(en, set())
        for fc in touched_facets:
            self._facet_rows(fc, nodes, triples)
        self.edge_count["evolution"] += self.evolution.update(assertions, {eid for eid, _, _ in moves}, self.fps,
                                                             triples)
        for eid in refact:
            self.time_total.subtract(self.time_counts.get(eid, Counter()))
            self.time_counts[eid] = _time_counts(self.facts.get(eid, ()))
            self.time_total.update(self.time_counts[eid])
        return self._delta(nodes, triples, signals) if delta else None

    # ---------------------------------------------------------------- facts and facet points

    def _set_causes(self, eid: str) -> None:
        """Causes as facet point ids: an index among the event's facts, or the last fact before it."""
        prev = None
        i = self.pos[eid] - 1
        while i >= 0:
            n = len(self.facts.get(self.order[i], ()))
            if n:
                prev = f"fp:{self.order[i]}:{n - 1}"
                break
            i -= 1
        self.causes[eid] = tuple(tuple(f"fp:{eid}:{c}" if c >= 0 else prev for c in f.causes if c >= 0 or prev)
                                 for f in self.facts.get(eid, ()))

    def _post(self, eid: str) -> None:
        for k in self.event_keys.pop(eid, set()):
            self.postings[k].discard(eid)
        keys = {norm_name(n) for f in self.facts.get(eid, ()) for n, _ in f.entities} - {""}
        self.event_keys[eid] = keys
        for k in keys:
            self.postings.setdefault(k, set()).add(eid)

    def _facet_points(self, eid: str) -> list[FacetPoint]:
        speaker, at, _ = self.events[eid]
        ep = self.ep_of_event.get(eid)
        out = []
        for k, f in enumerate(self.facts.get(eid, ())):
            ents = tuple(dict.fromkeys(self.key_to_id[n] for n in (norm_name(x) for x, _ in f.entities)
                                       if n in self.key_to_id))
            primary = next((x for x in ents if x not in self.speaker_ids), ents[0] if ents else None)
            # "~" marks "no episode" / "no primary entity": an entity may well be named "none".
            fc = f"fc:{ep or '~'}:{primary[3:] if primary else '~'}:{f.topic}"
            out.append(FacetPoint(f"fp:{eid}:{k}", eid, ep, fc, speaker, f.text, f.topic, ents, at, tuple(f.dates)))
        return out

    def _fp_edges(self, fp: FacetPoint, causes: Sequence[str]) -> tuple[Edge, ...]:
        out = []
        for en in fp.entity_ids:
            out += [Edge(en, fp.id, "belongs_to"), Edge(fp.id, en, "involves_entity")]
        out.append(Edge(fp.id, fp.facet_id, "belongs_to"))
        f = self.facts[fp.event_id][int(fp.id.rsplit(":", 1)[1])]
        out += [Edge(c, fp.id, "causal", meta={"cue": f.cue or ""}) for c in causes]
        return tuple(out)

    def _own(self, e: Edge, add: bool, triples: set[Triple]) -> None:
        t = (e.src, e.dst, e.type)
        if add:
            self.owned[t] = (*self.owned.get(t, ()), e)
        else:
            group = list(self.owned[t])
            group.remove(e)
            if group:
                self.owned[t] = tuple(group)
            else:
                del self.owned[t]
        self.edge_count[e.type] += 1 if add else -1
        triples.add(t)

    def _add_fp(self, fp: FacetPoint, causes: Sequence[str], facets: set[str], nodes: set[str], triples: set[Triple]) -> None:
        nodes.add(fp.id)
        primary = next((x for x in fp.entity_ids if x not in self.speaker_ids), fp.entity_ids[0] if fp.entity_ids else None)
        entry = self.facets.setdefault(fp.facet_id, [fp.episode_id, primary, fp.topic, set()])
        entry[3].add(fp.id)
        if primary:
            self.entity_facets.setdefault(primary, set()).add(fp.facet_id)
        facets.add(fp.facet_id)
        own = self._fp_edges(fp, causes)
        self.fp_edges[fp.id] = own
        for e in own:
            self._own(e, True, triples)
        seq = self.events[fp.event_id][2]
        for en in fp.entity_ids:
            bisect.insort(self.chains.setdefault(en, []), (fp.reference_date, seq, int(fp.id.rsplit(":", 1)[1]), fp.id))

    def _drop_fp(self, fp: FacetPoint, facets: set[str], nodes: set[str], triples: set[Triple]) -> None:
        nodes.add(fp.id)
        self.facets[fp.facet_id][3].discard(fp.id)
        facets.add(fp.facet_id)
        for e in self.fp_edges.pop(fp.id):
            self._own(e, False, triples)
        seq = self.events[fp.event_id][2]
        for en in fp.entity_ids:
            chain = self.chains[en]
            del chain[bisect.bisect_left(chain, (fp.reference_date, seq, int(fp.id.rsplit(":", 1)[1]), fp.id))]

    # ---------------------------------------------------------------- episodes, facets, evolution

    def _set_episodes(self, episodes: Sequence[Episode], nodes: set[str]) -> set[str]:
        """Consolidation's episodes now; the events whose episode changed."""
        new = {ep.id: ep for ep in episodes}
        changed = [i for i, ep in new.items() if (was := self.episodes.get(i)) is not ep and was != ep]
        changed += [i for i in self.episodes if i not in new]
        if not changed:
            return set()
        nodes.update(changed)
        was = {}
        for i in changed:
            for e in (self.episodes[i].event_ids if i in self.episodes else ()):
                was.setdefault(e, self.ep_of_event.pop(e, None))
        for ep in episodes:
            if ep.id in changed:
                for e in ep.event_ids:
                    was.setdefault(e, self.ep_of_event.get(e))
                    self.ep_of_event[e] = ep.id
        self.episodes = new
        return {e for e, old in was.items() if self.ep_of_event.get(e) != old and e in self.events}

    def _facet_rows(self, fc: str, nodes: set[str], triples: set[Triple]) -> None:
        nodes.add(fc)
        ep, primary, _, members = self.facets[fc]
        if ep:
            triples.add((fc, ep, "belongs_to"))
            edge = Edge(fc, ep, "belongs_to")
            has = (fc, ep, "belongs_to") in self.owned
            if members and not has:
                self._own(edge, True, triples)
            elif not members and has:
                self._own(edge, False, triples)
        if not members:
            del self.facets[fc]
            if primary:
                self.entity_facets[primary].discard(fc)

    # ---------------------------------------------------------------- rows

    def _node(self, key: str) -> dict | None:
        if key in self.entities:
            return entity_row(self.entities[key])
        if key.startswith("fp:"):
            eid, k = key[3:].rsplit(":", 1)
            fps = self.fps.get(eid, [])
            return facet_point_row(fps[int(k)]) if int(k) < len(fps) else None
        if key in self.facets:
            ep, primary, topic, members = self.facets[key]
            label = f"{self.entities[primary].name if primary in self.entities else 'conversation'} · {topic}"
            return facet_row(key, ep, primary, topic, label, len(members))
        if key in self.episodes:
            return episode_row(self.episodes[key])
        return None

    def _group(self, t: Triple) -> list[Edge]:
        return [*self.owned.get(t, ()), *self.temporal.get(t, {}).values(), *self.evolution.edges.get(t, {}).values()]

    def _signal(self, eid: str) -> dict:
        return event_signal(int(eid), self.events[eid][0], self.fps.get(eid, ()), self.entities, self.version,
                            self.turn_dates.get(eid))

    def _delta(self, nodes: set[str], triples: set[Triple], signals: set[str]) -> RowDelta:
        rows = [r for r in (self._node(k) for k in sorted(nodes)) if r is not None]
        edges = [edge_row(e) for t in sorted(triples) for e in self._group(t)]
        return RowDelta(sorted(nodes), rows, sorted(triples), edges,
                        [self._signal(e) for e in sorted(signals, key=self.pos.__getitem__)])

    def rows(self) -> tuple[list[dict], list[dict], list[dict]]:
        """Every node, edge and event signal row of the graph as it stands."""
        keys = [*self.entities, *(fp.id for e in self.order for fp in self.fps.get(e, ())), *self.facets,
                *self.episodes]
        nodes = [r for r in (self._node(k) for k in keys) if r is not None]
        edges = [edge_row(e) for t in (*self.owned, *self.temporal, *self.evolution.edges) for e in self._group(t)]
        return nodes, edges, [self._signal(e) for e in self.order]

    def stats(self) -> dict:
        t, rel = self.time_total, self.time_total["relative"]
        return {
            "events": len(self.order), "episodes": len(self.episodes), "entities": len(self.entities),
            "entities_by_kind": dict(Counter(e.kind for e in self.entities.values())),
            "facet_points": self.fp_count, "facets": len(self.facets),
            "edges": {k: self.edge_count.get(k, 0) for k in EDGE_TYPES},
            "time": {"mentions": t["mentions"], "relative": rel, "relative_resolved": t["relative_resolved"],
                     "relative_resolved_share": round(t["relative_resolved"] / rel, 4) if rel else 0.0,
                     "absolute": t["absolute"], "absolute_resolved": t["absolute_resolved"]},
        }
