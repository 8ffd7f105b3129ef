"""Reliability and security promises that need no extra processes: limits, deletion, backup/restore."""
from __future__ import annotations

import json

from sqlalchemy import text
from typer.testing import CliRunner

from app.cli import app as cli
from tests.support import auth


def post(client, key, events):
    return client.post("/v1/events", json={"events": events}, headers=auth(key))


def ev(i, conv="c", speaker="Ana", **kw):
    return {"conversation_id": conv, "event_id": str(i), "speaker": speaker, "content": f"message {i}",
            "occurred_at": f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z", **kw}


def test_body_over_limit_is_413(client, tenant):
    _, key = tenant
    big = "x" * (9 * 1024 * 1024)
    r = client.post("/v1/events", content=json.dumps({"events": [ev(1, content=big)]}),
                    headers={**auth(key), "content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"] == "payload_too_large"


def test_deep_metadata_and_invalid_utf8_are_422(client, tenant):
    _, key = tenant
    deep: dict = {}
    node = deep
    for _ in range(100):
        node["a"] = {}
        node = node["a"]
    r = post(client, key, [ev(1, metadata=deep)])
    assert r.status_code == 422 and r.json()["fields"][0]["path"] == "events[0].metadata"
    raw = b'{"events":[{"conversation_id":"c","speaker":"a","content":"\xff\xfe bad"}]}'
    r = client.post("/v1/events", content=raw, headers={**auth(key), "content-type": "application/json"})
    assert r.status_code == 422 and r.json()["fields"][0]["path"] == "body"  # unreadable body: a 4xx, never a 500


def test_nul_bytes_rejected_and_odd_text_round_trips(client, tenant):
    _, key = tenant
    r = post(client, key, [ev(1, content="a\x00b")])
    assert r.status_code == 422 and r.json()["fields"][0]["path"] == "events[0].content"
    odd = ["مرحبا بالعالم ‏(RTL)‏", "👩‍👩‍👧‍👦 family emoji", "e\u0301 combining", "\U0001F600" * 50, "tab\tand\r\nCRLF"]
    res = post(client, key, [ev(i, content=t) for i, t in enumerate(odd)]).json()["results"]
    for r_, t in zip(res, odd):
        got = client.get(f"/v1/events/{r_['id']}", headers=auth(key)).json()["content"]
        assert got.encode() == t.encode()


def test_extreme_timestamps(client, tenant):
    _, key = tenant
    r = post(client, key, [ev(1, occurred_at="0001-01-01T00:00:00Z"), ev(2, occurred_at="9999-12-31T23:59:59Z")])
    assert r.status_code == 200
    ids = [x["id"] for x in r.json()["results"]]
    got = [client.get(f"/v1/events/{i}", headers=auth(key)).json()["occurred_at"] for i in ids]
    assert got == ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]


def _traces(engine, pks: list[int], needle: str) -> dict[str, int]:
    """Rows in any table of the schema that reference the events or contain the text."""
    found = {}
    with engine.connect() as conn:
        tables = [r[0] for r in conn.execute(text(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_type = 'BASE TABLE' AND table_name <> 'alembic_version'"))]
        for t in tables:
            cols = {r[0] for r in conn.execute(text(
                "SELECT column_name FROM information_schema.columns WHERE table_name = :t"), {"t": t})}
            n = conn.execute(text(f'SELECT count(*) FROM "{t}" x WHERE x::text LIKE :needle'),
                             {"needle": f"%{needle}%"}).scalar_one()
            for col in ("event_pk", "event_id_pk", "source_event_pk", "superseded_by_event_pk", "earlier_event_pk",
                        "later_event_pk", "src_event_pk", "dst_event_pk"):
                if col in cols:
                    n += conn.execute(text(f'SELECT count(*) FROM "{t}" WHERE {col} = ANY(:p)'), {"p": pks}).scalar_one()
            for col in ("event_pks", "summary_event_pks"):  # id arrays (episodes)
                if col in cols:
                    n += conn.execute(text(f'SELECT count(*) FROM "{t}" WHERE {col} && CAST(:p AS bigint[])'),
                                      {"p": pks}).scalar_one()
            if n:
                found[t] = n
    return found


def test_forget_conversation_and_speaker_leave_no_trace(client, make_tenant, engine):
    from app.services.layers import embed_pending, run_for_pks

    _, key = make_tenant(scopes=("read", "write", "admin"))  # erasure needs the admin scope
    res = post(client, key, [ev(1, conv="gone", content="zebra-umbrella secret one"),
                             ev(2, conv="gone", speaker="Bo", content="zebra-umbrella secret two"),
                             ev(3, conv="kept", speaker="Cy", content="ordinary words"),
                             ev(4, conv="kept", speaker="Dee", content="quokka-lantern private")]).json()["results"]
    pks = [r["id"] for r in res]
    embed_pending(pks)  # the derived layers exist before the delete
    for layer in ("consolidate", "surprise", "engrams", "graph"):
        assert run_for_pks(layer, pks)["done"] == 2, layer
    found = _traces(engine, pks[:2], "zebra-umbrella")
    assert {"episodes", "graph_nodes", "graph_edges", "event_signals"} <= set(found), found
    assert {"graph_nodes", "episodes"} <= set(_traces(engine, pks[3:], "quokka-lantern"))
    r = client.delete("/v1/conversations/gone", headers=auth(key))
    assert r.status_code == 200 and r.json()["deleted_events"] == 2 and r.json()["dry_run"] is False
    assert _traces(engine, pks[:2], "zebra-umbrella") == {}
    assert client.delete("/v1/conversations/gone", headers=auth(key)).status_code == 404

    r = client.delete("/v1/speakers/Dee", params={"all_conversations": "true"}, headers=auth(key))
    assert r.status_code == 200 and r.json()["deleted_events"] == 1 and r.json()["conversations"] == ["kept"]
    assert _traces(engine, pks[3:], "quokka-lantern") == {}
    assert client.get(f"/v1/events/{pks[2]}", headers=auth(key)).status_code == 200
    # the speaker's conversation rebuilds its conversation-level layers without them
    st = client.get("/v1/conversations/kept/status", headers=auth(key)).json()
    assert st["events"] == 1 and all(st["pending"][layer] == 1 for layer in ("consolidate", "graph", "engrams"))


def test_other_tenant_cannot_delete(client, make_tenant):
    _, a = make_tenant(scopes=("read", "write", "admin"))
    _, b = make_tenant()
    post(client, b, [ev(1, conv="theirs")])
    assert client.delete("/v1/conversations/theirs", headers=auth(a)).status_code == 404
    assert client.delete("/v1/speakers/Ana?all_conversations=true", headers=auth(a)).status_code == 404
    assert client.get("/v1/conversations/theirs/status", headers=auth(b)).json()["events"] == 1


def test_rate_limit_answers_429_with_retry_after(client, tenant, monkeypatch):
    from app.settings import get_settings

    _, key = tenant
    monkeypatch.setattr(get_settings(), "rate_limit_per_minute", 3)
    codes = [client.get("/v1/conversations/x/status", headers=auth(key)).status_code for _ in range(5)]
    assert codes[:3] == [404, 404, 404] and 429 in codes[3:]  # no such conversation: counted all the same
    r = client.get("/v1/conversations/x/status", headers=auth(key))
    assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 60


def test_export_then_import_round_trips(client, make_tenant, tmp_path, engine):
    from app.storage import tenants as store

    src_id, key = make_tenant()
    events = [ev(i, conv=f"c{i % 2}", metadata={"i": i}, content=f"verbatim ✓ {i}") for i in range(7)]
    events.append({"conversation_id": "c0", "speaker": "NoId", "content": "an event without a client id"})
    assert post(client, key, events).status_code == 200
    with engine.connect() as conn:
        name = conn.execute(text("SELECT name FROM tenants WHERE id = :i"), {"i": src_id}).scalar_one()
    dump = tmp_path / "dump.jsonl"
    runner = CliRunner()
    r = runner.invoke(cli, ["export", "--tenant", name, "--out", str(dump)])
    assert r.exit_code == 0, r.output
    lines = dump.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8

    r = runner.invoke(cli, ["import", str(dump), "--tenant", name + "-restored"])
    assert r.exit_code == 0 and "imported 8 events" in r.output, r.output
    r = runner.invoke(cli, ["import", str(dump), "--tenant", name + "-restored"])
    assert "imported 0 events (8 already present)" in r.output, r.output  # the id-less one got a derived id
    with engine.begin() as conn:
        new_id = store.create_tenant(conn, name + "-restored")
        new_key = store.create_key(conn, new_id)
    r2 = runner.invoke(cli, ["export", "--tenant", name + "-restored", "--out", str(tmp_path / "again.jsonl")])
    assert r2.exit_code == 0
    again = (tmp_path / "again.jsonl").read_text(encoding="utf-8").splitlines()
    # byte-identical records, each once (the event posted without an id carries the derived one)
    assert sorted(again) == sorted(lines)
    assert any('"event_id": "sdk1-' in line for line in lines)
    st = client.get("/v1/conversations/c1/status", headers=auth(new_key)).json()
    assert st["events"] == 3 and st["pending"]["embed"] == 3  # layers will rebuild
