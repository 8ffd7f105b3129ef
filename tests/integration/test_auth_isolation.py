"""API keys and tenant isolation: a key only ever reaches its own tenant's data."""
from __future__ import annotations

from sqlalchemy import select

from app.storage import tenants
from app.storage.models import ApiKey
from tests.support import auth


def seed(client, key, conv="shared-name"):
    r = client.post("/v1/events", headers=auth(key), json={"events": [
        {"conversation_id": conv, "event_id": "1", "speaker": "Zed", "content": "my secret password is swordfish"},
    ]})
    assert r.status_code == 200
    return r.json()["results"][0]["id"]


def test_tenant_a_never_sees_tenant_b(client, make_tenant):
    _, key_a = make_tenant()
    _, key_b = make_tenant()
    b_id = seed(client, key_b)
    seed(client, key_a, conv="a-conv")
    # get by a guessed id of B's event
    assert client.get(f"/v1/events/{b_id}", headers=auth(key_a)).status_code == 404
    # list and status of B's conversation name
    page = client.get("/v1/conversations/shared-name/events", headers=auth(key_a)).json()
    assert page["events"] == []
    st = client.get("/v1/conversations/shared-name/status", headers=auth(key_a)).json()
    assert st["events"] == 0 and st["pending"]["embed"] == 0
    # query, scoped and unscoped
    for body in ({"query": "secret password swordfish"}, {"query": "swordfish", "conversation_id": "shared-name"}):
        items = client.post("/v1/query", headers=auth(key_a), json=body).json()["items"]
        assert all(it["conversation_id"] == "a-conv" for it in items)
        assert b_id not in [it["id"] for it in items]
    # and B still sees its own
    assert client.get(f"/v1/events/{b_id}", headers=auth(key_b)).status_code == 200


def test_same_client_event_id_in_two_tenants_are_two_events(client, make_tenant):
    _, key_a = make_tenant()
    _, key_b = make_tenant()
    assert seed(client, key_a) != seed(client, key_b)


def test_missing_malformed_and_wrong_keys_are_401(client, tenant):
    _, key = tenant
    assert client.get("/v1/conversations/x/status").status_code == 401
    assert client.get("/v1/conversations/x/status", headers=auth("nonsense")).status_code == 401
    forged = key[:-4] + ("aaaa" if not key.endswith("aaaa") else "bbbb")
    assert client.get("/v1/conversations/x/status", headers=auth(forged)).status_code == 401
    assert client.get("/v1/conversations/x/status", headers={"Authorization": f"Basic {key}"}).status_code == 401


def test_revoked_key_is_refused_at_once(client, tenant, engine):
    _, key = tenant
    assert client.get("/v1/conversations/x/status", headers=auth(key)).status_code == 200
    with engine.begin() as conn:
        assert tenants.revoke_key(conn, tenants.split_key(key))
    assert client.get("/v1/conversations/x/status", headers=auth(key)).status_code == 401


def test_read_only_key_cannot_write(client, make_tenant):
    _, key = make_tenant(scopes=("read",))
    r = client.post("/v1/events", headers=auth(key), json={"events": [
        {"conversation_id": "c", "speaker": "a", "content": "hi"}]})
    assert r.status_code == 403
    assert client.post("/v1/query", headers=auth(key), json={"query": "hi"}).status_code == 200


def test_keys_are_stored_hashed(engine, tenant):
    _, key = tenant
    with engine.connect() as conn:
        row = conn.execute(select(ApiKey.key_hash, ApiKey.prefix).where(ApiKey.prefix == tenants.split_key(key))).one()
    assert key not in row.key_hash and row.key_hash == tenants.hash_key(key)


def test_bootstrap_key_is_idempotent(engine):
    key = tenants.new_key()
    with engine.begin() as conn:
        t1 = tenants.ensure_bootstrap_key(conn, "boot", key)
        t2 = tenants.ensure_bootstrap_key(conn, "boot", key)
        assert t1 == t2
        assert tenants.authenticate(conn, key).scopes == ("read", "write", "admin")
