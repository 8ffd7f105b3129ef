"""Erasure is deliberate: the admin scope, a conversation scope (or an explicit all_conversations)
for a speaker, dry runs that count exactly what goes, and an audit log without the erased words."""
from __future__ import annotations

from sqlalchemy import text

from tests.support import auth

ADMIN = ("read", "write", "admin")


def post(client, key, events):
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["results"]]


def ev(i, conv, speaker, content):
    return {"conversation_id": conv, "event_id": f"{conv}-{i}", "speaker": speaker, "content": content,
            "occurred_at": f"2024-03-0{1 + i // 60}T10:{i % 60:02d}:00Z"}


def seed(client, key):
    """Two conversations in which `user` speaks, as role-named speakers do everywhere."""
    return post(client, key, [
        ev(0, "c1", "user", "my locker code is 4417"), ev(1, "c1", "assistant", "noted, locker code stored"),
        ev(2, "c1", "user", "also my bike is blue"),
        ev(0, "c2", "user", "the spare key is under the plant"), ev(1, "c2", "assistant", "got it"),
    ])


def build_layers(pks):
    from app.services.layers import embed_pending, run_for_pks

    embed_pending(pks)
    for layer in ("consolidate", "surprise", "engrams", "graph"):
        run_for_pks(layer, pks)


def events_of(engine, tid):
    with engine.connect() as conn:
        return conn.execute(text("SELECT conversation_id, speaker FROM events WHERE tenant_id = :t ORDER BY id"),
                            {"t": tid}).all()


def test_read_write_keys_cannot_erase(client, make_tenant, engine):
    tid, rw = make_tenant()
    seed(client, rw)
    for path in ("/v1/conversations/c1", "/v1/speakers/user?conversation_id=c1",
                 "/v1/speakers/user?all_conversations=true", "/v1/conversations/c1?dry_run=true"):
        r = client.delete(path, headers=auth(rw))
        assert r.status_code == 403 and "admin" in r.json()["detail"], path
    assert client.get("/v1/audit/erasures", headers=auth(rw)).status_code == 403
    assert len(events_of(engine, tid)) == 5


def test_speaker_erasure_needs_a_scope(client, make_tenant, engine):
    tid, key = make_tenant(ADMIN)
    seed(client, key)
    r = client.delete("/v1/speakers/user", headers=auth(key))
    assert r.status_code == 422
    assert [f["path"] for f in r.json()["fields"]] == ["conversation_id"]
    assert "all_conversations" in r.json()["fields"][0]["message"]
    r = client.delete("/v1/speakers/user?conversation_id=c1&all_conversations=true", headers=auth(key))
    assert r.status_code == 422 and r.json()["fields"][0]["path"] == "all_conversations"
    assert client.delete("/v1/speakers/user?everywhere=1&conversation_id=c1", headers=auth(key)).status_code == 422
    assert len(events_of(engine, tid)) == 5  # nothing went


def test_speaker_in_one_conversation_leaves_the_others(client, make_tenant, engine):
    tid, key = make_tenant(ADMIN)
    seed(client, key)
    r = client.delete("/v1/speakers/user?conversation_id=c1", headers=auth(key))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["deleted_events"] == 2 and body["conversations"] == ["c1"] and body["conversation_id"] == "c1"
    assert events_of(engine, tid) == [("c1", "assistant"), ("c2", "user"), ("c2", "assistant")]
    # a speaker who never spoke there: 404, nothing recorded
    assert client.delete("/v1/speakers/user?conversation_id=c1", headers=auth(key)).status_code == 404
    r = client.delete("/v1/speakers/user?all_conversations=true", headers=auth(key))
    assert r.status_code == 200 and r.json()["deleted_events"] == 1 and r.json()["all_conversations"] is True
    assert events_of(engine, tid) == [("c1", "assistant"), ("c2", "assistant")]


def test_dry_run_counts_exactly_what_the_erasure_deletes(client, make_tenant, engine):
    tid, key = make_tenant(ADMIN)
    pks = seed(client, key)
    build_layers(pks)
    dry = client.delete("/v1/conversations/c1?dry_run=true", headers=auth(key))
    assert dry.status_code == 200, dry.text
    d = dry.json()
    assert d["dry_run"] is True and d["audit_id"] is None and d["deleted_events"] == 3
    assert {"events", "embeddings", "indexing_state", "event_signals", "episodes", "layer_runs"} <= set(d["counts"])
    assert d["counts"]["events"] == 3 and d["counts"]["embeddings"] == 3
    assert len(events_of(engine, tid)) == 5  # nothing deleted
    assert client.get("/v1/audit/erasures", headers=auth(key)).json()["entries"] == []  # nothing recorded

    def rows(table):
        with engine.connect() as conn:
            return conn.execute(text(f"SELECT count(*) FROM {table} WHERE tenant_id = :t"), {"t": tid}).scalar_one()

    before = {t: rows(t) for t in d["counts"]}
    real = client.delete("/v1/conversations/c1", headers=auth(key)).json()
    assert real["counts"] == d["counts"] and real["dry_run"] is False and real["audit_id"] is not None
    assert {t: before[t] - rows(t) for t in d["counts"]} == d["counts"]  # exactly those rows went

    # a speaker: the same dry-run / real agreement, and what their conversations rebuild
    dry = client.delete("/v1/speakers/assistant?conversation_id=c2&dry_run=true", headers=auth(key)).json()
    real = client.delete("/v1/speakers/assistant?conversation_id=c2", headers=auth(key)).json()
    assert dry["counts"] == real["counts"] and real["counts"]["events"] == 1
    st = client.get("/v1/conversations/c2/status", headers=auth(key)).json()
    assert st["events"] == 1 and st["pending"]["graph"] == 1  # rebuilt without them


def test_audit_log_says_who_when_what_and_counts_never_the_words(client, make_tenant, engine):
    tid, key = make_tenant(ADMIN)
    seed(client, key)
    client.delete("/v1/speakers/user?conversation_id=c2", headers={**auth(key), "X-Request-ID": "req-erase-1"})
    client.delete("/v1/conversations/c1", headers=auth(key))
    page = client.get("/v1/audit/erasures", headers=auth(key)).json()
    first, second = page["entries"]  # newest first
    assert first["action"] == "conversation" and first["conversation_id"] == "c1" and first["counts"]["events"] == 3
    assert second["action"] == "speaker" and second["speaker"] == "user" and second["conversation_id"] == "c2"
    assert second["all_conversations"] is False and second["counts"]["events"] == 1
    assert second["request_id"] == "req-erase-1"
    prefix = key.split("_")[1]
    assert first["key_prefix"] == second["key_prefix"] == prefix and first["at"] >= second["at"]
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT x::text FROM erasure_audit x WHERE tenant_id = :t"), {"t": tid}).scalars()
        stored = " ".join(stored)
    for words in ("locker", "4417", "bike", "spare key", "plant"):
        assert words not in stored
    assert key not in stored  # the key's prefix, never the key
    # paged: one at a time, the cursor continues
    p1 = client.get("/v1/audit/erasures?limit=1", headers=auth(key)).json()
    p2 = client.get("/v1/audit/erasures", params={"limit": 1, "cursor": p1["next_cursor"]}, headers=auth(key)).json()
    assert [e["id"] for e in p1["entries"] + p2["entries"]] == [first["id"], second["id"]]
    assert p2["next_cursor"] is None


def test_audit_survives_the_key_being_revoked(client, make_tenant, engine):
    from app.storage import tenants

    tid, key = make_tenant(ADMIN)
    seed(client, key)
    client.delete("/v1/conversations/c2", headers=auth(key))
    with engine.begin() as conn:
        tenants.revoke_key(conn, tenants.split_key(key))
        other = tenants.create_key(conn, tid, scopes=ADMIN)
    entries = client.get("/v1/audit/erasures", headers=auth(other)).json()["entries"]
    assert [(e["key_prefix"], e["conversation_id"]) for e in entries] == [(key.split("_")[1], "c2")]


def test_the_sdk_erases_deliberately_too(make_tenant):
    """The SDK's methods (async client, in-process transport): dry run, a scoped speaker, the
    refusal of a read/write key as PermissionDenied, the language and the status."""
    import anyio
    import httpx

    from app.api.main import app
    from palimpsest.client import AsyncPalimpsest, errors

    _, key = make_tenant(ADMIN)
    _, rw = make_tenant()

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        async with AsyncPalimpsest("http://sdk.test", key, transport=transport) as pal, \
                AsyncPalimpsest("http://sdk.test", rw, transport=transport, max_retries=0) as agent:
            for conv in ("c1", "c2"):
                await pal.add_event(conv, "user", f"hello from {conv}")
            dry = await pal.delete_conversation("c1", dry_run=True)
            assert dry.model_extra["dry_run"] is True and dry.model_extra["counts"]["events"] == 1
            gone = await pal.forget_speaker("user", conversation_id="c2")
            assert gone.model_extra["deleted_events"] == 1 and gone.model_extra["conversations"] == ["c2"]
            try:
                await agent.forget_speaker("user", all_conversations=True)
                raise AssertionError("a read/write key erased")
            except errors.PermissionDenied:
                pass
            assert (await pal.set_language("pt-BR"))["text_search"] == "simple"
            st = await pal.service_status()
            assert st["language"] == "pt-BR" and "admin" in st["scopes"] and st["layers"]["graph"]["state"] == "skipped"
            assert [e.content for e in (await pal.list_events("c1")).events] == ["hello from c1"]

    anyio.run(run)
