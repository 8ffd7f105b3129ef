"""Every candidate signal searches inside the request's filters (`speakers`, `time_range`, `where`), not
only its tenant and conversation: with one candidate per signal, an out-of-filter turn that the signal
would rank first must not take the place of the in-filter one (fusion would drop it, and the request
would get nothing). The derived signal's test is in test_query_layers.py; here the temporal window and
the graph, each alone, and the abstain decision, which reads only the candidates the filter lets through."""
from __future__ import annotations

import pytest

from app.adapters.abstain_model import MODEL_FILE as ABSTAIN_MODEL
from app.adapters.fusion_ranker import MODEL_FILE as FUSION_MODEL
from tests.integration.layers_wiring_support import build_all
from tests.support import auth

# Two turns said on Monday 8 May 2023, both about Petra: Ben's first (earlier, and the first by
# meaning and by PageRank here), so a signal that ignores the filters fills its one place with it.
TURNS = [
    ("Ben", "I ran a half marathon in Boulder with my sister Petra.", "2023-05-08T09:00:00Z", {"user": "u2"}),
    ("Ana", "I repainted the garden fence with my sister Petra.", "2023-05-08T10:00:00Z", {"user": "u1"}),
]
FILTERS = ({"speakers": ["Ana"]}, {"where": {"user": "u1"}},
           {"time_range": {"start": "2023-05-08T09:30:00Z", "end": "2023-05-09T00:00:00Z"}})
OFF = {"dense": False, "lexical": False, "graph": False, "window": False, "findable": False, "derived": False,
       "expansion": False, "separation": False, "rerank": False, "candidate_pool": 1}


def _post(client, key) -> dict[str, int]:
    events = [{"conversation_id": "sg", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t,
               "metadata": md} for i, (s, c, t, md) in enumerate(TURNS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200, r.text
    ids = {x["event_id"]: x["id"] for x in r.json()["results"]}
    build_all(list(ids.values()))
    return ids


def _found(client, key, ask: dict) -> list[str]:
    r = client.post("/v1/query", headers=auth(key), json=ask)
    assert r.status_code == 200, r.text
    return [it["event_id"] for it in r.json()["items"]]


def _name(scoped: dict) -> str:
    return next(iter(scoped))


def test_the_temporal_signal_keeps_to_the_requests_filters(client, make_tenant):
    _, key = make_tenant()
    _post(client, key)
    ask = {"query": "Who ran a race on 8 May 2023?", "pipeline": OFF | {"window": True}}
    convs = {"conversation": {"conversation_id": "sg"}, "tenant": {}}  # the window's two statements
    # unfiltered, the one candidate is Ben's turn
    assert {c: _found(client, key, ask | conv) for c, conv in convs.items()} == {c: ["0"] for c in convs}
    # the window is searched inside each filter: Ana's turn, never Ben's
    got = {(c, _name(scoped)): _found(client, key, ask | conv | scoped) for c, conv in convs.items() for scoped in FILTERS}
    assert got == {key_: ["1"] for key_ in got}


def test_the_graph_signal_keeps_to_the_requests_filters(client, make_tenant):
    _, key = make_tenant()
    _post(client, key)
    ask = {"query": "Petra", "conversation_id": "sg", "pipeline": OFF | {"graph": True}}
    assert _found(client, key, ask) == ["0"]  # unfiltered, PageRank's first event is Ben's turn
    # the graph's hits are filtered before they are cut to its one place: Ana's turn, never Ben's
    got = {_name(scoped): _found(client, key, ask | scoped) for scoped in FILTERS}
    assert got == {_name(scoped): ["1"] for scoped in FILTERS}


# Ana's first employer, then (said on another device) the one that supersedes it: a knowledge-update
# question brings the superseding turn into the candidates' rows even when the filter leaves it out.
JOBS = [
    ("Ana", "I live in Boston and I work at Harbor Bank.", "2024-04-01T09:00:00Z", {"device": "phone"}),
    ("Ben", "How is the job hunt going?", "2024-04-20T09:00:00Z", {"device": "phone"}),
    ("Ana", "I got the offer! I start at Northwind Labs on June 3.", "2024-04-20T09:01:00Z", {"device": "laptop"}),
]


@pytest.mark.skipif(not (ABSTAIN_MODEL.exists() and FUSION_MODEL.exists()), reason="no abstain or fusion model shipped")
def test_the_abstain_decision_reads_only_what_the_filter_lets_through(client, make_tenant):
    _, key = make_tenant()
    events = [{"conversation_id": "jobs", "event_id": str(i), "speaker": s, "content": c, "occurred_at": t,
               "metadata": md} for i, (s, c, t, md) in enumerate(JOBS)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200, r.text
    build_all([x["id"] for x in r.json()["results"]])
    ask = {"query": "Does Ana still work at Harbor Bank or Northwind Labs now?", "conversation_id": "jobs"}

    def relevance(body: dict) -> tuple[dict, list[str]]:
        r = client.post("/v1/query", headers=auth(key), json=ask | body)
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["intent"]["label"] == "knowledge_update"  # the superseding turn is read with the candidates
        return out["relevance"], [it["event_id"] for it in out["items"]]

    everything, found = relevance({})
    assert "2" in found and everything["names_missing"] == 0 and everything["coverage"] == 1.0
    # on the phone, Northwind Labs was never said: the decision's evidence says so too
    phone, found = relevance({"where": {"device": "phone"}})
    assert "2" not in found
    assert phone["names_missing"] > 0 and phone["coverage"] < 1.0, phone
