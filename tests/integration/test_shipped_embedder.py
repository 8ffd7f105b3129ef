"""The shipped embedder (migration 0013, docs/models.md "Embedder") against the real database: an
upgraded database re-encodes what the old default encoded and leaves a model of one's own alone; a
fresh stack says which model its vectors come from."""
from __future__ import annotations

from sqlalchemy import text

from tests.support import auth


def test_migration_0013_reembeds_the_old_defaults_vectors_only(database_url):
    from app.storage.migrate import downgrade, upgrade
    from tests.support import scratch_database

    vector = "array_fill(0.1, ARRAY[384])::vector"
    with scratch_database(database_url, "mig") as (url, eng):
        upgrade(url, "0012")
        with eng.begin() as c:
            t = c.execute(text("INSERT INTO tenants (name) VALUES ('m') RETURNING id")).scalar_one()
            pks = [c.execute(text("INSERT INTO events (tenant_id, conversation_id, speaker, content, occurred_at) "
                                  "VALUES (:t, 'c', 'Ana', :x, now()) RETURNING id"), {"t": t, "x": x}).scalar_one()
                   for x in ("I moved to Lisbon.", "We adopted a greyhound.", "My own model encoded this.")]
            for pk, model in zip(pks, ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "my-model")):
                c.execute(text(f"INSERT INTO embeddings (event_pk, model, tenant_id, conversation_id, embedding) "
                               f"VALUES (:pk, :m, :t, 'c', {vector})"), {"pk": pk, "m": model, "t": t})
            c.execute(text("UPDATE indexing_state SET done_at = now() WHERE layer = 'embed'"))
            c.execute(text("INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, done_at) "
                           "SELECT id, 'embed', tenant_id, conversation_id, now() FROM events "
                           "ON CONFLICT DO NOTHING"))

        def state():  # noqa: ANN202
            with eng.connect() as c:
                models = dict(c.execute(text("SELECT event_pk, model FROM embeddings")).all())
                pending = set(c.execute(text("SELECT event_pk FROM indexing_state WHERE layer = 'embed' "
                                             "AND done_at IS NULL")).scalars())
            return models, pending

        upgrade(url, "0013")
        models, pending = state()
        assert models == {pks[2]: "my-model"}  # the old default's vectors are gone, the user's own stay
        assert pending == {pks[0], pks[1]}  # and exactly their events are to be encoded again
        with eng.begin() as c:  # the worker re-encodes them with the shipped model
            for pk in pks[:2]:
                c.execute(text(f"INSERT INTO embeddings (event_pk, model, tenant_id, conversation_id, embedding) "
                               f"VALUES (:pk, 'palimpsest-minilm-v1', :t, 'c', {vector})"), {"pk": pk, "t": t})
            c.execute(text("UPDATE indexing_state SET done_at = now() WHERE layer = 'embed'"))
        downgrade(url, "0012")
        models, pending = state()
        assert models == {pks[2]: "my-model"} and pending == {pks[0], pks[1]}


def test_a_fresh_stack_encodes_with_the_shipped_model_and_finds_by_meaning(client, engine):
    """What a user of a fresh clone sees: /v1/status names the shipped model, and a question that
    shares no word with its answer finds it through the dense signal."""
    from tests.support import new_tenant

    _, key = new_tenant(engine)
    r = client.get("/v1/status", headers=auth(key))
    assert r.status_code == 200 and r.json()["embedding_model"] == "palimpsest-minilm-v1"
    turns = [("Ana", "The weather was awful all weekend."), ("Ben", "We finally adopted a greyhound from the shelter!"),
             ("Ana", "My sister started a new job in Lisbon."), ("Ben", "Traffic on the bridge was terrible today.")]
    events = [{"conversation_id": "pets", "event_id": f"t{i}", "speaker": s, "content": c,
               "occurred_at": f"2024-05-0{i + 1}T10:00:00Z"}
              for i, (s, c) in enumerate(turns)]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    from app.services.layers import embed_pending

    embed_pending([x["id"] for x in r.json()["results"]])
    r = client.post("/v1/query", json={"query": "Which dog breed is their new pet?", "conversation_id": "pets",
                                       "pipeline": {"lexical": False}}, headers=auth(key))
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert items and items[0]["event_id"] == "t1" and set(items[0]["signals"]) == {"dense"}
