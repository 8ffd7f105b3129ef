"""A non-English tenant, end to end through the HTTP API: the language setting, events with accents
stored byte-exact, found lexically ('simple' text search) and densely, the English-only rule layers
skipped with their reason (and /v1/status saying so), no 5xx anywhere; English tenants unchanged."""
from __future__ import annotations

import unicodedata
from urllib.parse import quote

from sqlalchemy import text

from tests.support import auth

ADMIN = ("read", "write", "admin")
CONV = "gespräch-köln"  # the conversation id has accents too
GERMAN = [
    ("Jörg", "Übermorgen fliege ich mit meiner Großmutter nach Köln, um den Dom zu besichtigen."),
    ("Anaïs", "Schön! Vergiss nicht, im Brauhaus Früh ein Kölsch zu trinken."),
    ("Jörg", unicodedata.normalize("NFD", "Meine Schwester arbeitet jetzt als Ärztin in Zürich.")),  # decomposed
    ("Anaïs", "Der Straßenverkehr in München war heute furchtbar, über zwei Stunden Stau."),
    ("Jörg", "Ich habe gestern einen Apfelstrudel gebacken, mit Zimt und Rosinen."),
]
PORTUGUESE = [("João", "Amanhã vou visitar a minha avó em Belém e comer pastéis de nata.")]


def ok(r):
    assert r.status_code < 500, (r.status_code, r.text)
    assert r.status_code == 200, (r.status_code, r.text)
    return r.json()


def post(client, key, conv, turns):
    events = [{"conversation_id": conv, "speaker": s, "content": c, "occurred_at": f"2024-05-0{i + 1}T09:00:00Z"}
              for i, (s, c) in enumerate(turns)]
    return [x["id"] for x in ok(client.post("/v1/events", json={"events": events}, headers=auth(key)))["results"]]


def build(pks):
    from app.services.layers import embed_pending, run_for_pks

    assert embed_pending(pks) == len(pks)
    return {layer: run_for_pks(layer, pks) for layer in ("gate", "consolidate", "surprise", "engrams", "graph")}


def query(client, key, q, conv=CONV):
    return ok(client.post("/v1/query", json={"query": q, "conversation_id": conv, "top_k": 5}, headers=auth(key)))


def first(res, signal):
    """The item the signal ranked first."""
    return next((i["id"] for i in res["items"] if i["signals"].get(signal, {}).get("rank") == 1), None)


def test_a_german_conversation_end_to_end(client, make_tenant, engine):
    tid, key = make_tenant(ADMIN)
    out = ok(client.put("/v1/settings/language", json={"language": "de"}, headers=auth(key)))
    assert out == {"language": "de", "text_search": "simple", "conversation_id": None, "rebuilt_conversations": []}
    pks = post(client, key, CONV, GERMAN)

    # stored byte-exact: content, speaker and conversation id, the decomposed umlaut kept decomposed
    for pk, (speaker, content) in zip(pks, GERMAN):
        got = ok(client.get(f"/v1/events/{pk}", headers=auth(key)))
        assert got["content"].encode() == content.encode() and got["speaker"].encode() == speaker.encode()
        assert got["conversation_id"] == CONV
    page = ok(client.get(f"/v1/conversations/{quote(CONV)}/events", headers=auth(key)))
    assert [e["content"] for e in page["events"]] == [c for _, c in GERMAN]

    # the layers: the language-neutral ones run, the English-only ones are skipped with their reason
    runs = build(pks)
    assert all(r["done"] == 1 for layer, r in runs.items() if layer != "gate"), runs
    st = ok(client.get(f"/v1/conversations/{quote(CONV)}/status", headers=auth(key)))
    assert st["events"] == 5 and set(st["pending"].values()) == {0}  # nothing left waiting
    with engine.connect() as conn:
        stats = dict(conn.execute(text("SELECT layer, stats FROM layer_runs WHERE tenant_id = :t AND "
                                       "conversation_id = :c"), {"t": tid, "c": CONV}).all())
        configs = set(conn.execute(text("SELECT search_config::text FROM events WHERE tenant_id = :t"),
                                   {"t": tid}).scalars())
        entities = conn.execute(text("SELECT count(*) FROM graph_nodes WHERE tenant_id = :t"), {"t": tid}).scalar_one()
    assert configs == {"simple"}
    for layer in ("surprise", "engrams", "graph"):
        assert "skipped for language 'de'" in stats[layer]["skipped"] and "English" in stats[layer]["skipped"]
    assert "skipped" not in stats["consolidate"] and entities == 0  # no English rules read into German words
    status = ok(client.get("/v1/status", headers=auth(key)))
    assert status["language"] == "de" and status["text_search"] == "simple" and status["english_rules"] is False
    assert status["layers"]["graph"]["state"] == "skipped" and status["layers"]["embed"]["state"] == "on"
    assert status["layers"]["consolidate"]["state"] == "on"

    # found lexically: the words as written, accents and ß included (no English stemming mangles them)
    assert first(query(client, key, "Großmutter Köln"), "lexical") == pks[0]
    assert first(query(client, key, "Straßenverkehr München"), "lexical") == pks[3]
    assert first(query(client, key, unicodedata.normalize("NFD", "Ärztin Zürich")), "lexical") == pks[2]
    # found densely: no word in common with the event ("Strudel" is not "Apfelstrudel"), meaning alone
    res = query(client, key, "Strudel Äpfeln Gebäck")
    assert first(res, "dense") == pks[4] and first(res, "lexical") is None
    hit = res["items"][0]  # the learned ranker (fitted on English) stands aside: fusion's order is the answer's
    assert hit["id"] == pks[4] and hit["in_context"] and "Apfelstrudel" in res["context"]
    assert res["pipeline"]["learned"] is False and "learned" not in hit["stages"]
    # tenant-wide too, and every read endpoint of the conversation answers
    assert first(query(client, key, "Kölsch Brauhaus", conv=None), "lexical") == pks[1]
    for path in ("episodes", "timeline", "graph", "speakers"):
        ok(client.get(f"/v1/conversations/{quote(CONV)}/{path}", headers=auth(key)))


def test_a_portuguese_conversation_in_an_english_tenant(client, make_tenant, engine):
    """A conversation's own language: Portuguese beside English in one tenant."""
    tid, key = make_tenant()
    out = ok(client.put("/v1/settings/language", json={"language": "pt-br", "conversation_id": "conversa"},
                        headers=auth(key)))
    assert out["language"] == "pt-BR" and out["text_search"] == "simple"
    pt = post(client, key, "conversa", PORTUGUESE)
    en = post(client, key, "chat", [("Ana", "We are planning trips to the mountains.")])
    build(pt + en)
    got = ok(client.get(f"/v1/events/{pt[0]}", headers=auth(key)))
    assert got["content"].encode() == PORTUGUESE[0][1].encode()
    res = query(client, key, "pastéis de nata em Belém", conv="conversa")
    assert first(res, "lexical") == first(res, "dense") == pt[0]
    # the English conversation keeps English stemming: "trip" finds "trips"
    assert first(query(client, key, "trip", conv="chat"), "lexical") == en[0]
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT conversation_id, search_config::text FROM events WHERE tenant_id = :t"),
                                 {"t": tid}).all())
        graph_stats = dict(conn.execute(text("SELECT conversation_id, stats FROM layer_runs WHERE tenant_id = :t "
                                             "AND layer = 'graph'"), {"t": tid}).all())
    assert rows == {"conversa": "simple", "chat": "english"}
    assert "skipped" in graph_stats["conversa"] and "skipped" not in graph_stats["chat"]
    status = ok(client.get("/v1/status", headers=auth(key)))
    assert status["language"] == "en" and status["layers"]["graph"] == {"state": "on", "reason": None}
    assert status["conversations"]["conversa"]["skipped_layers"] == ["engrams", "graph", "surprise"]


def test_english_is_indexed_by_its_words(client, tenant, engine):
    """The default language is English, and its tsvector is the content's in English (the speaker's
    name is no longer indexed with it: migration 0012)."""
    tid, key = tenant
    post(client, key, "c", [("Ana", "Running faster than the rabbits, she jumped over fences.")])
    with engine.connect() as conn:
        same = conn.execute(text(
            "SELECT bool_and(search_config = 'english'::regconfig AND search_tsv = "
            "to_tsvector('english'::regconfig, content)) FROM events WHERE tenant_id = :t"),
            {"t": tid}).scalar_one()
    assert same is True
    assert ok(client.get("/v1/status", headers=auth(key)))["text_search"] == "english"


def test_changing_the_language_reindexes_and_rebuilds(client, make_tenant, engine):
    tid, key = make_tenant(ADMIN)
    pks = post(client, key, "c", [("Ana", "Wir essen heute Käsespätzle in Stuttgart.")])
    build(pks)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM graph_nodes WHERE tenant_id = :t"), {"t": tid}).scalar_one() > 0
    out = ok(client.put("/v1/settings/language", json={"language": "de"}, headers=auth(key)))
    assert out["rebuilt_conversations"] == ["c"]
    st = ok(client.get("/v1/conversations/c/status", headers=auth(key)))
    assert st["pending"]["graph"] == 1  # the English rules' output is dropped and the layers rebuild
    from app.services.layers import run_for_pks

    for layer in ("consolidate", "surprise", "engrams", "graph"):
        run_for_pks(layer, pks)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM graph_nodes WHERE tenant_id = :t"), {"t": tid}).scalar_one() == 0
    assert first(query(client, key, "Käsespätzle", conv="c"), "lexical") == pks[0]
    bad = client.put("/v1/settings/language", json={"language": "deutsch!"}, headers=auth(key))
    assert bad.status_code == 422 and bad.json()["fields"][0]["path"] == "language"
