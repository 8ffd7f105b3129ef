"""The query path over the ingestion layers: the derived-text and graph signals, the routed intent,
the per-stage trace, and heat bumped by retrieval."""
from __future__ import annotations

from tests.support import accesses, auth
from tests.integration.layers_wiring_support import build_all

TURNS = [
    ("Ana", "Last Saturday I ran my first half marathon in Boulder with my sister Petra.", "2023-05-08T10:00:00Z"),
    ("Ben", "Wow, congratulations! How did Petra do?", "2023-05-08T10:01:00Z"),
    ("Ana", "She beat me by ten minutes, she trains with a club called Summit Striders.", "2023-05-08T10:02:00Z"),
    ("Ben", "I adopted a beagle named Waffles from the shelter.", "2023-05-20T09:00:00Z"),
    ("Ana", "Petra says Summit Striders is looking for new members.", "2023-06-02T18:00:00Z"),
    ("Ben", "Waffles chewed my running shoes, so no club for me.", "2023-06-02T18:01:00Z"),
]


def load(client, key) -> list[int]:
    events = [{"conversation_id": "ql", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(TURNS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    return [x["id"] for x in r.json()["results"]]


def test_derived_dates_and_graph_find_evidence_the_words_do_not_name(client, tenant, engine):
    tid, key = tenant
    pks = load(client, key)
    build_all(pks)
    # "6 May 2023" is never written: the layers resolved "last Saturday" said on 8 May.
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What happened on 6 May 2023?", "conversation_id": "ql",
        "pipeline": {"dense": False, "lexical": False, "graph": False, "window": False, "derived": True}}).json()
    assert out["items"] and out["items"][0]["event_id"] == "0"
    assert "derived" in out["items"][0]["signals"]

    out = client.post("/v1/query", headers=auth(key), json={
        "query": "Petra", "conversation_id": "ql",
        "pipeline": {"dense": False, "lexical": False, "derived": False}}).json()
    found = {it["event_id"] for it in out["items"]}
    assert {"0", "4"} <= found  # events around the entity Petra, by PageRank over the graph
    assert all("graph" in it["signals"] for it in out["items"])


def test_intent_and_stage_trace_in_the_response(client, tenant):
    _, key = tenant
    pks = load(client, key)
    build_all(pks)
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "When did Ana run the half marathon?", "conversation_id": "ql"}).json()
    assert out["intent"]["label"] == "temporal"
    top = out["items"][0]
    assert top["event_id"] == "0"
    assert top["stages"]["fusion"]["rank"] >= 1 and "lexical" in top["stages"]["fusion"]["weights"]
    off = client.post("/v1/query", headers=auth(key), json={
        "query": "When did Ana run the half marathon?", "conversation_id": "ql",
        "pipeline": {"intent": False}}).json()
    assert off["intent"] is None and off["pipeline"]["intent"] is False


def test_retrieval_bumps_heat(client, tenant, engine, monkeypatch):
    """Inline (in the request's transaction) and off; the queued default is exercised with a real
    worker in test_end_to_end and with a dead broker in test_faults."""
    from app.settings import get_settings

    tid, key = tenant
    pks = load(client, key)
    build_all(pks)

    ask = {"query": "beagle Waffles", "conversation_id": "ql"}
    monkeypatch.setattr(get_settings(), "heat_on_query", "inline")
    before = accesses(engine, pks)
    out = client.post("/v1/query", headers=auth(key), json=ask).json()
    assert accesses(engine, pks) == before + len(out["context_items"]) > before

    monkeypatch.setattr(get_settings(), "heat_on_query", "off")
    before = accesses(engine, pks)
    client.post("/v1/query", headers=auth(key), json=ask)
    assert accesses(engine, pks) == before


def test_a_named_date_retrieves_what_was_said_or_meant_then(client, tenant):
    _, key = tenant
    pks = load(client, key)
    build_all(pks)
    only_window = {"dense": False, "lexical": False, "derived": False, "findable": False, "graph": False,
                   "rerank": False}
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What did Ben do on May 20, 2023?", "conversation_id": "ql", "pipeline": only_window}).json()
    assert out["intent"]["time_window"][0].startswith("2023-05-20")
    assert [it["event_id"] for it in out["items"]] == ["3"]  # the one turn said that day
    assert out["items"][0]["signals"]["temporal"]["rank"] == 1
    # about the day, not said on it: "last Saturday" (said 8 May) is about 6 May
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What happened on 6 May 2023?", "conversation_id": "ql", "pipeline": only_window}).json()
    assert [it["event_id"] for it in out["items"]] == ["0"]
    off = client.post("/v1/query", headers=auth(key), json={
        "query": "What did Ben do on May 20, 2023?", "conversation_id": "ql",
        "pipeline": only_window | {"window": False}}).json()
    assert off["items"] == [] and off["abstain"] is True
    # an open-ended window ("before 2023") reweights but does not retrieve on its own
    wide = client.post("/v1/query", headers=auth(key), json={
        "query": "What did Ben do before June 2023?", "conversation_id": "ql", "pipeline": only_window}).json()
    assert "temporal" not in {s for it in wide["items"] for s in it["signals"]}


def test_reweight_reads_the_layers_and_the_named_speaker(client, tenant):
    _, key = tenant
    pks = load(client, key)
    build_all(pks)
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What did Ben say about Summit Striders and the running club?", "conversation_id": "ql",
        # the named-speaker prior, x1.25 by default, seen in the reweight (learned ranker off)
        "pipeline": {"rerank": False, "learned": False}}).json()
    moved = {it["event_id"]: it["stages"].get("reweight", {}) for it in out["items"]}
    notes = [a["stage"] for st in moved.values() for a in st.get("adjustments", [])]
    assert "speaker" in notes  # Ben is named: his own turns get the L0 prior
    for it in out["items"]:
        speaker_adj = [a for a in it["stages"].get("reweight", {}).get("adjustments", []) if a["stage"] == "speaker"]
        assert bool(speaker_adj) == (it["speaker"] == "Ben")
    off = client.post("/v1/query", headers=auth(key), json={
        "query": "What did Ben say about Summit Striders and the running club?", "conversation_id": "ql",
        "pipeline": {"rerank": False, "learned": False, "speaker_beta": 0}}).json()
    assert not [a for it in off["items"] for a in it["stages"].get("reweight", {}).get("adjustments", [])
                if a["stage"] == "speaker"]


def test_recency_list_for_current_value_questions(client, tenant):
    _, key = tenant
    pks = load(client, key)
    build_all(pks)
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "Is Summit Striders currently looking for members?", "conversation_id": "ql",
        "pipeline": {"rerank": False}}).json()
    assert out["intent"]["label"] == "knowledge_update"
    rec = sorted((it["signals"]["recency"]["rank"], it["occurred_at"]) for it in out["items"] if "recency" in it["signals"])
    assert rec and [t for _, t in rec] == sorted((t for _, t in rec), reverse=True)
    general = client.post("/v1/query", headers=auth(key), json={
        "query": "Summit Striders members", "conversation_id": "ql", "pipeline": {"rerank": False}}).json()
    assert all("recency" not in it["signals"] for it in general["items"])


def test_abstain_under_the_floor(client, tenant):
    _, key = tenant
    build_all(load(client, key))
    # the floor rule (the abstention model's is tests/integration/test_abstain_api.py)
    body = {"query": "What is the capital of Mongolia?", "conversation_id": "ql",
            "pipeline": {"rerank": False, "abstain_learned": False}}
    out = client.post("/v1/query", headers=auth(key), json=body).json()
    assert 0 < out["relevance"]["dense"] < 0.31 and out["items"] and out["abstain"] is True  # the default floor
    from app.settings import get_settings

    s = get_settings()
    old = s.abstain_dense_floor
    try:
        s.abstain_dense_floor = 0.5
        assert client.post("/v1/query", headers=auth(key), json=body).json()["abstain"] is True
        near = client.post("/v1/query", headers=auth(key), json=body | {"query": "I ran my first half marathon"}).json()
        assert near["relevance"]["dense"] > 0.5 and near["abstain"] is False
    finally:
        s.abstain_dense_floor = old


def test_tight_budget_gets_episode_summaries_for_missing_evidence(client, tenant):
    _, key = tenant
    story = ("We finally booked the Oslo trip for June. The flights were cheap on a Tuesday. We will stay near the "
             "harbour in a small flat. My brother Ivar lives there and will show us the fjords. We plan a ferry to "
             "Bergen on the third day. The museum pass covers the Viking ship hall. I still need a rain jacket. "
             "Ivar says the weather changes every hour.")
    turns = [("Ana", story, "2023-05-08T10:00:00Z"), ("Ben", "That sounds great, enjoy Oslo!", "2023-05-08T10:01:00Z"),
             ("Ben", "My beagle Waffles chewed my shoes again.", "2023-06-20T09:00:00Z")]
    r = client.post("/v1/events", headers=auth(key), json={"events": [
        {"conversation_id": "trip", "event_id": str(i), "speaker": sp, "content": c, "occurred_at": t}
        for i, (sp, c, t) in enumerate(turns)]})
    build_all([x["id"] for x in r.json()["results"]])
    body = {"query": "Oslo trip Ivar fjords ferry Bergen", "conversation_id": "trip", "token_budget": 60,
            "top_k": 1, "pipeline": {"rerank": False, "notice": False, "summaries": True}}  # summaries: off by default
    out = client.post("/v1/query", headers=auth(key), json=body).json()
    assert out["items"][0]["event_id"] == "0" and not out["items"][0]["in_context"]  # the story is too long
    assert [s["episode"] for s in out["context_summaries"]] == [0], out["context"]
    assert out["context_tokens"] <= 60
    assert "Summary of an episode: " + out["context_summaries"][0]["text"] in out["context"]
    off = client.post("/v1/query", headers=auth(key), json=body | {"pipeline": {"rerank": False, "notice": False}}).json()
    assert off["context_summaries"] == [] and "Summary of an episode" not in off["context"]  # the default


def test_bundle_search_adds_the_events_one_typed_relation_away_from_the_dense_hits(client, tenant, engine):
    """PRISM's bundle search inside the graph signal: from an anchor (a dense hit), the events one
    temporal / causal / evolution edge away join PageRank's list; the anchors themselves do not
    (they are the dense list already)."""
    from app.domain.retrieval.bundle import bundle_search
    from app.domain.retrieval.graph import GEdge, TypedGraph
    from app.services.graph import neighbourhood
    from app.services.retrievers import graph_signal
    from app.storage.candidates import Scope

    tid, key = tenant
    pks = load(client, key)
    build_all(pks)
    with engine.connect() as conn:
        view = neighbourhood(conn, tid, "ql", ["Petra"], limit=200, depth=2)
        relations = [e for e in view.edges if e["type"] in ("temporal", "causal", "evolution")]
        assert relations, "the fixture's graph has relation edges about Petra"
        ev = {n["key"]: n["event_pk"] for n in view.nodes if n.get("event_pk")}
        e = next(e for e in relations if ev.get(e["src"]) and ev.get(e["dst"]) and ev[e["src"]] != ev[e["dst"]])
        anchor, bridged = ev[e["src"]], ev[e["dst"]]
        plain = graph_signal(conn, Scope(tid, "ql"), "Petra", 50)
        with_bundle = graph_signal(conn, Scope(tid, "ql"), "Petra", 50, anchors={anchor: 0.9}, intent="temporal")
    assert bridged in dict(with_bundle)
    # the same search on the pure graph: the bridge is reached through exactly one relation
    graph = TypedGraph({n["key"]: ("event" if n.get("event_pk") else n["kind"]) for n in view.nodes},
                       [GEdge(x["src"], x["dst"], x["type"]) for x in view.edges], event_of=ev)
    hits = bundle_search(graph, {e["src"]: 0.9}, "temporal", top_k=20)
    assert any(h.event_id == bridged and h.template.startswith("bridge") for h in hits)
    def rank(hits: list) -> int:
        return next((i for i, (pk, _) in enumerate(hits) if pk == bridged), len(hits))

    assert rank(with_bundle) <= rank(plain)  # the bridge can only gain from the second list


def test_first_person_question_prefers_the_users_own_turn(client, tenant):
    """A user and an assistant: the assistant's reply repeats the user's words at length and outranks the
    turn that says it, until the question's "I" points the asker prior at the user's turns."""
    _, key = tenant
    turns = [
        ("user", "For my budget app I want every transaction to get a category column."),
        ("assistant", "To add a column to the transactions table, run ALTER TABLE transactions ADD COLUMN; "
                      "adding a column to a transactions table keeps its rows, and the new column starts "
                      "empty, so backfill it for the old transactions afterwards."),
        ("user", "Thanks. Also, the dashboard loads slowly."),
        ("assistant", "A slow dashboard usually needs an index; add one on the date of each transaction."),
    ]
    events = [{"conversation_id": "asker", "event_id": str(i), "speaker": role, "role": role, "content": c,
               "occurred_at": f"2024-03-01T10:0{i}:00Z"} for i, (role, c) in enumerate(turns)]
    assert client.post("/v1/events", headers=auth(key), json={"events": events}).status_code == 200
    ask = {"query": "Which column did I want to add to the transactions table?", "conversation_id": "asker",
           "pipeline": {"rerank": False, "learned": False}}
    off = client.post("/v1/query", headers=auth(key), json=ask | {"pipeline": {"rerank": False, "learned": False, "asker": False}}).json()
    assert off["items"][0]["event_id"] == "1"  # the long reply wins on words and meaning
    on = client.post("/v1/query", headers=auth(key), json=ask).json()
    assert on["items"][0]["event_id"] == "0"
    for it in on["items"]:
        asker = [a for a in it["stages"].get("reweight", {}).get("adjustments", []) if a["stage"] == "asker"]
        assert bool(asker) == (it["speaker"] == "user")
    # third person: nothing to prefer
    third = client.post("/v1/query", headers=auth(key), json=ask | {"query": "Which column should be added?"}).json()
    assert not any(a["stage"] == "asker" for it in third["items"]
                   for a in it["stages"].get("reweight", {}).get("adjustments", []))


def test_question_to_you_prefers_the_assistants_turn(client, tenant):
    """The symmetric case: "what did you suggest" asks what the assistant said; the user's turn that
    repeats the question's words loses its lead once the addressee prior lifts the assistant's turns."""
    _, key = tenant
    turns = [
        ("user", "The dashboard for the transactions is slow, which index should the slow dashboard use?"),
        ("assistant", "Add an index on the date column."),
        ("user", "Thanks, and the weekly report is fine."),
    ]
    events = [{"conversation_id": "addressee", "event_id": str(i), "speaker": role, "role": role, "content": c,
               "occurred_at": f"2024-03-01T10:0{i}:00Z"} for i, (role, c) in enumerate(turns)]
    assert client.post("/v1/events", headers=auth(key), json={"events": events}).status_code == 200
    ask = {"query": "Which index did you suggest for the slow dashboard?", "conversation_id": "addressee"}
    off = client.post("/v1/query", headers=auth(key), json=ask | {"pipeline": {"rerank": False, "learned": False, "addressee_beta": 0}})
    on = client.post("/v1/query", headers=auth(key), json=ask | {"pipeline": {"rerank": False, "learned": False}})
    off, on = off.json(), on.json()
    assert off["items"][0]["event_id"] == "0" and on["items"][0]["event_id"] == "1"
    for it in on["items"]:
        lifted = [a for a in it["stages"].get("reweight", {}).get("adjustments", []) if a["stage"] == "addressee"]
        assert bool(lifted) == (it["speaker"] == "assistant")
        assert all(a["factor"] == 1.5 for a in lifted)


# Two turns that both resolve "last Saturday" to 6 May 2023: Ben's first (the derived search's tie goes to
# the older row), so with one candidate per signal an unfiltered derived search fills its list with it.
SCOPED = [
    ("Ben", "Last Saturday I repainted the garden fence.", "2023-05-08T09:00:00Z", {"user": "u2"}),
    ("Ana", "Last Saturday I ran my first half marathon in Boulder.", "2023-05-08T10:00:00Z", {"user": "u1"}),
]
ONLY_DERIVED = {"dense": False, "lexical": False, "graph": False, "window": False, "findable": False,
                "expansion": False, "separation": False, "rerank": False, "derived": True, "candidate_pool": 1}


def _post_scoped(client, key, content_prefix: str = "") -> dict[str, int]:
    events = [{"conversation_id": "sf", "event_id": str(i), "speaker": s, "content": content_prefix + c,
               "occurred_at": t, "metadata": md} for i, (s, c, t, md) in enumerate(SCOPED)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200, r.text
    ids = {x["event_id"]: x["id"] for x in r.json()["results"]}
    build_all(list(ids.values()))
    return ids


def test_the_derived_signal_keeps_to_the_requests_filters_and_tenant(client, make_tenant):
    _, key = make_tenant()
    _, other = make_tenant()
    ids = _post_scoped(client, key)
    theirs = _post_scoped(client, other, "Tenant B: ")
    ask = {"query": "What happened on 6 May 2023?", "pipeline": ONLY_DERIVED}

    def found(body: dict) -> list[str]:
        r = client.post("/v1/query", headers=auth(key), json=ask | body)
        assert r.status_code == 200, r.text
        return [it["event_id"] for it in r.json()["items"]]

    assert found({"conversation_id": "sf"}) == ["0"]  # unfiltered, the one candidate is Ben's turn
    for scoped in ({"speakers": ["Ana"]}, {"where": {"user": "u1"}},
                   {"time_range": {"start": "2023-05-08T09:30:00Z", "end": "2023-05-09T00:00:00Z"}}):
        for conv in ({"conversation_id": "sf"}, {}):  # within the conversation and across the tenant
            # the one candidate is searched inside the filter: Ana's turn, never Ben's
            assert found(scoped | conv) == ["1"], (scoped, conv)
    # another tenant's turns say the same date: never found by this tenant's key
    r = client.post("/v1/query", headers=auth(key), json=ask | {"pipeline": ONLY_DERIVED | {"candidate_pool": 50}})
    got = {it["id"] for it in r.json()["items"]}
    assert got == set(ids.values()) and not got & set(theirs.values())
    assert "Tenant B" not in r.json()["context"]
