"""Query expansion (pseudo-relevance feedback, and HyDE against a real local LLM server) and the
separation list (only in conversations with more than five speakers): pure parts, then through
POST /v1/query on the real database with the real embedder."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app.pipeline.expansion import HYDE_SYSTEM, feedback_ids, rocchio, usable_passage
from app.pipeline.separation import MIN_SPEAKERS, asker_role, names_speaker, separated_speakers
from app.settings import get_settings
from tests.conftest import auth
from tests.llm_server import LLMServer
from tests.test_layers_wiring import build_all


def test_rocchio_moves_the_question_toward_its_feedback_and_stays_unit_length():
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    fb = [np.array([0.0, 1.0, 0.0], dtype=np.float32), np.array([0.0, 0.8, 0.6], dtype=np.float32)]
    v = rocchio(q, fb, alpha=1.0, beta=0.5)
    assert v is not None and abs(float(np.linalg.norm(v)) - 1.0) < 1e-6
    assert v[0] > v[1] > 0 and v[2] > 0  # still mostly the question, moved toward the feedback
    assert rocchio(q, []) is None


def test_feedback_ids_are_what_the_lists_agree_on():
    assert feedback_ids([[5, 1, 2], [1, 9, 5]], n=2) == [1, 5]
    assert feedback_ids([], n=3) == []


def test_usable_passage_trims_and_refuses_empty_replies():
    assert usable_passage("  I play the\\ncello  ".replace("\\n", "\n")) == "I play the cello"
    assert usable_passage("   ") is None
    assert len(usable_passage("x" * 5000)) == 600


def test_separation_fires_only_above_five_speakers_and_names_whole_words():
    five = ["Ana", "Ben", "Cleo", "Dev", "Eli"]
    assert separated_speakers("What did Ana say?", five) == ()
    six = five + ["Zoe Park"]
    assert len(set(six)) == MIN_SPEAKERS
    assert separated_speakers("What did Zoe say to Ben?", six) == ("Ben", "Zoe Park")
    assert separated_speakers("What did Benny say?", six) == ()  # "Ben" is not named in "Benny"
    assert names_speaker("ask zoe park", "Zoe Park") and not names_speaker("Zoey", "Zoe Park")


GROUP = [  # six speakers; only Zoe talks about the boat, Ana talks about a boat too
    ("Ana", "We took a boat tour of the harbour last summer."),
    ("Ben", "My bike got a flat tyre on the way to work."),
    ("Cleo", "I started a pottery class on Tuesdays."),
    ("Dev", "The new office coffee machine is terrible."),
    ("Eli", "I am reading a book about the history of maps."),
    ("Zoe", "I finally bought a small sailing dinghy and named it Pickle."),
    ("Ana", "Pottery sounds fun, Cleo!"),
    ("Zoe", "Sailing on the lake every Sunday morning is my new routine."),
]


@pytest.mark.parametrize("question, role", [
    ("How many columns did I want to add to the table?", "user"),
    ("what did i decide about the budget tracker", "user"),
    ("Remind me which database my app uses", "user"),
    ("Can you list the order in which I brought up the bugs?", "user"),
    ("What did Caroline research?", None),
    ('When did Ana say "I quit"?', None),  # quoted words are somebody else's
    ("What is the MIME type of the upload?", None),  # "me" only as a whole word
])
def test_asker_role_is_the_users_for_first_person_questions(question, role):
    assert asker_role(question) == role


def load_group(client, key, conv: str, turns) -> list[int]:
    events = [{"conversation_id": conv, "event_id": str(i), "speaker": s, "content": c,
               "occurred_at": f"2024-03-0{1 + i // 3}T1{i % 3}:00:00Z"} for i, (s, c) in enumerate(turns)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["results"]]


def test_separation_list_holds_the_named_speakers_turns(client, tenant):
    _, key = tenant
    build_all(load_group(client, key, "six", GROUP))
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What boat does Zoe have?", "conversation_id": "six", "top_k": 8}).json()
    by_sep = [it for it in out["items"] if "separation" in it["signals"]]
    assert by_sep and {it["speaker"] for it in by_sep} == {"Zoe"}
    assert out["items"][0]["speaker"] == "Zoe"  # not Ana's boat tour
    assert "separation" in out["timings_ms"]
    assert out["items"][0]["stages"]["fusion"]["weights"]["separation"] == pytest.approx(
        0.8 * out["items"][0]["stages"]["fusion"]["weights"]["dense"])
    off = client.post("/v1/query", headers=auth(key), json={
        "query": "What boat does Zoe have?", "conversation_id": "six", "pipeline": {"separation": False}}).json()
    assert not any("separation" in it["signals"] for it in off["items"])

    # two speakers: the list would rank everything, so it never fires
    build_all(load_group(client, key, "two", [(("Zoe", "Ana")[i % 2], c) for i, (_, c) in enumerate(GROUP)]))
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "What boat does Zoe have?", "conversation_id": "two"}).json()
    assert not any("separation" in it["signals"] for it in out["items"])


def test_feedback_expansion_searches_again_from_the_conversations_own_turns(client, tenant):
    _, key = tenant
    build_all(load_group(client, key, "fb", GROUP))
    out = client.post("/v1/query", headers=auth(key), json={
        "query": "sailing dinghy", "conversation_id": "fb", "pipeline": {"expansion": True}}).json()
    assert any("expansion" in it["signals"] for it in out["items"]) and "expansion" in out["timings_ms"]
    assert out["pipeline"]["expansion"] is True
    default = client.post("/v1/query", headers=auth(key), json={"query": "sailing dinghy", "conversation_id": "fb"}).json()
    assert default["pipeline"]["expansion"] is False  # off by default: measured worse (docs/pipeline.md)
    assert not any("expansion" in it["signals"] for it in default["items"])


def test_hyde_asks_the_llm_for_a_hypothetical_turn_and_searches_its_meaning(client, tenant, monkeypatch):
    """No word of the question is in the evidence; the LLM's invented turn talks about boats."""
    _, key = tenant
    build_all(load_group(client, key, "hyde", GROUP))

    def respond(body: dict) -> tuple[int, str]:
        if body["messages"][0]["content"] == HYDE_SYSTEM:
            return 200, "I just got a little sailboat and I take it out on the water every weekend."
        return 200, json.dumps({"general": 0.9})  # the intent router's classifier

    with LLMServer(respond) as srv:
        monkeypatch.setattr(get_settings(), "llm_base_url", srv.base_url)
        out = client.post("/v1/query", headers=auth(key), json={
            "query": "What is Zoe's new hobby on weekends?", "conversation_id": "hyde",
            "pipeline": {"expansion": True, "lexical": False, "dense": True, "graph": False}}).json()
        asked = [r for r in srv.requests if r["body"]["messages"][0]["content"] == HYDE_SYSTEM]
    assert len(asked) == 1 and asked[0]["body"]["messages"][1]["content"] == "What is Zoe's new hobby on weekends?"
    hits = [it for it in out["items"] if "expansion" in it["signals"]]
    assert hits and hits[0]["signals"]["expansion"]["rank"] == 1 and hits[0]["event_id"] in {"5", "7"}

    # an LLM that fails: the query still answers, expanded from the conversation's own turns
    with LLMServer(lambda body: (500, "down")) as srv:
        monkeypatch.setattr(get_settings(), "llm_base_url", srv.base_url)
        r = client.post("/v1/query", headers=auth(key), json={
            "query": "What is Zoe's new hobby on weekends?", "conversation_id": "hyde",
            "pipeline": {"expansion": True}})
    assert r.status_code == 200 and any("expansion" in it["signals"] for it in r.json()["items"])
