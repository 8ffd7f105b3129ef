"""The graph model of the query side and its walk-based signals (pure: plain data in, ranked events out).

`TypedGraph` holds nodes (id -> layer: entity | facet_point | facet | episode | event) and typed
edges (src, dst, type), as the graph layer stores them: belongs_to Entity → FacetPoint → Facet →
Episode, involves_entity FacetPoint → Entity, relations between facet points, and (added by
`TypedGraph.from_fragment`) FacetPoint → event belongs_to edges to the verbatim events.

The signals here return `GraphHit(event_id, score, path)` best first:

* **Personalized PageRank** (HippoRAG; Cortex §5.3.2 phase 2) seeded from the entities the query
  names: random walks restart at the seeds with probability 1 − d (d = 0.5, HippoRAG's damping), so
  mass concentrates on events around those entities and on events that bridge several of them.
* `spreading_activation` is the cheaper Collins & Loftus alternative Cortex also uses (γ = 0.65,
  depth ≤ 3, ≤ 50 nodes, threshold 0.1).

PRISM's typed-path bundle search over the same graph is `app.domain.retrieval.bundle`.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

HIERARCHY = frozenset({"belongs_to", "involves_entity"})
RELATIONS = frozenset({"temporal", "causal", "evolution", "semantic"})
LAYERS = ("entity", "facet_point", "facet", "episode", "event")

# PPR transition weights per edge type (engineering defaults: hierarchy carries most of the mass)
PPR_TYPE_WEIGHTS = {"belongs_to": 1.0, "involves_entity": 1.0, "temporal": 0.5, "causal": 0.7,
                    "evolution": 0.7, "semantic": 0.3}


class GEdge(NamedTuple):
    """A typed edge. A named tuple, not a dataclass: the query path builds a few thousand per query."""

    src: str
    dst: str
    type: str
    weight: float = 1.0


@dataclass
class GraphHit:
    event_id: Hashable
    score: float  # higher is better (PPR mass; for bundle search 1 / (1 + cost))
    cost: float | None = None  # bundle search: the minimum path cost (eq. 3)
    path: tuple[str, ...] = ()  # human-readable steps: "node -type-> node ..."
    template: str = ""  # "ppr", "backbone", "bridge:causal", ...

    def explain(self) -> dict[str, Any]:
        d: dict[str, Any] = {"score": round(self.score, 6), "template": self.template, "path": list(self.path)}
        if self.cost is not None:
            d["cost"] = round(self.cost, 4)
        return d


class TypedGraph:
    """Nodes with layers and typed edges, indexed for traversal. `event_of` maps event nodes to the
    id the rest of the pipeline knows (default: the node id itself)."""

    def __init__(self, nodes: Mapping[str, str], edges: Iterable[GEdge | tuple],
                 event_of: Mapping[str, Hashable] | None = None, labels: Mapping[str, str] | None = None):
        self.layer: dict[str, str] = dict(nodes)
        self.edges: list[GEdge] = [e if type(e) is GEdge else GEdge(*e) for e in edges]
        for e in self.edges:
            for n in (e.src, e.dst):
                if n not in self.layer:
                    raise ValueError(f"edge {e} names an unknown node {n!r}")
        self.event_of: dict[str, Hashable] = {n: (event_of or {}).get(n, n) for n, l in self.layer.items()
                                              if l == "event"}
        self.labels = dict(labels or {})
        self.nodes: list[str] = list(self.layer)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.nodes)}
        self._undirected: dict[tuple, dict[str, dict[str, float]]] = {}
        self._ppr: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._agg: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._moves: dict[str, list[tuple[GEdge, str, bool]]] | None = None
        self.out: dict[str, list[GEdge]] = defaultdict(list)
        self.inc: dict[str, list[GEdge]] = defaultdict(list)
        for e in self.edges:
            self.out[e.src].append(e)
            self.inc[e.dst].append(e)

    def undirected(self, type_weights: Mapping[str, float]) -> dict[str, dict[str, float]]:
        """Neighbour weights with edges taken both ways; parallel edges (Entity → FP belongs_to and
        FP → Entity involves_entity) count once, at their largest weight. Cached per weight table."""
        key = tuple(sorted(type_weights.items()))
        cached = self._undirected.get(key)
        if cached is None:
            cached = self._undirected[key] = self._build_undirected(type_weights)
        return cached

    def ppr_arrays(self, type_weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, normalised weight, dangling mask) over node indices in `self.nodes`, cached."""
        key = tuple(sorted(type_weights.items()))
        cached = self._ppr.get(key)
        if cached is None:
            idx = self.index
            adj = self.undirected(type_weights)
            src = np.fromiter((idx[a] for a, nb in adj.items() for _ in nb), dtype=np.int64)
            dst = np.fromiter((idx[b] for nb in adj.values() for b in nb), dtype=np.int64)
            w = np.fromiter((x for nb in adj.values() for x in nb.values()), dtype=np.float64)
            n = len(self.nodes)
            deg = np.bincount(src, weights=w, minlength=n) if len(src) else np.zeros(n)
            norm = w / deg[src] if len(src) else w
            cached = self._ppr[key] = (src, dst, norm, deg == 0)
        return cached

    def moves(self, node: str) -> list[tuple[GEdge, str, bool]]:
        """Bundle-search moves from `node`: hierarchy and relation edges forward, relations backward."""
        if self._moves is None:
            mv: dict[str, list[tuple[GEdge, str, bool]]] = defaultdict(list)
            for e in self.edges:
                if e.type in HIERARCHY or e.type in RELATIONS:
                    mv[e.src].append((e, e.dst, True))
                if e.type in RELATIONS:
                    mv[e.dst].append((e, e.src, False))
            self._moves = dict(mv)
        return self._moves.get(node, [])

    def event_agg(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(from node, to event node, share) index arrays: events keep their own mass, facet points
        pass theirs to their events (split evenly). Cached."""
        if self._agg is None:
            src, dst, share = [], [], []
            for n, layer in self.layer.items():
                if layer == "event":
                    src.append(self.index[n]); dst.append(self.index[n]); share.append(1.0)  # noqa: E702
                elif layer == "facet_point":
                    evs = [e.dst for e in self.out.get(n, ()) if self.layer.get(e.dst) == "event"]
                    for ev in evs:
                        src.append(self.index[n]); dst.append(self.index[ev]); share.append(1.0 / len(evs))  # noqa: E702
            self._agg = (np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), np.asarray(share))
        return self._agg

    def _build_undirected(self, type_weights: Mapping[str, float]) -> dict[str, dict[str, float]]:
        adj: dict[str, dict[str, float]] = defaultdict(dict)
        for e in self.edges:
            w = type_weights.get(e.type, 0.0) * e.weight
            if w <= 0 or e.src == e.dst:
                continue
            if w > adj[e.src].get(e.dst, 0.0):
                adj[e.src][e.dst] = w
                adj[e.dst][e.src] = w
        return adj

    def label(self, node: str) -> str:
        return self.labels.get(node, node)

    @classmethod
    def from_fragment(cls, fragment: Any, event_node=lambda eid: f"ev:{eid}") -> "TypedGraph":
        """Adapter for the graph layer's `GraphFragment` (duck-typed: entities, facet_points, facets,
        episodes, edges with src/dst/type/weight). Adds one event node per facet point's event and a
        FacetPoint → event belongs_to edge; `event_of` maps those nodes back to the event ids."""
        nodes: dict[str, str] = {}
        labels: dict[str, str] = {}
        edges: list[GEdge] = []
        event_of: dict[str, Hashable] = {}
        for en in getattr(fragment, "entities", []):
            nodes[en.id] = "entity"
            labels[en.id] = getattr(en, "name", en.id)
        for fc in getattr(fragment, "facets", []):
            nodes[fc.id] = "facet"
        for ep in getattr(fragment, "episodes", []):
            nodes[ep.id] = "episode"
        for fp in getattr(fragment, "facet_points", []):
            nodes[fp.id] = "facet_point"
            ev = event_node(fp.event_id)
            nodes.setdefault(ev, "event")
            event_of[ev] = fp.event_id
            edges.append(GEdge(fp.id, ev, "belongs_to"))
        for e in getattr(fragment, "edges", []):
            if e.src in nodes and e.dst in nodes:
                edges.append(GEdge(e.src, e.dst, e.type, float(getattr(e, "weight", 1.0) or 1.0)))
        return cls(nodes, edges, event_of, labels)


# ------------------------------------------------------------------ entity seeds


def match_entities(query: str, names: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Entity nodes named in `query`: {node: weight}, by case-insensitive whole-word match of a name
    or alias (possessive "Ana's" counts). Longer names win over their substrings ("New York" over "York")."""
    low = query.lower()
    hits: dict[str, float] = {}
    spans: list[tuple[int, int]] = []
    cands = sorted(((alias, node) for node, aliases in names.items() for alias in aliases if alias and alias.strip()),
                   key=lambda x: -len(x[0]))
    for alias, node in cands:
        for m in re.finditer(rf"(?<![\w]){re.escape(alias.lower())}(?:'s|s'|s)?(?![\w])", low):
            s, e = m.span()
            if any(s < te and ts < e for ts, te in spans):
                continue
            spans.append((s, e))
            hits[node] = hits.get(node, 0.0) + 1.0
    return hits


# ------------------------------------------------------------------ Personalized PageRank


def personalized_pagerank(graph: TypedGraph, seeds: Mapping[str, float], *, damping: float = 0.5,
                          max_iter: int = 100, tol: float = 1e-8,
                          type_weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """PPR over the graph taken as undirected, weighted by edge type × edge weight.

    r = (1 − d)·s + d·(Pᵀ r), s the normalised seed vector; dangling mass returns to the seeds.
    Returns {node: mass} (sums to 1). Unknown seeds are ignored; no known seed -> {}.
    """
    r = _ppr_vector(graph, seeds, damping=damping, max_iter=max_iter, tol=tol, type_weights=type_weights)
    if r is None:
        return {}
    return {graph.nodes[i]: float(r[i]) for i in np.nonzero(r)[0]}


def _ppr_vector(graph: TypedGraph, seeds: Mapping[str, float], *, damping: float = 0.5, max_iter: int = 100,
                tol: float = 1e-8, type_weights: Mapping[str, float] | None = None) -> np.ndarray | None:
    if not 0.0 <= damping < 1.0:
        raise ValueError("damping must be in [0, 1)")
    nodes, idx = graph.nodes, graph.index
    s = np.zeros(len(nodes))
    for n, w in seeds.items():
        if n in idx and w > 0:
            s[idx[n]] += float(w)
    if s.sum() <= 0:
        return None
    s /= s.sum()
    src_a, dst_a, norm, dangling = graph.ppr_arrays(PPR_TYPE_WEIGHTS if type_weights is None else type_weights)
    n = len(nodes)
    r = s.copy()
    for _ in range(max_iter):
        spread = np.bincount(dst_a, weights=r[src_a] * norm, minlength=n) if len(src_a) else np.zeros(n)
        new = (1.0 - damping) * s + damping * (spread + r[dangling].sum() * s)
        if np.abs(new - r).sum() < tol:
            r = new
            break
        r = new
    return r


def _event_scores(graph: TypedGraph, mass: Mapping[str, float]) -> dict[str, float]:
    """Mass per event node: its own plus its facet points' (each facet point's mass split over its events)."""
    src, dst, share = graph.event_agg()
    vec = np.zeros(len(graph.nodes))
    for node, m in mass.items():
        vec[graph.index[node]] = m
    return _event_scores_vec(graph, vec, src, dst, share)


def _event_scores_vec(graph: TypedGraph, vec: np.ndarray, src: np.ndarray, dst: np.ndarray,
                      share: np.ndarray) -> dict[str, float]:
    ev = np.bincount(dst, weights=vec[src] * share, minlength=len(graph.nodes))
    return {graph.nodes[i]: float(ev[i]) for i in np.nonzero(ev)[0]}


class _VecMass:
    """Read-only {node: mass} view over the PPR vector (no dict built)."""

    def __init__(self, graph: TypedGraph, vec: np.ndarray):
        self._idx, self._vec = graph.index, vec

    def get(self, node: str, default: float = 0.0) -> float:
        i = self._idx.get(node)
        return float(self._vec[i]) if i is not None else default


def _ascent_path(graph: TypedGraph, adj: Mapping[str, Mapping[str, float]], mass: Any,
                 seeds: set[str], start: str, max_steps: int = 6) -> tuple[str, ...]:
    """The walk's main route to `start`: from the event, step to the neighbour holding the most PPR
    mass until a seed is reached (read back as seed -> ... -> event). Empty when no seed is reached."""
    route = [start]
    seen = {start}
    cur = start
    for _ in range(max_steps):
        if cur in seeds:
            break
        nbrs = [(mass.get(v, 0.0) + (1.0 if v in seeds else 0.0), v) for v in adj.get(cur, {}) if v not in seen]
        if not nbrs:
            return ()
        cur = max(nbrs)[1]
        seen.add(cur)
        route.append(cur)
    if cur not in seeds:
        return ()
    steps: list[str] = [graph.label(route[-1])]
    for a, b in zip(reversed(route[1:]), reversed(route[:-1])):
        t = next((e.type for e in graph.out.get(a, ()) if e.dst == b), None)
        steps += [f"-{t}->" if t else f"<-{next((e.type for e in graph.out.get(b, ()) if e.dst == a), '?')}-",
                  graph.label(b)]
    return tuple(steps)


def ppr_events(graph: TypedGraph, seeds: Mapping[str, float], *, top_k: int = 50, damping: float = 0.5,
               type_weights: Mapping[str, float] | None = None, explain: int = 10) -> list[GraphHit]:
    """Events ranked by PPR mass from the seed entities; the first `explain` carry a seed-to-event path."""
    tw = PPR_TYPE_WEIGHTS if type_weights is None else type_weights
    vec = _ppr_vector(graph, seeds, damping=damping, type_weights=tw)
    if vec is None:
        return []
    ev = _event_scores_vec(graph, vec, *graph.event_agg())
    mass = _VecMass(graph, vec)
    ranked = sorted(ev.items(), key=lambda kv: (-kv[1], str(kv[0])))[:top_k]
    seed_nodes = {s for s in seeds if s in graph.layer}
    adj = graph.undirected(tw)
    out = []
    for i, (node, score) in enumerate(ranked):
        path = _ascent_path(graph, adj, mass, seed_nodes, node) if i < explain else ()
        out.append(GraphHit(graph.event_of.get(node, node), score, None, path, "ppr"))
    return out


def spreading_activation(graph: TypedGraph, seeds: Mapping[str, float], *, gamma: float = 0.65,
                         max_depth: int = 3, max_nodes: int = 50, threshold: float = 0.1,
                         type_weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Collins & Loftus spreading activation as Cortex §4.3.1 runs it: BFS from the seeds,
    a_j = Σ_i a_i · w_ij · γ per hop (convergent summation), depth ≤ 3, keep ≥ threshold, ≤ max_nodes."""
    adj = graph.undirected(PPR_TYPE_WEIGHTS if type_weights is None else type_weights)
    act: dict[str, float] = {n: float(w) for n, w in seeds.items() if n in graph.layer and w > 0}
    if not act:
        return {}
    top = max(act.values())
    act = {n: a / top for n, a in act.items()}  # seeds at ≤ 1
    frontier = dict(act)
    for _ in range(max_depth):
        nxt: dict[str, float] = defaultdict(float)
        for u, a in frontier.items():
            for v, w in adj.get(u, {}).items():
                if v not in act:
                    nxt[v] += a * w * gamma
        frontier = {v: a for v, a in nxt.items() if a >= threshold}
        if not frontier:
            break
        act.update(frontier)
        if len(act) >= max_nodes:
            break
    ranked = sorted(act.items(), key=lambda kv: -kv[1])[:max_nodes]
    return dict(ranked)


def activation_events(graph: TypedGraph, seeds: Mapping[str, float], **kw: Any) -> list[GraphHit]:
    act = spreading_activation(graph, seeds, **kw)
    ev = _event_scores(graph, act)
    return [GraphHit(graph.event_of.get(n, n), s, None, (), "activation")
            for n, s in sorted(ev.items(), key=lambda kv: (-kv[1], str(kv[0])))]
