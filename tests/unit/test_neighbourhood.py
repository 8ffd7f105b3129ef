"""The graph neighbourhood's policy (pure): which nodes a breadth-first hop keeps when there is no
room for all, the names a question is looked up by, and the query's retrievers as `Retriever`s."""
from __future__ import annotations

from app.domain.retrieval.neighbourhood import Neighbourhood, edge_cap, name_candidates, seed_names


def edge(src: str, dst: str, type_: str = "belongs_to", src_ev: int | None = None, dst_ev: int | None = None) -> dict:
    return {"src": src, "dst": dst, "type": type_, "weight": 1.0, "src_event_pk": src_ev, "dst_event_pk": dst_ev}


def node(key: str, event_pk: int | None = None) -> dict:
    return {"key": key, "kind": "facet_point" if event_pk else "entity", "label": key, "event_pk": event_pk, "data": {}}


def test_a_full_hop_keeps_the_nodes_reaching_preferred_events_first():
    walk = Neighbourhood("v1", [node("en:ana")], limit=3, prefer_events={7})
    edges = [edge("en:ana", "fp:a", src_ev=None, dst_ev=1), edge("en:ana", "fp:b", src_ev=None, dst_ev=7),
             edge("en:ana", "fp:c", "temporal", dst_ev=2)]
    wanted = walk.take_edges(edges)
    assert wanted == ["fp:b", "fp:a"]  # the preferred event's node, then by type and name; room for two
    walk.add_nodes([node("fp:b", 7), node("fp:a", 1)])
    view = walk.result()
    assert view.truncated and view.seeds == ["en:ana"]
    assert [n["key"] for n in view.nodes] == ["en:ana", "fp:b", "fp:a"]
    assert {(e["src"], e["dst"]) for e in view.edges} == {("en:ana", "fp:a"), ("en:ana", "fp:b")}  # fp:c left out
    assert not walk.wants_hop()  # full


def test_without_a_preference_hierarchy_edges_come_before_relations():
    walk = Neighbourhood("v1", [node("en:ana")], limit=2)
    assert walk.take_edges([edge("en:ana", "fp:a", "temporal"), edge("en:ana", "fp:z", "belongs_to")]) == ["fp:z"]


def test_a_node_the_graph_lacks_is_not_kept():
    walk = Neighbourhood("v1", [node("en:ana")], limit=10)
    assert walk.take_edges([edge("en:ana", "fp:gone")]) == ["fp:gone"]
    walk.add_nodes([])  # the read found nothing for it
    assert walk.frontier == [] and walk.result().edges == []


def test_edge_cap_and_names():
    assert edge_cap(400, light=True) == 800 and edge_cap(4, light=False) == 200
    assert "new york" in name_candidates("Did Ana visit New York?")
    assert seed_names(["Ana", " ", "ANA"]) == ["ana"]


def test_every_retriever_is_a_port_retriever():
    from app.ports import Retriever
    from app.services.retrievers import RETRIEVERS

    assert all(isinstance(r, Retriever) for r in RETRIEVERS)
    assert [r.name for r in RETRIEVERS] == ["lexical", "dense", "derived", "findable", "expansion", "separation",
                                            "graph", "temporal"]
