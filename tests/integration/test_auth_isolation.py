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
    st = client.get("/v1/conversations/shared-name/status", headers=auth(key_a))
    assert st.status_code == 404 and st.json()["error"] == "not_found"  # as if B's did not exist
    assert "'shared-name'" in st.json()["detail"] and "swordfish" not in st.text
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
    assert client.get("/v1/conversations/x/status", headers=auth(key)).status_code == 404  # the key passes
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


# ---------------------------------------------------------------- erasure through the tenant matrix

ERASURES = [  # (path, what a successful call deletes of `seed`'s single event)
    "/v1/conversations/shared-name",
    "/v1/speakers/Zed?conversation_id=shared-name",
    "/v1/speakers/Zed?all_conversations=true",
]


def test_erasure_through_the_tenant_matrix(client, make_tenant):
    """Per key kind: read and read+write keys are refused (403) and delete nothing, dry run included;
    another tenant's admin key finds nothing to erase (404) and reads none of this tenant's audit;
    this tenant's admin key erases, and its audit shows exactly that."""
    owner_id, owner_rw = make_tenant()
    _, read_only = make_tenant(scopes=("read",))
    _, other_admin = make_tenant(scopes=("read", "write", "admin"))
    for path in ERASURES:
        b_id = seed(client, owner_rw)
        for key, code in ((read_only, 403), (owner_rw, 403), (other_admin, 404)):
            for dry in ("", "&dry_run=true" if "?" in path else "?dry_run=true"):
                assert client.delete(path + dry, headers=auth(key)).status_code == code, (path, dry, code)
        assert client.get(f"/v1/events/{b_id}", headers=auth(owner_rw)).status_code == 200  # still there
        assert client.get("/v1/audit/erasures", headers=auth(other_admin)).json()["entries"] == []
        assert client.get("/v1/audit/erasures", headers=auth(owner_rw)).status_code == 403
    # the owner's admin key (a second key of the same tenant) erases
    from app.storage import tenants as tenant_store
    from app.storage.db import get_engine

    with get_engine().begin() as conn:
        owner_admin = tenant_store.create_key(conn, owner_id, scopes=("read", "write", "admin"))
    for path in ERASURES:
        seed(client, owner_rw)
        r = client.delete(path, headers=auth(owner_admin))
        assert r.status_code == 200 and r.json()["deleted_events"] == 1, (path, r.text)
    entries = client.get("/v1/audit/erasures", headers=auth(owner_admin)).json()["entries"]
    assert [e["action"] for e in entries] == ["speaker", "speaker", "conversation"]
    assert client.get("/v1/audit/erasures", headers=auth(other_admin)).json()["entries"] == []


def test_language_setting_through_the_tenant_matrix(client, make_tenant):
    """The tenant's language needs admin; a conversation's, write; neither reaches another tenant."""
    _, read_only = make_tenant(scopes=("read",))
    _, rw = make_tenant()
    _, other_admin = make_tenant(scopes=("read", "write", "admin"))
    assert client.put("/v1/settings/language", json={"language": "de"}, headers=auth(rw)).status_code == 403
    assert client.put("/v1/settings/language", json={"language": "de", "conversation_id": "c"},
                      headers=auth(read_only)).status_code == 403
    r = client.put("/v1/settings/language", json={"language": "de", "conversation_id": "c"}, headers=auth(rw))
    assert r.status_code == 200 and r.json()["language"] == "de"
    assert client.put("/v1/settings/language", json={"language": "pt-BR"}, headers=auth(other_admin)).status_code == 200
    assert client.get("/v1/status", headers=auth(rw)).json()["language"] == "en"  # the other's tenant is its own
    assert client.get("/v1/status", headers=auth(rw)).json()["conversations"] == {
        "c": {"language": "de", "text_search": "simple", "skipped_layers": ["engrams", "graph", "surprise"]}}
    assert client.get("/v1/status", headers=auth(other_admin)).json()["language"] == "pt-BR"


def test_a_request_checks_out_one_connection_for_its_key_and_its_work(client, tenant):
    from sqlalchemy import event

    from app.storage.db import get_engine

    _, key = tenant
    seed(client, key, conv="one-conn")
    checkouts = []
    listener = lambda *_: checkouts.append(1)  # noqa: E731
    event.listen(get_engine(), "checkout", listener)
    try:
        r = client.post("/v1/query", headers=auth(key), json={"query": "password", "conversation_id": "one-conn"})
    finally:
        event.remove(get_engine(), "checkout", listener)
    assert r.status_code == 200 and r.json()["items"]
    assert len(checkouts) == 1  # the key is read in the request's own transaction
    checkouts.clear()
    event.listen(get_engine(), "checkout", listener)
    try:
        r = client.post("/v1/query", json={"query": "password", "conversation_id": "one-conn"})
    finally:
        event.remove(get_engine(), "checkout", listener)
    assert r.status_code == 401 and r.json()["detail"] == "missing bearer API key"
    assert checkouts == []  # a request without a key is refused before a connection is taken
