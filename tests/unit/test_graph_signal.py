"""Graph signals on hand-made graphs: PPR, spreading activation, PRISM bundle search with intent costs."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.retrieval.bundle import C_HOP, GraphSignal, bundle_search, edge_cost, edge_discount
from app.domain.retrieval.graph import (
    GEdge,
    TypedGraph,
    activation_events,
    match_entities,
    personalized_pagerank,
    ppr_events,
    spreading_activation,
)


def two_cluster_graph() -> TypedGraph:
    """Ana (entity) with facts in events e1, e2; Ben with e3, e4; one fact in e5 mentions both."""
    nodes = {"en:ana": "entity", "en:ben": "entity", "en:denver": "entity"}
    edges = []
    facts = {"fp1": ("e1", ["en:ana", "en:denver"]), "fp2": ("e2", ["en:ana"]), "fp3": ("e3", ["en:ben"]),
             "fp4": ("e4", ["en:ben"]), "fp5": ("e5", ["en:ana", "en:ben"])}
    for fp, (ev, ents) in facts.items():
        nodes[fp] = "facet_point"
        nodes[ev] = "event"
        edges.append(GEdge(fp, ev, "belongs_to"))
        for en in ents:
            edges.append(GEdge(en, fp, "belongs_to"))
            edges.append(GEdge(fp, en, "involves_entity"))
    return TypedGraph(nodes, edges)


def test_ppr_ranks_events_around_the_seeded_entity_first():
    g = two_cluster_graph()
    hits = ppr_events(g, {"en:ana": 1.0})
    ids = [h.event_id for h in hits]
    assert set(ids[:3]) == {"e1", "e2", "e5"}  # Ana's events
    assert ids.index("e3") > 2 and ids.index("e4") > 2
    # seeding Ben flips it
    ids_ben = [h.event_id for h in ppr_events(g, {"en:ben": 1.0})]
    assert set(ids_ben[:3]) == {"e3", "e4", "e5"}
    # the explanation walks from the seed to the event
    top = hits[0]
    assert top.path[0] == "en:ana" and top.path[-1] == top.event_id


def test_ppr_rewards_the_bridge_between_two_seeds():
    g = two_cluster_graph()
    ids = [h.event_id for h in ppr_events(g, {"en:ana": 1.0, "en:ben": 1.0})]
    assert ids[0] == "e5"  # the only event that involves both


def test_ppr_mass_sums_to_one_and_unknown_seeds_are_ignored():
    g = two_cluster_graph()
    mass = personalized_pagerank(g, {"en:ana": 1.0, "nope": 5.0})
    assert abs(sum(mass.values()) - 1.0) < 1e-6
    assert personalized_pagerank(g, {"nope": 1.0}) == {}
    with pytest.raises(ValueError):
        personalized_pagerank(g, {"en:ana": 1.0}, damping=1.0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=20),
       st.integers(0, 7), st.floats(0.1, 0.9))
def test_ppr_is_a_distribution_on_any_graph(pairs, seed, damping):
    nodes = {f"n{i}": "entity" for i in range(8)}
    g = TypedGraph(nodes, [GEdge(f"n{a}", f"n{b}", "belongs_to") for a, b in pairs])
    mass = personalized_pagerank(g, {f"n{seed}": 1.0}, damping=damping)
    assert abs(sum(mass.values()) - 1.0) < 1e-6
    assert all(v >= 0 for v in mass.values())
    assert max(mass, key=mass.get) == f"n{seed}" or damping > 0.5  # the seed keeps ≥ 1 − d


def test_spreading_activation_decays_with_distance():
    g = two_cluster_graph()
    act = spreading_activation(g, {"en:ana": 1.0}, threshold=0.0)
    assert act["en:ana"] == 1.0
    assert act["fp1"] == pytest.approx(0.65)  # one hop, weight 1, γ = 0.65
    assert act["e1"] < act["fp1"]
    ev = [h.event_id for h in activation_events(g, {"en:ana": 1.0}, threshold=0.0)]
    assert set(ev[:3]) == {"e1", "e2", "e5"}


def test_match_entities_finds_names_aliases_and_possessives():
    names = {"en:ana": ["Ana", "Ana Lopez"], "en:ny": ["New York"], "en:york": ["York"], "en:al": ["Al"]}
    hits = match_entities("Did Ana's sister move to New York?", names)
    assert set(hits) == {"en:ana", "en:ny"}  # "York" is inside "New York"; "Al" is not a word here


# ---------------------------------------------------------------- PRISM bundle search

def melanie_graph() -> TypedGraph:
    """PRISM's example: "Why did Melanie switch from clarinet to violin?" The recital fact (e_recital)
    shares no words with the question; a causal edge links it to the switch fact. A temporal edge links
    the switch to a dated fact (e_date)."""
    nodes = {
        "en:melanie": "entity",
        "fp:switch": "facet_point", "fp:recital": "facet_point", "fp:date": "facet_point",
        "fp:other": "facet_point",
        "e_switch": "event", "e_recital": "event", "e_date": "event", "e_other": "event",
    }
    edges = [
        GEdge("fp:switch", "e_switch", "belongs_to"), GEdge("fp:recital", "e_recital", "belongs_to"),
        GEdge("fp:date", "e_date", "belongs_to"), GEdge("fp:other", "e_other", "belongs_to"),
        GEdge("en:melanie", "fp:switch", "belongs_to"), GEdge("fp:switch", "en:melanie", "involves_entity"),
        GEdge("en:melanie", "fp:other", "belongs_to"),
        GEdge("fp:recital", "fp:switch", "causal"),
        GEdge("fp:switch", "fp:date", "temporal"),
    ]
    return TypedGraph(nodes, edges)


def test_edge_discounts_follow_prism_eq5():
    assert edge_discount("temporal", "temporal") == 0.5
    assert edge_discount("causal", {"causal"}) == 0.5
    assert edge_discount("evolution", "temporal") == 0.7
    assert edge_discount("causal", "temporal") == 1.0
    assert edge_discount("temporal", None) == 1.0
    assert edge_cost(GEdge("a", "b", "causal"), "causal") == pytest.approx(0.45)  # 0.5 · c0 0.9
    assert edge_cost(GEdge("a", "b", "causal"), "general", sim=0.7) == pytest.approx(0.3)  # 1 − cos


def test_backbone_path_cost_is_anchor_cost_plus_hops():
    g = melanie_graph()
    hits = bundle_search(g, {"fp:switch": 0.8}, "general", top_k=10)
    first = hits[0]
    assert first.event_id == "e_switch"
    assert first.cost == pytest.approx(0.2 + 0.02 + C_HOP)  # d(a) + c0(belongs_to) + c_hop
    assert first.template == "backbone"
    assert first.path == ("fp:switch", "-belongs_to->", "e_switch")


def test_intent_conditioned_costs_pick_different_bridges():
    g = melanie_graph()
    anchors = {"fp:switch": 0.8}
    causal = {h.event_id: h for h in bundle_search(g, anchors, "causal")}
    temporal = {h.event_id: h for h in bundle_search(g, anchors, "temporal")}
    # "Why ...": the causal bridge to the recital is cheaper than the temporal bridge
    assert causal["e_recital"].cost < causal["e_date"].cost
    assert causal["e_recital"].template == "bridge:causal"
    assert "<-causal-" in causal["e_recital"].path  # walked against the cause -> effect direction
    # "When ...": the other way round
    assert temporal["e_date"].cost < temporal["e_recital"].cost
    assert temporal["e_date"].template == "bridge:temporal"
    # exact eq. 2 cost of the causal bridge: d(a) + (0.5·0.9 + c_hop) + (0.02 + c_hop)
    assert causal["e_recital"].cost == pytest.approx(0.2 + 0.45 + C_HOP + 0.02 + C_HOP)


def test_entity_anchor_backbone_and_one_relation_per_path():
    g = melanie_graph()
    hits = {h.event_id: h for h in bundle_search(g, {"en:melanie": 0.6}, "causal")}
    assert hits["e_switch"].path[:3] == ("en:melanie", "-belongs_to->", "fp:switch")
    assert hits["e_other"].template == "backbone"
    # with no relation allowed, the bridge targets disappear
    none = {h.event_id for h in bundle_search(g, {"en:melanie": 0.6}, "causal", max_relations=0)}
    assert none == {"e_switch", "e_other"}


def test_edge_similarity_replaces_c0_only_next_to_an_anchor():
    g = melanie_graph()
    sims = {("fp:recital", "fp:switch", "causal"): 0.9}
    near = {h.event_id: h for h in bundle_search(g, {"fp:switch": 0.8}, "general", edge_sims=sims)}
    assert near["e_recital"].cost == pytest.approx(0.2 + (1 - 0.9) + C_HOP + 0.02 + C_HOP)
    far = {h.event_id: h for h in bundle_search(g, {"en:melanie": 0.8}, "general", edge_sims=sims)}
    # from the entity anchor the causal edge is not incident to an anchor: c0 = 0.9 applies
    assert far["e_recital"].cost == pytest.approx(0.2 + 0.02 + C_HOP + 0.9 + C_HOP + 0.02 + C_HOP)


def test_from_fragment_adapter_and_signal_ranking():
    frag = SimpleNamespace(
        entities=[SimpleNamespace(id="en:a", name="Ana")],
        facets=[SimpleNamespace(id="fc:1")],
        episodes=[],
        facet_points=[SimpleNamespace(id="fp:1", event_id="E1"), SimpleNamespace(id="fp:2", event_id="E2")],
        edges=[SimpleNamespace(src="en:a", dst="fp:1", type="belongs_to", weight=1.0),
               SimpleNamespace(src="fp:1", dst="fc:1", type="belongs_to", weight=1.0),
               SimpleNamespace(src="fp:1", dst="fp:2", type="causal", weight=1.0)],
    )
    g = TypedGraph.from_fragment(frag)
    assert g.layer["ev:E1"] == "event"
    hits = bundle_search(g, {"en:a": 0.5}, "causal")
    assert [h.event_id for h in hits] == ["E1", "E2"]  # ids mapped back to the events
    assert hits[0].path[0] == "Ana"
    sig = GraphSignal(ppr=ppr_events(g, {"en:a": 1.0}), bundle=hits)
    assert sig.ranking()[0] == "E1"
    with pytest.raises(ValueError):
        TypedGraph({"a": "entity"}, [GEdge("a", "b", "belongs_to")])
