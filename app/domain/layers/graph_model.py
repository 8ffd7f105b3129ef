"""The memory graph of PRISM §3.2 and Appendix C.1, as plain data, and its assembly from facts.

Four node layers: Entity (an anchor: person, place, organisation, event, animal, concept, thing), FacetPoint (one atomic
fact from one event), Facet (facet points of one episode grouped by entity and topic), Episode (from
consolidation). Edges:

* belongs_to: Entity -> FacetPoint -> Facet -> Episode (PRISM writes the hierarchy in this direction);
* involves_entity: FacetPoint -> Entity (the shortcut edge);
* temporal: consecutive facet points of the same entity, ordered by their resolved date (or the event
  time when they carry none);
* evolution: a later assertion on the same (entity, attribute) following an earlier one; `changed`
  says whether the value changed (an update) or was restated;
* causal: cue words ("because", "so", "that's why", "led to", "after ..., ...") between two clauses
  or between a sentence and the one before it.

Entities are merged by exact normalised name, then by cosine >= 0.90 between name embeddings
(App. C.1's merge rule), and a speaker absorbs short forms of their first name ("Sam" -> Samantha):
`graph_entities`.
Any extractor (rules or LLM) produces `RawFact`s; `assemble` turns them into a `GraphFragment`.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

from app.domain.layers.assertions import Assertion, extract_all
from app.domain.layers.consolidation import Episode, build_timeline
from app.domain.layers.events import LayerEvent
from app.domain.layers.graph_entities import Encode, Entity, merge_entities
from app.domain.layers.text import norm_name
from app.domain.layers.timeparse import TimeMention
from app.domain.layers.timeturns import resolution_stats

# 2: facet ids no longer collide with an entity named "none"; 3: episodes/2; 4: the extractor is a fold
# (app.domain.layers.graph_fold), an entity's id is its first-named member's; 5: an event's signal row keeps its
# whole turn's time mentions (the fold's `DateThread`), which a query's context shows without reading the turn
LAYER_VERSION = "graph/5"
EDGE_TYPES = ("belongs_to", "involves_entity", "temporal", "evolution", "causal")


@dataclass(frozen=True, slots=True)
class FacetPoint:
    id: str
    event_id: str
    episode_id: str | None
    facet_id: str
    speaker: str
    text: str
    topic: str
    entity_ids: tuple[str, ...]
    occurred_at: str  # event time, ISO
    dates: tuple[TimeMention, ...]  # resolved time expressions: ISO dates + surface text

    @property
    def reference_date(self) -> str:
        """The date the fact is about: its first resolved date, else the day it was said."""
        for m in self.dates:
            if m.resolved and m.date:
                return m.date
        return self.occurred_at[:10]


@dataclass(frozen=True)
class Facet:
    id: str
    episode_id: str | None
    entity_id: str | None
    topic: str
    label: str
    facet_point_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    type: str
    weight: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class GraphFragment:
    conversation_id: str
    entities: list[Entity]
    facet_points: list[FacetPoint]
    facets: list[Facet]
    episodes: list[Episode]
    edges: list[Edge]
    extractor: str = "rules"
    stats: dict[str, Any] = field(default_factory=dict)
    layer_version: str = LAYER_VERSION

    def to_networkx(self):  # pragma: no cover - convenience for analysis
        import networkx as nx

        g = nx.MultiDiGraph()
        for e in self.entities:
            g.add_node(e.id, layer="entity", name=e.name, kind=e.kind)
        for fp in self.facet_points:
            g.add_node(fp.id, layer="facet_point", text=fp.text)
        for fc in self.facets:
            g.add_node(fc.id, layer="facet", label=fc.label)
        for ep in self.episodes:
            g.add_node(ep.id, layer="episode", summary=ep.summary)
        for ed in self.edges:
            g.add_edge(ed.src, ed.dst, type=ed.type, weight=ed.weight, **ed.meta)
        return g


@dataclass(slots=True)
class RawFact:
    """One atomic fact as an extractor sees it, before entities are merged and ids assigned."""

    event_id: str
    text: str
    entities: list[tuple[str, str]]  # (surface name, kind guess)
    dates: list[TimeMention]
    topic: str = "general"
    causes: list[int] = field(default_factory=list)  # indices of facts (same list) that caused this one
    cue: str | None = None  # the causal cue word, when there is one
    same_as: list[tuple[str, str]] = field(default_factory=list)  # surface pairs naming one entity ("my husband Tom")



def _assertion_facts(assertions: Sequence[Assertion], fps_by_event: dict[str, list[FacetPoint]]) -> dict[str, str]:
    """assertion id -> the facet point that states it (the one containing its words, else the first)."""
    out = {}
    for a in assertions:
        fps = fps_by_event.get(a.event_id) or []
        if not fps:
            continue
        words_ = [w for w in re.findall(r"\w+", a.value.lower()) if len(w) > 2] or [a.value.lower()]
        hit = next((fp for fp in fps if all(w in fp.text.lower() for w in words_)), fps[0])
        out[a.id] = hit.id
    return out


def assemble(
    conversation_id: str,
    events: Sequence[LayerEvent],
    facts: Sequence[RawFact],
    episodes: Sequence[Episode],
    encode: Encode | None = None,
    extractor: str = "rules",
    assertions: Sequence[Assertion] | None = None,
) -> GraphFragment:
    """Nodes, merged entities and all five edge types from raw facts."""
    ev_by_id = {e.id: e for e in events}
    ep_of_event = {eid: ep.id for ep in episodes for eid in ep.event_ids}
    speakers = list(dict.fromkeys(e.speaker for e in events if e.speaker))
    mentions = [(name, kind, f.event_id) for f in facts for name, kind in f.entities]
    key_to_id, entities = merge_entities(mentions, speakers, encode, same_as=[p for f in facts for p in f.same_as])

    # facet points, numbered per event in fact order
    per_event: Counter[str] = Counter()
    fp_ids: list[str] = []
    staged: list[tuple[RawFact, str, tuple[str, ...], str]] = []
    for f in facts:
        ev = ev_by_id.get(f.event_id)
        if ev is None:
            continue
        k = per_event[f.event_id]
        per_event[f.event_id] += 1
        fid = f"fp:{f.event_id}:{k}"
        ents = tuple(dict.fromkeys(key_to_id[norm_name(n)] for n, _ in f.entities if norm_name(n) in key_to_id))
        fp_ids.append(fid)
        staged.append((f, fid, ents, ep_of_event.get(f.event_id)))

    # facets: within an episode, by primary entity (the first non-speaker one, else the first) and topic
    speaker_ids = {key_to_id.get(norm_name(s)) for s in speakers}
    facet_members: dict[tuple[str | None, str | None, str], list[str]] = defaultdict(list)
    fp_facet: dict[str, str] = {}
    names = {e.id: e.name for e in entities}
    for f, fid, ents, ep in staged:
        primary = next((x for x in ents if x not in speaker_ids), ents[0] if ents else None)
        key = (ep, primary, f.topic)
        facet_members[key].append(fid)
    facets: list[Facet] = []
    for (ep, primary, topic), members in facet_members.items():
        # "~" marks "no episode" / "no primary entity": an entity may well be named "none".
        fc_id = f"fc:{ep or '~'}:{primary[3:] if primary else '~'}:{topic}"
        label = f"{names.get(primary, 'conversation')} · {topic}"
        facets.append(Facet(fc_id, ep, primary, topic, label, tuple(members)))
        for m in members:
            fp_facet[m] = fc_id

    facet_points: list[FacetPoint] = []
    for f, fid, ents, ep in staged:
        ev = ev_by_id[f.event_id]
        facet_points.append(
            FacetPoint(fid, f.event_id, ep, fp_facet[fid], ev.speaker, f.text, f.topic, ents,
                       ev.occurred_at.isoformat(), tuple(f.dates))
        )

    edges: list[Edge] = []
    # hierarchy
    for fp in facet_points:
        for en in fp.entity_ids:
            edges.append(Edge(en, fp.id, "belongs_to"))
            edges.append(Edge(fp.id, en, "involves_entity"))
        edges.append(Edge(fp.id, fp.facet_id, "belongs_to"))
    for fc in facets:
        if fc.episode_id:
            edges.append(Edge(fc.id, fc.episode_id, "belongs_to"))
    # temporal: per entity, consecutive facts in the order of the dates they are about
    seq = {e.id: (e.occurred_at, e.seq) for e in events}
    order = {fid: i for i, fid in enumerate(fp_ids)}
    by_entity: dict[str, list[FacetPoint]] = defaultdict(list)
    for fp in facet_points:
        for en in fp.entity_ids:
            by_entity[en].append(fp)
    for en, fps in by_entity.items():
        fps.sort(key=lambda p: (p.reference_date, seq[p.event_id], order[p.id]))
        for a, b in zip(fps, fps[1:]):
            if a.event_id != b.event_id or a.id != b.id:
                edges.append(Edge(a.id, b.id, "temporal", meta={"entity": en, "from": a.reference_date, "to": b.reference_date}))
    # evolution: consecutive assertions on the same (entity, attribute)
    asserts = list(assertions) if assertions is not None else extract_all(events)
    timeline, _ = build_timeline(asserts)
    fps_by_event: dict[str, list[FacetPoint]] = defaultdict(list)
    for fp in facet_points:
        fps_by_event[fp.event_id].append(fp)
    a2fp = _assertion_facts(timeline, fps_by_event)
    last: dict[tuple[str, str], Assertion] = {}
    for a in timeline:
        key = (a.entity_key, a.attribute)
        prev = last.get(key)
        if prev is not None and prev.id in a2fp and a.id in a2fp and a2fp[prev.id] != a2fp[a.id]:
            changed = prev.value_key != a.value_key or prev.negated != a.negated
            edges.append(Edge(a2fp[prev.id], a2fp[a.id], "evolution",
                              meta={"attribute": a.attribute, "from": prev.value, "to": a.value, "changed": changed}))
        last[key] = a
    # causal
    for f, fid, _, _ in staged:
        for c in f.causes:
            if 0 <= c < len(staged):
                edges.append(Edge(staged[c][1], fid, "causal", meta={"cue": f.cue or ""}))

    by_type = Counter(e.type for e in edges)
    stats = {
        "events": len(events),
        "episodes": len(episodes),
        "entities": len(entities),
        "entities_by_kind": dict(Counter(e.kind for e in entities)),
        "facet_points": len(facet_points),
        "facets": len(facets),
        "edges": {t: by_type.get(t, 0) for t in EDGE_TYPES},
        "time": resolution_stats(m for f in facts for m in f.dates),
    }
    return GraphFragment(conversation_id, entities, facet_points, facets, list(episodes), edges, extractor, stats)
