"""The ingestion layers wired to storage: each job run on a small hand-made conversation in the test
database (the job functions directly; one slow test runs them in a real worker), and the artifacts
read back: episodes, the Boston -> Denver contradiction, surprise, speaker profiles, the graph (and its
LLM extractor), resolved dates in the derived search text, reruns, chunked tasks, versions side by side
and the CLI's rebuild. The gate at ingest, regate and heat: test_layers_gate_heat.py.
"""
from __future__ import annotations

import time
from datetime import date, datetime, timezone

import numpy as np
import pytest
from sqlalchemy import text

from app.services.graph import entities_named_in, neighbourhood
from app.services.layers import JOBS, embed_pending, process_conversation, run_for_pks
from app.storage.candidates import Scope, search_extra_candidates
from app.storage.episodes import episodes_for, timeline_for
from app.storage.graph import facet_point_events
from app.storage.layer_runs import drop_other_versions, layer_counts, pick_version
from app.storage.outbox import pending_in_conversation
from app.storage.profiles import profiles_for
from app.storage.signals import signals_for, superseding
from tests.support import auth
from tests.support.stack import live, log_line, log_size  # noqa: F401  (live: the session's API + worker)
from tests.integration.layers_wiring_support import (  # noqa: F401  (make_tenant: a fixture)
    LAYERS,
    TURNS,
    build_all,
    make_tenant,
    post_conversation,
)


def slice_rows(engine, tenant_id: int, conv: str) -> dict[str, list]:
    """The derived rows of a conversation, minus surrogate ids and timestamps (for idempotence)."""
    queries = {
        "episodes": "SELECT layer_version, idx, start_at, end_at, speakers, boundary, summary, event_pks, "
                    "summary_event_pks FROM episodes WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1, 2",
        "assertions": "SELECT layer_version, key, event_pk, entity, attribute, value, negated, superseded_by_key, valid_from "
                      "FROM assertions WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1, 2",
        "contradictions": "SELECT layer_version, key, earlier_event_pk, later_event_pk, kind FROM contradictions "
                          "WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1, 2",
        "profiles": "SELECT speaker, layer_version, message_count, profile, style::text FROM speaker_profiles "
                    "WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1, 2",
        "nodes": "SELECT layer_version, key, kind, label, names, event_pk, data FROM graph_nodes "
                 "WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1, 2",
        "edges": "SELECT layer_version, src, dst, type, weight, meta::text FROM graph_edges "
                 "WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1, 2, 3, 4, 6",
        "signals": "SELECT event_pk, surprise, importance, episode_index, superseded_by_event_pk, entities, "
                   "resolved_dates, search_extra FROM event_signals WHERE tenant_id = :t AND conversation_id = :c "
                   "ORDER BY 1",
    }
    with engine.connect() as conn:
        return {k: [tuple(r) for r in conn.execute(text(q), {"t": tenant_id, "c": conv})] for k, q in queries.items()}


@pytest.fixture(scope="module")
def built(engine, make_tenant, client):
    """One conversation with every layer built (module-scoped: the artifact tests only read it)."""
    tid, key = make_tenant()
    pks = post_conversation(client, key)
    counts = build_all(pks)
    return tid, key, pks, counts


def test_each_job_builds_its_conversation_once(built):
    _, _, _, counts = built
    # gate is off for this tenant: no gate rows, nothing to do; every other layer built it once
    assert counts["gate"] == {"done": 0, "nothing": 1, "waiting": 0}
    for layer in ("consolidate", "surprise", "engrams", "graph"):
        assert counts[layer] == {"done": 1, "nothing": 0, "waiting": 0}, layer


def test_episodes_split_on_a_six_hour_gap(built, engine):
    tid, _, pks, _ = built
    with engine.connect() as conn:
        version, eps = episodes_for(conn, tid, "hm")
        sig = signals_for(conn, tid, pks)
    assert version == JOBS["consolidate"].version()
    assert [e.event_pks for e in eps] == [pks[:5], pks[5:]]
    assert [e.boundary for e in eps] == ["start", "gap"]
    assert eps[1].start == datetime(2023, 5, 8, 17, 30, tzinfo=timezone.utc)
    assert "Denver" in eps[1].summary and set(eps[1].summary_event_pks) <= set(pks[5:])
    assert [sig[pk].episode_index for pk in pks] == [0] * 5 + [1] * 3


def test_boston_to_denver_is_a_contradiction_with_a_superseded_link(built, engine):
    tid, _, pks, _ = built
    with engine.connect() as conn:
        _, assertions, contradictions = timeline_for(conn, tid, "hm", entity="ana", attribute="lives_in")
        later = superseding(conn, tid, pks)
    by_event = {a.event_pk: a for a in assertions}
    boston, denver = by_event[pks[0]], by_event[pks[5]]
    assert (boston.value, denver.value) == ("Boston", "Denver")
    assert boston.superseded_by == denver.key and denver.superseded_by is None
    c = next(c for c in contradictions if c.earlier_value == "Boston")
    assert (c.later_value, c.kind, c.later_event_pk) == ("Denver", "update", pks[5])
    # per event: the restated Boston events are replaced by later events; the Denver ones are not
    assert later[pks[0]] in (pks[5], pks[7]) and later[pks[4]] in (pks[5], pks[7])
    assert pks[5] not in later and pks[7] not in later


def test_surprise_is_higher_for_a_new_fact_than_for_a_restatement(built, engine):
    tid, _, pks, _ = built
    with engine.connect() as conn:
        sig = signals_for(conn, tid, pks)
    first, restated, moved = sig[pks[0]], sig[pks[4]], sig[pks[5]]
    assert restated.surprise < 0.2 < first.surprise
    assert moved.surprise > restated.surprise and moved.surprise >= 0.9  # new place + a contradiction
    for s in sig.values():  # importance = max(salience, sigma), heat initialised from it
        assert s.importance == pytest.approx(max(s.salience, s.surprise), abs=1e-4)
        assert s.heat is not None and s.heat_stage is not None


def test_speaker_profiles_count_messages_and_carry_a_unit_style_vector(built, engine):
    tid, _, _, _ = built
    with engine.connect() as conn:
        version, profiles = profiles_for(conn, tid, "hm", include_vectors=True)
    assert version == JOBS["engrams"].version()
    by = {p["speaker"]: p for p in profiles}
    assert by["Ana"]["message_count"] == 5 and by["Ben"]["message_count"] == 3
    assert by["Ana"]["attributes"]["lives_in"] == ["Denver"]  # the standing value, not Boston
    assert by["Ben"]["addresses"].get("Ana", 0) >= 1
    for p in profiles:
        v = np.asarray(p["style_vector"])
        assert v.shape == (256,) and np.linalg.norm(v) == pytest.approx(1.0, abs=1e-4)
    assert float(np.dot(by["Ana"]["style_vector"], by["Ben"]["style_vector"])) < 0.999


def test_graph_has_entities_and_every_edge_type(built, engine):
    tid, _, pks, _ = built
    with engine.connect() as conn:
        counts = layer_counts(conn, tid, "hm")
        entities = {n["label"]: n for n in entities_named_in(conn, tid, "hm", "Boston Denver Google Stripe Ana")}
        view = neighbourhood(conn, tid, "hm", ["Denver"], limit=25)
        fp_events = facet_point_events(conn, tid, "hm", [n["key"] for n in view.nodes])
    assert set(counts["edges_by_type"]) == {"belongs_to", "involves_entity", "temporal", "evolution", "causal"}
    assert counts["nodes_by_kind"].keys() == {"entity", "facet_point", "facet", "episode"}
    assert entities["Boston"]["data"]["kind"] == "place" and entities["Ana"]["data"]["kind"] == "person"
    assert {"Denver", "Google", "Stripe"} <= set(entities)
    assert view.seeds == ["en:denver"] and len(view.nodes) <= 25
    assert {n["kind"] for n in view.nodes} >= {"entity", "facet_point"}
    keys = {n["key"] for n in view.nodes}
    assert all(e["src"] in keys and e["dst"] in keys for e in view.edges)
    assert set(fp_events.values()) >= {pks[5], pks[7]}  # the facts that name Denver
    with engine.connect() as conn:
        evolution = conn.execute(text(
            "SELECT meta FROM graph_edges WHERE tenant_id = :t AND conversation_id = 'hm' AND type = 'evolution' "
            "AND meta->>'attribute' = 'lives_in' AND (meta->>'changed')::boolean"), {"t": tid}).all()
        causal = conn.execute(text(
            "SELECT count(*) FROM graph_edges WHERE tenant_id = :t AND conversation_id = 'hm' AND type = 'causal' "
            "AND (src_event_pk = :rex OR dst_event_pk = :rex)"), {"t": tid, "rex": pks[3]}).scalar_one()
    assert any(m["from"] == "Boston" and m["to"] == "Denver" for (m,) in evolution)
    assert causal >= 1  # "... because my old cat died"


def test_last_saturday_resolves_to_a_searchable_absolute_date(built, engine):
    tid, _, pks, _ = built
    with engine.connect() as conn:
        sig = signals_for(conn, tid, [pks[2]])[pks[2]]
        hits = search_extra_candidates(conn, Scope(tid, "hm"), "What did Ana do on 6 May 2023?")
        other_words = search_extra_candidates(conn, Scope(tid, "hm"), "May 6, 2023")
        direct = conn.execute(text(
            "SELECT event_pk FROM event_signals WHERE tenant_id = :t AND "
            "search_extra_tsv @@ websearch_to_tsquery('english', '2023-05-06')"), {"t": tid}).scalars().all()
        verbatim = conn.execute(text(
            "SELECT count(*) FROM events WHERE id = :pk AND search_tsv @@ websearch_to_tsquery('english', 'May 2023')"),
            {"pk": pks[2]}).scalar_one()
    assert sig.resolved_dates == (date(2023, 5, 6),)
    assert sig.time_mentions[0]["surface"] == "last Saturday" and sig.time_mentions[0]["label"] == "6 May 2023"
    assert hits[0][0] == pks[2] and other_words[0][0] == pks[2] and direct == [pks[2]]
    assert verbatim == 0  # the date was never written: only the derived text matches it


def test_a_rerun_writes_the_same_rows(built, engine):
    tid, _, _, _ = built
    before = slice_rows(engine, tid, "hm")
    for layer in LAYERS[1:]:
        assert process_conversation(layer, tid, "hm", force=True).status == "done"
    assert slice_rows(engine, tid, "hm") == before
    assert all(before[k] for k in before)


def test_chunked_tasks_recompute_a_conversation_once(client, make_tenant, engine):
    tid, key = make_tenant()
    turns = [("Ana" if i % 2 else "Ben", f"Message {i} about the garden and the tomatoes.", f"2024-01-01T10:{i:02d}:00Z")
             for i in range(32)]
    pks = post_conversation(client, key, "chunky", turns)
    chunks = [pks[i : i + 2] for i in range(0, len(pks), 2)]  # 16 tasks, as dispatch would send them
    results = [run_for_pks("surprise", c) for c in chunks]
    assert sum(r["done"] for r in results) == 1 and sum(r["nothing"] for r in results) == 15
    # consolidation waits for the embed layer instead of computing vectors itself
    assert run_for_pks("consolidate", chunks[0]) == {"done": 0, "nothing": 0, "waiting": 1}
    embed_pending(pks)
    assert [run_for_pks("consolidate", c)["done"] for c in chunks] == [1] + [0] * 15
    with engine.connect() as conn:
        assert layer_counts(conn, tid, "chunky")["episodes"] == 1
        # an event that arrives later is pending again and triggers its own run
    late = {"conversation_id": "chunky", "event_id": "late", "speaker": "Ana", "content": "Late message about peppers.",
            "occurred_at": "2024-01-01T11:00:00Z"}
    pks2 = [x["id"] for x in client.post("/v1/events", json={"events": [late]}, headers=auth(key)).json()["results"]]
    with engine.connect() as conn:
        assert pending_in_conversation(conn, "surprise", tid, "chunky") == pks2
    assert run_for_pks("surprise", pks2)["done"] == 1


def test_a_rebuild_with_another_version_runs_beside_the_current_one(built, engine):
    tid, _, pks, _ = built
    current = JOBS["consolidate"].version()
    out = process_conversation("consolidate", tid, "hm", force=True, version="consolidation/test-2")
    assert out.status == "done"
    with engine.connect() as conn:
        v_old, eps_old = episodes_for(conn, tid, "hm", layer_version=current)
        v_new, eps_new = episodes_for(conn, tid, "hm", layer_version="consolidation/test-2")
        latest, _ = episodes_for(conn, tid, "hm")
        preferred, _ = episodes_for(conn, tid, "hm", prefer=current)
    assert [e.event_pks for e in eps_old] == [e.event_pks for e in eps_new]
    assert latest == "consolidation/test-2" and preferred == current
    with engine.begin() as conn:  # swap: drop the old slice
        assert drop_other_versions(conn, tid, "hm", "consolidate", keep="consolidation/test-2") > 0
        assert episodes_for(conn, tid, "hm", layer_version=current)[1] == []
    assert process_conversation("consolidate", tid, "hm", force=True).status == "done"  # and back
    with engine.begin() as conn:
        drop_other_versions(conn, tid, "hm", "consolidate", keep=current)
        assert episodes_for(conn, tid, "hm")[0] == current


def test_the_cli_rebuilds_a_layer_from_the_log(built, engine):
    from typer.testing import CliRunner

    from app.cli import app as cli

    tid, _, _, _ = built
    with engine.connect() as conn:
        name = conn.execute(text("SELECT name FROM tenants WHERE id = :t"), {"t": tid}).scalar_one()
        conn.execute(text("SELECT 1"))
    before = slice_rows(engine, tid, "hm")
    with engine.begin() as conn:  # lose the graph
        conn.execute(text("DELETE FROM graph_nodes WHERE tenant_id = :t"), {"t": tid})
        conn.execute(text("DELETE FROM graph_edges WHERE tenant_id = :t"), {"t": tid})
    r = CliRunner().invoke(cli, ["rebuild", "--layer", "graph", "--conversation", "hm", "--tenant", name])
    assert r.exit_code == 0, r.output
    assert "graph/5" in r.output and "8 events" in r.output
    after = slice_rows(engine, tid, "hm")
    assert after["nodes"] == before["nodes"] and after["edges"] == before["edges"]
    r = CliRunner().invoke(cli, ["rebuild", "--layer", "nope"])
    assert r.exit_code != 0


def test_graph_job_uses_the_llm_extractor_when_configured(client, make_tenant, engine, monkeypatch):
    """PALIMPSEST_LLM_BASE_URL set: the graph job calls that OpenAI-compatible API (a real local
    HTTP server here) with the configured model and key, and stores the facts it returns."""
    import json
    import re
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from app.settings import get_settings

    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"auth": self.headers.get("Authorization"), "model": body["model"], "path": self.path})
            lines = re.findall(r"^\[(\d+)\] \([^)]*\) (\w+): (.*)$", body["messages"][1]["content"], re.M)
            answer = {"entities": [{"name": sp, "kind": "person"} for sp in {sp for _, sp, _ in lines}],
                      "facts": [{"event_id": i, "text": f"{sp} said: {t}", "entities": [sp], "topic": "llm"}
                                for i, sp, t in lines]}
            data = json.dumps({"choices": [{"message": {"content": json.dumps(answer)}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        s = get_settings()
        monkeypatch.setattr(s, "llm_base_url", f"http://127.0.0.1:{server.server_address[1]}/v1")
        monkeypatch.setattr(s, "llm_model", "test-model")
        monkeypatch.setattr(s, "llm_api_key", "sk-test")
        tid, key = make_tenant()
        pks = post_conversation(client, key, "llm")
        counts = build_all(pks)
    finally:
        server.shutdown()
    # one call per episode for the facts, one assertion batch for consolidation's timeline (graph/4: the
    # graph's evolution edges read consolidation's stored assertions, no second batch)
    assert counts["graph"]["done"] == 1 and len(seen) == 3
    assert seen[0] == {"auth": "Bearer sk-test", "model": "test-model", "path": "/v1/chat/completions"}
    assert JOBS["graph"].version().endswith("llm_extract/3")
    with engine.connect() as conn:
        run = pick_version(conn, tid, "llm", "graph")
        labels = conn.execute(text("SELECT label FROM graph_nodes WHERE tenant_id = :t AND kind = 'facet_point'"),
                              {"t": tid}).scalars().all()
    assert run.layer_version.endswith("llm_extract/3") and run.stats["extractor"] == "llm"
    assert run.stats["llm"]["llm_chunks"] == 2 and run.stats["llm"]["fallback_chunks"] == 0
    assert "Ana said: Big news: we moved to Denver last month!" in labels
    # the LLM's facts hold no offsets into the turn: the turn's dates are still the time resolver's, whole-turn
    with engine.connect() as conn:
        sig = signals_for(conn, tid, [pks[2]])[pks[2]]
    assert [(m["surface"], m["start"], m["label"]) for m in sig.time_mentions] == [("last Saturday", 27, "6 May 2023")]


@pytest.mark.slow
def test_a_worker_builds_every_layer(live, make_tenant):
    """Real processes: uvicorn + a Celery worker, no beat (the layers start each other). The session's
    shared stack (tests/support/stack.py), in a tenant of this test's own."""
    import httpx

    _, key = make_tenant()
    since = log_size(live.logs / "worker.log")  # the stack is shared: only what this test causes counts
    with httpx.Client(base_url=live.url, headers=auth(key), timeout=30) as c:
        events = [{"conversation_id": "e2e-layers", "event_id": str(i), "speaker": s, "content": t,
                   "occurred_at": at} for i, (s, t, at) in enumerate(TURNS)]
        assert c.post("/v1/events", json={"events": events}).status_code == 200
        deadline = time.time() + 240
        while True:
            st = c.get("/v1/conversations/e2e-layers/status").json()
            if all(n == 0 for n in st["pending"].values()):
                break
            assert time.time() < deadline, f"layers not built in time: {st}; logs in {live.logs}"
            time.sleep(0.2)
        assert set(st["pending"]) == {"embed", "gate", "consolidate", "surprise", "engrams", "graph"}
        eps = c.get("/v1/conversations/e2e-layers/episodes").json()
        assert [e["boundary"] for e in eps["episodes"]] == ["start", "gap"]
        g = c.get("/v1/conversations/e2e-layers/graph", params={"query": "Where does Ana live?"}).json()
        assert "en:ana" in g["stats"]["seeds"] and any(n["kind"] == "facet_point" for n in g["nodes"])
        sp = c.get("/v1/conversations/e2e-layers/speakers").json()
        assert {p["speaker"] for p in sp["speakers"]} == {"Ana", "Ben"}
    # the embed layer's completion started the waiting layers
    log_line(live.logs / "worker.log", lambda line: "layers_started" in line, since=since)
