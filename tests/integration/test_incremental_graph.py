"""The memory graph built batch by batch (#18 item 4) ends with what a full rebuild from the
log computes (`palimpsest rebuild`'s function): every node and edge of the slice, what
`GET /v1/conversations/{id}/graph` shows, and each event's graph signals (entities, resolved dates,
time mentions, search_extra). The lookahead is cut to 6 events so most events are closed (their
facts kept in the state) and the open tail moves with every batch; a late event and a correction
make the run a full one, and it still equals the rebuild. The assembly a worker holds between
batches is also dropped before each batch (`cold`: as after a restart, or when another worker ran
the last batch): it is made again from the stored state and its chunks, its rows compared with the
stored ones, and the same end.
"""
from __future__ import annotations

import random
from datetime import timedelta

import pytest
from sqlalchemy import text

from app.domain.layers import graph_fold
from app.services import graph_build
from app.services.layers import rebuild
from app.storage.layer_runs import runs_for
from tests.integration.test_incremental_consolidation import T0, build, post, script
from tests.support import auth

MORE = [
    ("Ann", "My friend Priya Raman runs the Tallow Studio pottery class downtown."),
    ("Bob", "Priya taught me glazing at Tallow last spring, that pottery class is great."),
    ("Ann", "Last Saturday we went camping near Lake Tahoe with Priya."),
    ("Bob", "Camping at Lake Tahoe sounds lovely. That's why I bought a tent."),
]


def items() -> list:
    base = script()
    t = base[-1][2]
    extra = [(s, f"{c} ({len(base) + i})", t + timedelta(minutes=2 * (i + 1))) for i, (s, c) in enumerate(MORE * 2)]
    return base + extra


def last_run(engine, tid: int, conv: str) -> dict:
    with engine.connect() as conn:
        return next(r for r in runs_for(conn, tid, conv, "graph")).stats


def read(engine, client, key, tid: int, conv: str) -> dict:
    with engine.connect() as conn:
        p = {"t": tid, "c": conv}
        nodes = [tuple(map(str, r)) for r in conn.execute(text(
            "SELECT key, kind, label, names, event_pk, data FROM graph_nodes "
            "WHERE tenant_id = :t AND conversation_id = :c ORDER BY key"), p)]
        edges = sorted(tuple(map(str, r)) for r in conn.execute(text(
            "SELECT src, dst, type, weight, meta, src_event_pk, dst_event_pk FROM graph_edges "
            "WHERE tenant_id = :t AND conversation_id = :c"), p))
        signals = [tuple(map(str, r)) for r in conn.execute(text(
            "SELECT event_pk, graph_version, entities, resolved_dates, time_mentions, search_extra FROM event_signals "
            "WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1"), p)]
    g = client.get(f"/v1/conversations/{conv}/graph", params={"entity": "Ann", "limit": 200}, headers=auth(key))
    assert g.status_code == 200, g.text
    body = g.json()
    shown = {"nodes": sorted(n["id"] if "id" in n else n["key"] for n in body["nodes"]),
             "edges": sorted((e["src"], e["dst"], e["type"]) for e in body["edges"])}
    return {"nodes": nodes, "edges": edges, "signals": signals, "api": shown}


def rebuilt(engine, client, key, tid: int, conv: str) -> dict:
    rebuild("graph", tid, conv)
    assert last_run(engine, tid, conv)["run"] == "full"
    return read(engine, client, key, tid, conv)


@pytest.fixture
def short_lookahead(monkeypatch):
    monkeypatch.setattr(graph_fold, "LOOKAHEAD", 6)


@pytest.mark.parametrize("seed,cold", [(1, False), (2, False), (3, True)])
def test_random_batches_end_equal_to_a_full_rebuild(engine, client, tenant, short_lookahead, seed, cold):
    tid, key = tenant
    conv = f"ggrow-{seed}"
    evs = items()
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(evs)), 6))
    runs = []
    for a, b in zip([0, *cuts], [*cuts, len(evs)]):
        if cold:
            graph_build._WARM.clear()
        build(post(client, key, conv, evs[a:b], a))
        runs.append(last_run(engine, tid, conv)["run"])
    assert runs == ["full"] + ["incremental"] * 6
    stats = last_run(engine, tid, conv)
    assert stats["assembly"] == ("rebuilt" if cold else "held")
    assert stats["written"]["nodes"] < stats["facet_points"]  # a batch writes what changed, not the slice
    grown = read(engine, client, key, tid, conv)
    kinds = {n[1] for n in grown["nodes"]}
    assert kinds == {"entity", "facet_point", "facet", "episode"}
    assert {e[2] for e in grown["edges"]} >= {"belongs_to", "involves_entity", "temporal", "evolution", "causal"}
    assert any(s[5] != "None" for s in grown["signals"]) and grown["api"]["nodes"]
    assert rebuilt(engine, client, key, tid, conv) == grown


def test_late_or_corrected_events_recompute_and_equal_the_rebuild(engine, client, tenant, short_lookahead):
    tid, key = tenant
    conv = "glate"
    evs = items()
    build(post(client, key, conv, evs[:20], 0))
    build(post(client, key, conv, evs[20:30], 20))
    assert last_run(engine, tid, conv)["run"] == "incremental"
    build(post(client, key, conv, [("Bob", "Before all that, I lived in Chicago. (late)", T0 - timedelta(days=1))], 30))
    assert last_run(engine, tid, conv)["run"] == "full"
    fix = {"conversation_id": conv, "event_id": "e0-fixed", "supersedes": "e0", "speaker": "Ann",
           "content": "I live in Chicago and I work at Google as an engineer.",
           "occurred_at": (evs[29][2] + timedelta(minutes=1)).isoformat()}
    r = client.post("/v1/events", json={"events": [fix]}, headers=auth(key))
    assert r.status_code == 200, r.text
    build([x["id"] for x in r.json()["results"]])
    assert last_run(engine, tid, conv)["run"] == "full"
    build(post(client, key, conv, [(s, c, t + timedelta(minutes=5)) for s, c, t in evs[31:]], 31))
    assert last_run(engine, tid, conv)["run"] == "incremental"
    grown = read(engine, client, key, tid, conv)
    assert rebuilt(engine, client, key, tid, conv) == grown


def assertion_count(engine, tid: int, conv: str, pks: list[int] | None = None) -> int:
    with engine.connect() as conn:
        q = "SELECT count(*) FROM assertions WHERE tenant_id = :t AND conversation_id = :c"
        p: dict = {"t": tid, "c": conv}
        if pks is not None:
            q += " AND event_pk = ANY(:pks)"
            p["pks"] = pks
        return conn.execute(text(q), p).scalar()


def test_a_held_batch_reads_only_what_consolidation_changed(engine, client, tenant, short_lookahead):
    """The held assembly reads consolidation's rows inserted since its last batch: the batch's
    assertions and the reopened episodes, not the conversation's; after consolidation is rebuilt
    alone (every row under new ids) it reads everything again, and still ends equal to the rebuild."""
    tid, key = tenant
    conv = "gread"
    evs = items()
    build(post(client, key, conv, evs[:30], 0))
    build(post(client, key, conv, evs[30:48], 30))
    assert last_run(engine, tid, conv)["run"] == "incremental"
    pks = post(client, key, conv, evs[48:52], 48)
    build(pks)
    stats = last_run(engine, tid, conv)
    assert (stats["run"], stats["assembly"]) == ("incremental", "held")
    read_ = stats["consolidation_read"]
    assert 1 <= read_["assertions"] == assertion_count(engine, tid, conv, pks)
    assert read_["assertions"] < assertion_count(engine, tid, conv)
    assert 1 <= read_["episodes"] < stats["episodes"]
    rebuild("consolidate", tid, conv)  # every consolidation row rewritten; the graph's held read is stale
    build(post(client, key, conv, evs[52:], 52))
    stats = last_run(engine, tid, conv)
    assert (stats["run"], stats["assembly"]) == ("incremental", "held")
    assert stats["consolidation_read"]["assertions"] == assertion_count(engine, tid, conv)
    grown = read(engine, client, key, tid, conv)
    assert rebuilt(engine, client, key, tid, conv) == grown
