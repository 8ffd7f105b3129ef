"""POST /v1/answer against a real local OpenAI-compatible server: the answer, its cited evidence
(only events it was shown), compression, and clear errors without or with a failing LLM."""
from __future__ import annotations

import json
import re

import pytest

from app.domain.retrieval.answer import EvidenceLine, parse_answer, parse_compression
from app.settings import get_settings
from tests.support import auth
from tests.support.llm_server import LLMServer
from tests.integration.test_query_api import load

QUESTION = {"query": "What does Ben bake at the bakery?", "conversation_id": "talk"}


def _labels(body: dict) -> list[str]:
    return re.findall(r"\[(E\d+)\]", body["messages"][-1]["content"])


def answerer(body: dict) -> tuple[int, str]:
    """Cites the line about sourdough (and a made-up id), keeps two lines when asked to compress."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system.startswith("You select evidence"):
        keep = [lab for lab in _labels(body) if re.search(rf"\[{lab}\][^\n]*(sourdough|bakery)", user)]
        return 200, json.dumps({"keep": keep})
    if system.startswith("You answer"):
        cite = [lab for lab in _labels(body) if re.search(rf"\[{lab}\][^\n]*sourdough", user)]
        return 200, json.dumps({"answer": "Sourdough bread and cinnamon rolls.", "evidence": cite + ["E999999"]})
    return 200, json.dumps({"preference": 0.1})  # the intent classifier, when the router asks


@pytest.fixture
def llm(monkeypatch):
    def serve(respond):
        srv = LLMServer(respond).__enter__()
        servers.append(srv)
        monkeypatch.setattr(get_settings(), "llm_base_url", srv.base_url)
        monkeypatch.setattr(get_settings(), "llm_timeout_s", 5.0)
        return srv
    servers: list[LLMServer] = []
    yield serve
    for s in servers:
        s.__exit__()


def test_answer_cites_only_events_it_was_shown(client, tenant, llm):
    _, key = tenant
    load(client, key)
    srv = llm(answerer)
    r = client.post("/v1/answer", headers=auth(key), json=QUESTION)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["answer"] == "Sourdough bread and cinnamon rolls."
    assert [e["event_id"] for e in out["evidence"]] == ["5"]  # E999999 was never shown: dropped
    assert "sourdough" in out["evidence"][0]["content"]
    assert out["compressed_from"] is None and out["context_items"]
    asked = [q for q in srv.requests if q["body"]["messages"][0]["content"].startswith("You answer")]
    assert len(asked) == 1 and asked[0]["path"].endswith("/chat/completions")


def test_compression_keeps_the_lines_that_matter(client, tenant, llm):
    _, key = tenant
    load(client, key)
    llm(answerer)
    out = client.post("/v1/answer", headers=auth(key), json=QUESTION | {"compress": True}).json()
    assert out["compressed_from"] > len(out["context_items"]) >= 1
    assert {e["event_id"] for e in out["evidence"]} <= {c["event_id"] for c in out["context_items"]}


def test_without_an_llm_the_endpoint_says_so(client, tenant, monkeypatch):
    _, key = tenant
    monkeypatch.setattr(get_settings(), "llm_base_url", None)
    r = client.post("/v1/answer", headers=auth(key), json=QUESTION)
    assert r.status_code == 501  # not 503: nothing a retry would fix
    assert r.json()["error"] == "not_configured" and "PALIMPSEST_LLM_BASE_URL" in r.json()["detail"]


@pytest.mark.parametrize("reply", [(200, "I think it is bread"), (200, '{"evidence": []}'), (500, "boom")])
def test_a_useless_reply_is_a_502(client, tenant, llm, reply):
    _, key = tenant
    load(client, key)
    llm(lambda body: reply if not body["messages"][0]["content"].startswith("You classify") else (200, "{}"))
    r = client.post("/v1/answer", headers=auth(key), json=QUESTION)
    assert r.status_code == 502 and "LLM" in r.json()["detail"]


def test_bad_input_names_the_field(client, tenant, llm):
    _, key = tenant
    llm(answerer)
    r = client.post("/v1/answer", headers=auth(key), json={"query": "x", "compress": "yes"})
    assert r.status_code == 422 and r.json()["fields"][0]["path"] == "compress"


def test_parsers_are_strict_about_what_was_shown():
    from datetime import datetime, timezone

    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    shown = [EvidenceLine(3, "A", "x", t), EvidenceLine(7, "B", "y", t)]
    assert parse_answer('sure: {"answer": "y", "evidence": ["E7", "E7", 3, "E8"]}', shown).evidence == [7, 3]
    assert parse_compression('{"keep": ["E42"]}', shown) == shown  # keeping nothing keeps all
    assert parse_compression('{"keep": ["E7"]}', shown) == [shown[1]]
    with pytest.raises(ValueError):
        parse_answer('{"answer": ""}', shown)
