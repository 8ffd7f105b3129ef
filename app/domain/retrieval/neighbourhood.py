"""The graph around a question, and the graph signal over it (pure: the reads are the caller's).

A neighbourhood grows breadth first from seed nodes (the entities a question names), hop by hop:
the caller reads each hop's edges and their far ends (`app.storage.graph.hop`) and hands them to
`Neighbourhood`, which decides what is kept. The policy: at most `limit` nodes; a hop's
edges sorted so that those reaching the events other signals found come first, then by type
(hierarchy before relations), then by name, so a speaker's entity, which touches most of a
conversation, keeps the neighbours that matter to this question rather than whichever sort first.

`graph_hits` turns a neighbourhood into the query's graph signal: Personalized PageRank from the
seeds (HippoRAG / Cortex phase 2), fused (RRF) with PRISM's typed-path bundle search from anchors.
"""
from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.domain.layers.text import norm_name
from app.domain.retrieval.bundle import GraphSignal, bundle_search
from app.domain.retrieval.fusion import first_occurrences
from app.domain.retrieval.graph import GEdge, TypedGraph, ppr_events

EDGE_ORDER = {"belongs_to": 0, "involves_entity": 1, "evolution": 2, "causal": 3, "temporal": 4}

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’&\.\-]*")


@dataclass
class GraphView:
    layer_version: str | None
    seeds: list[str]
    nodes: list[dict]  # {key, kind, label, event_pk, data}
    edges: list[dict]  # {src, dst, type, weight, src_event_pk, dst_event_pk[, meta]}
    truncated: bool = False
    stats: dict[str, Any] = field(default_factory=dict)


def name_candidates(query: str, max_n: int = 3) -> list[str]:
    """Every 1- to 3-word phrase of the text, normalised like entity names (for an index lookup)."""
    toks = _WORD.findall(query)
    out: set[str] = set()
    for n in range(1, max_n + 1):
        for i in range(len(toks) - n + 1):
            key = norm_name(" ".join(toks[i : i + n]))
            if key and len(key) > 1:
                out.add(key)
    return sorted(out)


def seed_names(text_or_names: str | Sequence[str]) -> list[str]:
    """The names to look entities up by: every phrase of a text (`name_candidates`), or the given
    names normalised."""
    if isinstance(text_or_names, str):
        return name_candidates(text_or_names)
    return sorted({norm_name(n) for n in text_or_names if norm_name(n)})


def edge_rank(preferred: Collection[int]):  # noqa: ANN201
    """Sort key for a hop's edges: those reaching a preferred event first, then by type, then by name
    (deterministic). A few thousand edges per query, so no helper calls inside the key."""
    order = EDGE_ORDER
    if not preferred:
        return lambda e: (order.get(e["type"], 9), e["src"], e["dst"])
    return lambda e: (e["src_event_pk"] not in preferred and e["dst_event_pk"] not in preferred,
                      order.get(e["type"], 9), e["src"], e["dst"])


def edge_cap(limit: int, light: bool) -> int:
    """Edges read per hop and direction: `2 * limit` on the query path (`light`), else at least 200."""
    return 2 * limit if light else max(200, 20 * limit)


class Neighbourhood:
    """One breadth-first growth from `seeds` (node dicts), at most `limit` nodes."""

    def __init__(self, layer_version: str | None, seeds: list[dict], limit: int,
                 prefer_events: Collection[int] = ()) -> None:
        self.limit = max(1, limit)
        self.view = GraphView(layer_version, [], [], [])
        self.nodes: dict[str, dict] = {s["key"]: s for s in seeds[: self.limit]}
        self.view.seeds = list(self.nodes)
        self.frontier = list(self.nodes)
        self.edges: dict[tuple[str, str, str], dict] = {}
        self._rank = edge_rank(set(prefer_events))

    def wants_hop(self) -> bool:
        return bool(self.frontier) and len(self.nodes) < self.limit

    def take_edges(self, found: list[dict]) -> list[str]:
        """One hop's edges (those touching the frontier): kept, best-sorted first; returns the keys of
        the nodes they lead to that fit (`add_nodes` takes those nodes once read)."""
        found.sort(key=self._rank)
        wanted: dict[str, None] = {}  # insertion-ordered set: the best-sorted edges' nodes first
        for e in found:
            self.edges.setdefault((e["src"], e["dst"], e["type"]), e)
            for k in (e["src"], e["dst"]):
                if k not in self.nodes:
                    wanted[k] = None
        room = self.limit - len(self.nodes)
        if len(wanted) > room:
            self.view.truncated = True
        return list(wanted)[:room]

    def add_nodes(self, new: list[dict]) -> None:
        """The nodes `take_edges` asked for (those the graph has, in its order): the next frontier."""
        for n in new:
            self.nodes[n["key"]] = n
        self.frontier = [n["key"] for n in new]

    def result(self) -> GraphView:
        self.view.nodes = list(self.nodes.values())
        keep = set(self.nodes)
        self.view.edges = [e for e in self.edges.values() if e["src"] in keep and e["dst"] in keep]
        return self.view


def seed_weight(node: dict) -> float:
    """Restart mass of a seed entity, by how specific it is: an entity named in three turns says more
    about which turns matter than a speaker named in three hundred (1 / log2(2 + mentions))."""
    mentions = (node.get("data") or {}).get("mentions")
    return 1.0 / math.log2(2.0 + float(mentions)) if isinstance(mentions, (int, float)) and mentions > 0 else 1.0


def graph_hits(view: GraphView, limit: int, anchors: Mapping[int, float] | None = None,
               intent: str | None = None) -> list[tuple[int, float]]:
    """The graph's ranked events over a neighbourhood: PPR from its seeds, fused (RRF) with PRISM's
    bundle search from `anchors` (event -> dense cosine) when given. Best first, each event once."""
    if not view.seeds or not view.nodes:
        return []
    layer = {n["key"]: ("event" if n.get("event_pk") else n["kind"]) for n in view.nodes}
    event_of = {n["key"]: n["event_pk"] for n in view.nodes if n.get("event_pk")}
    edges = [GEdge(e["src"], e["dst"], e["type"], float(e.get("weight") or 1.0))
             for e in view.edges if e["src"] in layer and e["dst"] in layer]
    graph = TypedGraph(layer, edges, event_of=event_of)
    named = set(view.seeds)
    seeds = {n["key"]: seed_weight(n) for n in view.nodes if n["key"] in named}
    found_by = GraphSignal(ppr=ppr_events(graph, seeds, top_k=limit * 4, explain=0))
    if anchors:
        # PRISM eqs. 2-5: from the events dense retrieval found (anchor cost 1 - cos), the backbone
        # and one typed relation (temporal / causal / evolution) further, edge costs by intent.
        # The anchors themselves are the dense list again; what the search adds is the bridges.
        nodes = {key: anchors[pk] for key, pk in event_of.items() if pk in anchors}
        found_by.bundle = [h for h in (bundle_search(graph, nodes, intent, top_k=limit * 4) if nodes else [])
                           if h.template.startswith("bridge")]
    ranked = found_by.ranking()
    # several nodes (an event and its facet points) can stand for one event: keep its best
    hits = first_occurrences([(int(pk), 1.0 / (1 + i)) for i, pk in enumerate(ranked) if isinstance(pk, int)])
    return hits[:limit]
