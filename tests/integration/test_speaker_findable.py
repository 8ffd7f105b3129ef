"""Issue #17 items 8 and 6 against the real database: a name is not a match (the speaker is no
word of the lexical index nor of the vector's text), and a turn is findable by its session's date
and, with `findable_previous`, by the turn it answers: a field of its own beside its verbatim words
(migration 0012)."""
from __future__ import annotations


import pytest
from sqlalchemy import text

from tests.support import auth

CONV = "daniel-moves"
TURNS = [
    ("Ana", "Where do you live these days, Daniel?", "2024-05-06T09:00:00Z"),
    ("Daniel", "How are you finding it?", "2024-05-06T09:01:00Z"),
    ("Ana", "Did you make it to Paris in the end?", "2024-05-06T09:02:00Z"),
    ("Daniel", "Yes, in May! I moved to a flat near the canal.", "2024-05-06T09:03:00Z"),
]


def _post(client, key, conv=CONV, turns=TURNS):
    events = [{"conversation_id": conv, "speaker": s, "content": c, "occurred_at": t} for s, c, t in turns]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    pks = [x["id"] for x in r.json()["results"]]
    from app.services.layers import embed_pending

    assert embed_pending(pks) == len(pks)
    return pks


def test_a_name_alone_does_not_find_a_turn_lexically(client, tenant, engine):
    """Daniel's "How are you finding it?" does not mention Daniel: asking for Daniel by name finds
    only the turn whose words say "Daniel" (Ana's question), not every turn Daniel spoke."""
    from app.services.retrievers import lexical_signal
    from app.storage.candidates import Scope

    tid, key = tenant
    pks = _post(client, key)
    with engine.connect() as conn:
        hits = [pk for pk, _ in lexical_signal(conn, Scope(tid, CONV), "Daniel", 10)]
        speaker_kept = conn.execute(text("SELECT speaker FROM events WHERE id = :pk"), {"pk": pks[1]}).scalar_one()
    assert hits == [pks[0]]
    assert speaker_kept == "Daniel"  # the speaker stays a field of its own


def test_the_vector_encodes_the_words_alone(client, tenant, engine):
    """The stored vector of a turn is the embedder's vector of its content, without "Speaker: "."""
    import numpy as np

    from app.adapters.embedder import get_embedder
    from app.storage.vectors import vectors_for

    _, key = tenant
    pks = _post(client, key, conv="vec")
    emb = get_embedder()
    with engine.connect() as conn:
        stored = vectors_for(conn, [pks[1]], emb.name)[pks[1]]
    words, named = emb.encode(["How are you finding it?", "Daniel: How are you finding it?"])
    assert float(np.dot(stored, words)) > 0.999 > float(np.dot(stored, named))


@pytest.fixture
def previous(monkeypatch):
    """The setting `findable_previous` on for one test."""
    from app.settings import get_settings

    monkeypatch.setenv("PALIMPSEST_FINDABLE_PREVIOUS", "true")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("PALIMPSEST_FINDABLE_PREVIOUS")
    get_settings.cache_clear()


def test_a_turn_is_findable_by_its_session_date_by_default(client, tenant, engine):
    """By default the findable field holds the session's date in a question's words, not the turn
    before (that measured worse on BEAM); the content is unchanged."""
    from app.storage.candidates import Scope
    from app.storage.findable import findable_candidates

    tid, key = tenant
    pks = _post(client, key, conv="dated")
    with engine.connect() as conn:
        findable = conn.execute(text("SELECT findable FROM event_signals WHERE event_pk = :pk"),
                                {"pk": pks[3]}).scalar_one()
        paris = findable_candidates(conn, Scope(tid, "dated"), "When did they get to Paris?")
        monday = [pk for pk, _ in findable_candidates(conn, Scope(tid, "dated"), "what was said on Monday")]
    assert findable == "6 May 2024 ; May 2024 ; Monday"
    assert paris == [] and sorted(monday) == sorted(pks)


def test_a_turn_is_findable_by_the_turn_it_answers(client, tenant, engine, previous):
    """"Yes, in May!" says nothing of Paris; the turn it answers does. With `findable_previous` the
    findable field holds that turn and the session's date, searchable; the content is unchanged."""
    from app.storage.candidates import Scope
    from app.storage.findable import findable_candidates

    tid, key = tenant
    pks = _post(client, key, conv="paris")
    with engine.connect() as conn:
        content, findable = conn.execute(text(
            "SELECT e.content, s.findable FROM events e JOIN event_signals s ON s.event_pk = e.id WHERE e.id = :pk"),
            {"pk": pks[3]}).one()
        paris = [pk for pk, _ in findable_candidates(conn, Scope(tid, "paris"), "When did they get to Paris?")]
        monday = [pk for pk, _ in findable_candidates(conn, Scope(tid, "paris"), "what was said on Monday")]
    assert content == "Yes, in May! I moved to a flat near the canal."
    assert findable == "Did you make it to Paris in the end? ; 6 May 2024 ; May 2024 ; Monday"
    assert paris == [pks[3]]
    assert sorted(monday) == sorted(pks)


def test_the_query_service_gathers_the_findable_signal(client, tenant, previous):
    _, key = tenant
    pks = _post(client, key, conv="paris-api")
    r = client.post("/v1/query", json={"query": "Did they get to Paris?", "conversation_id": "paris-api",
                                       "top_k": 4}, headers=auth(key))
    assert r.status_code == 200, r.text
    found = {i["id"]: i["signals"] for i in r.json()["items"]}
    assert found[pks[3]]["findable"]["rank"] == 1


def test_forgetting_a_speaker_takes_their_words_out_of_the_next_turn(client, make_tenant, engine, previous):
    """The findable text quotes the turn before: after Ana is forgotten, Daniel's turns no longer hold
    her words."""
    tid, key = make_tenant(("read", "write", "admin"))
    _post(client, key, conv="forget")
    with engine.connect() as conn:
        before = conn.execute(text("SELECT s.findable FROM event_signals s JOIN events e ON e.id = s.event_pk "
                                   "WHERE e.tenant_id = :t AND e.speaker = 'Daniel'"), {"t": tid}).scalars().all()
    assert any("Paris" in b for b in before)
    r = client.request("DELETE", "/v1/speakers/Ana", params={"conversation_id": "forget"}, headers=auth(key))
    assert r.status_code == 200, r.text
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT s.findable FROM events e JOIN event_signals s ON s.event_pk = e.id "
                                 "WHERE e.tenant_id = :t ORDER BY e.occurred_at"), {"t": tid}).scalars().all()
    assert rows and not any("Paris" in r or "Where do you live" in r for r in rows)


def test_migration_0012_upgrades_an_existing_database(database_url):
    """A database at 0011 with events, vectors and done outbox rows: after 0012 the lexical index
    holds no speaker name, each event has its findable text, and every vector is to be re-encoded
    (deleted, `embed` pending). The downgrade puts the name back."""
    from app.storage.migrate import downgrade, upgrade
    from tests.support import scratch_database

    with scratch_database(database_url, "mig") as (url, eng):
        upgrade(url, "0011")
        with eng.begin() as c:
            t = c.execute(text("INSERT INTO tenants (name) VALUES ('m') RETURNING id")).scalar_one()
            pks = [c.execute(text(
                "INSERT INTO events (tenant_id, conversation_id, speaker, content, occurred_at) "
                "VALUES (:t, 'c', :s, :x, :at) RETURNING id"), {"t": t, "s": s, "x": x, "at": at}).scalar_one()
                for s, x, at in TURNS]
            c.execute(text("INSERT INTO embeddings (event_pk, model, tenant_id, conversation_id, embedding) "
                           "SELECT id, 'm', tenant_id, conversation_id, array_fill(0.1, ARRAY[384])::vector "
                           "FROM events"))
            c.execute(text("INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, done_at) "
                           "SELECT id, 'embed', tenant_id, conversation_id, now() FROM events"))
            old = c.execute(text("SELECT search_tsv::text FROM events WHERE id = :pk"), {"pk": pks[1]}).scalar_one()
        assert "daniel" in old
        upgrade(url, "0012")
        with eng.connect() as c:
            tsv = c.execute(text("SELECT search_tsv::text FROM events WHERE id = :pk"), {"pk": pks[1]}).scalar_one()
            findable = c.execute(text("SELECT findable FROM event_signals WHERE event_pk = :pk"),
                                 {"pk": pks[3]}).scalar_one()
            vectors = c.execute(text("SELECT count(*) FROM embeddings")).scalar_one()
            pending = c.execute(text("SELECT count(*) FROM indexing_state WHERE layer = 'embed' "
                                     "AND done_at IS NULL")).scalar_one()
        assert "daniel" not in tsv and "find" in tsv
        assert findable == "6 May 2024 ; May 2024 ; Monday"
        assert vectors == 0 and pending == len(TURNS)
        downgrade(url, "0011")
        with eng.connect() as c:
            back = c.execute(text("SELECT search_tsv::text FROM events WHERE id = :pk"), {"pk": pks[1]}).scalar_one()
        assert back == old
