"""PRISM's typed-path bundle search (N1 + N2, eqs. 2–5, App. C.2) over a `TypedGraph`, and the
graph signal that fuses it with Personalized PageRank (pure).

From query anchors (nodes the vector search recalled, anchor cost d(a) = 1 − cos), enumerate the
path templates — the backbone (hierarchy edges only: En → FP → Fc → Ep, FP → Fc → Ep, Fc → Ep, Ep,
and here FP → event) and the relation bridge (exactly one temporal / causal / evolution / semantic
edge, then back into the hierarchy) — cost each path as d(a) + Σ (c_edge + c_hop), with
intent-conditioned edge costs c_edge = α(τ, h(q)) · (1 − cos(e, q) for edges incident to an anchor
whose similarity is known, else c0(τ)), α = 0.5 for temporal edges under a temporal intent and
causal edges under a causal one, 0.7 for evolution edges under a temporal intent (and, our
extension, 0.5 under knowledge_update), 1 otherwise; each event's score is its minimum path cost (eq. 3).
"""
from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from app.domain.retrieval.graph import RELATIONS, GEdge, GraphHit, TypedGraph

# PRISM Table 5
C_HOP = 0.05
C0 = {"belongs_to": 0.02, "involves_entity": 0.02, "semantic": 0.90, "temporal": 0.90, "causal": 0.90,
      "evolution": 0.90}


def edge_discount(edge_type: str, intents: Iterable[str] | str | None) -> float:
    """α(τ, h(q)) of PRISM eq. 5 (plus evolution under knowledge_update, our extension)."""
    h = {intents} if isinstance(intents, str) else set(intents or ())
    if edge_type == "temporal" and "temporal" in h:
        return 0.5
    if edge_type == "causal" and "causal" in h:
        return 0.5
    if edge_type == "evolution" and "knowledge_update" in h:
        return 0.5
    if edge_type == "evolution" and "temporal" in h:
        return 0.7
    return 1.0


def edge_cost(edge: GEdge, intents: Iterable[str] | str | None, *, sim: float | None = None,
              c0: Mapping[str, float] = C0) -> float:
    """c_edge of eq. 4: α · (1 − cos(e, q)) when the edge's similarity is known (in recall), else α · c0(τ)."""
    base = (1.0 - sim) if sim is not None else c0.get(edge.type, 0.9)
    return edge_discount(edge.type, intents) * max(0.0, base)


def bundle_search(graph: TypedGraph, anchors: Mapping[str, float], intents: Iterable[str] | str | None, *,
                  edge_sims: Mapping[tuple[str, str, str], float] | None = None, top_k: int = 10,
                  c_hop: float = C_HOP, c0: Mapping[str, float] = C0, max_hops: int = 5,
                  max_relations: int = 1, targets: Iterable[str] = ("event",)) -> list[GraphHit]:
    """PRISM hierarchical bundle search: events by minimum typed-path cost from the anchors.

    `anchors`: {node: cosine with the query} (anchor cost 1 − cos). `intents`: the intent label(s)
    h(q). `edge_sims`: {(src, dst, type): cos(edge embedding, query)} for edges the recall touched;
    used only for edges incident to an anchor (eq. 4's R_FAISS). Hierarchy edges are followed in
    their stored direction (upward, and FacetPoint → event); relation edges either way, at most
    `max_relations` per path. Returns the `top_k` target nodes by ascending cost.
    """
    target_layers = set(targets)
    sims = edge_sims or {}
    anchor_set = set(anchors)
    # state: (cost, tiebreak, node, relations used); best cost per (node, relations used)
    best: dict[tuple[str, int], float] = {}
    back: dict[tuple[str, int], tuple[tuple[str, int] | None, str]] = {}
    heap: list[tuple[float, int, str, int, int]] = []
    tick = 0
    for a, cos in anchors.items():
        if a not in graph.layer:
            continue
        cost = max(0.0, 1.0 - float(cos))
        if cost < best.get((a, 0), float("inf")):
            best[(a, 0)] = cost
            back[(a, 0)] = (None, "anchor")
            heapq.heappush(heap, (cost, tick, a, 0, 0))
            tick += 1
    done: dict[str, tuple[float, tuple[str, int]]] = {}
    while heap:
        cost, _, u, rel, hops = heapq.heappop(heap)
        if cost > best.get((u, rel), float("inf")) + 1e-12:
            continue
        if graph.layer[u] in target_layers and u not in done:
            done[u] = (cost, (u, rel))
            if len(done) >= top_k:
                break  # Dijkstra pops in cost order: these are the top_k
        if hops >= max_hops:
            continue
        for e, v, fwd in graph.moves(u):
            is_rel = e.type in RELATIONS
            if is_rel and rel >= max_relations:
                continue
            if e.type == "involves_entity" and hops > 0:
                continue  # the FP -> Entity shortcut only starts a path (En -> FP is belongs_to)
            if graph.layer.get(u) == "event" and not is_rel:
                continue  # an event is the end of the hierarchy
            sim = sims.get((e.src, e.dst, e.type)) if (e.src in anchor_set or e.dst in anchor_set) else None
            step = edge_cost(e, intents, sim=sim, c0=c0) + c_hop
            nrel = rel + (1 if is_rel else 0)
            nc = cost + step
            if nc < best.get((v, nrel), float("inf")) - 1e-12:
                best[(v, nrel)] = nc
                back[(v, nrel)] = ((u, rel), f"-{e.type}->" if fwd else f"<-{e.type}-")
                heapq.heappush(heap, (nc, tick, v, nrel, hops + 1))
                tick += 1
    ranked = sorted(done.items(), key=lambda kv: (kv[1][0], str(kv[0])))[:top_k]
    out: list[GraphHit] = []
    for node, (cost, state) in ranked:
        steps: list[str] = []
        rel_types: list[str] = []
        cur: tuple[str, int] | None = state
        while cur is not None:
            prev, how = back[cur]
            steps.append(graph.label(cur[0]))
            if prev is not None:
                steps.append(how)
                t = how.strip("-<>")
                if t in RELATIONS:
                    rel_types.append(t)
            cur = prev
        template = "bridge:" + "+".join(rel_types) if rel_types else "backbone"
        out.append(GraphHit(graph.event_of.get(node, node), 1.0 / (1.0 + cost), cost, tuple(reversed(steps)),
                            template))
    return out


@dataclass
class GraphSignal:
    """Both graph signals for one query, as ranked event ids (for weighted RRF) with explanations."""

    ppr: list[GraphHit] = field(default_factory=list)
    bundle: list[GraphHit] = field(default_factory=list)

    def ranking(self, k: int = 60) -> list[Hashable]:
        """One ranked list for the "graph" weight of the intent profile: RRF (k = 60) of the two."""
        fused: dict[Hashable, float] = defaultdict(float)
        first: dict[Hashable, int] = {}
        for hits in (self.bundle, self.ppr):
            for r, h in enumerate(hits, start=1):
                fused[h.event_id] += 1.0 / (k + r)
                first.setdefault(h.event_id, len(first))
        return sorted(fused, key=lambda e: (-fused[e], first[e]))
