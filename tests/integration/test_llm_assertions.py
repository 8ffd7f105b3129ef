"""The timeline's assertions by the LLM (`extractors.extract_assertions(events, llm)`) against a real
OpenAI-compatible HTTP server on 127.0.0.1 (tests/support/llm_server.py) that answers from a script:
valid assertions, a change that supersedes an earlier value, invalid items (dropped and counted), an
answer that is not JSON and a server error (the batch takes the rules' assertions, and says so). The
last test builds the consolidation layer through the service and reads /timeline as a client does."""
from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from app.adapters.llm import HttpLLM
from app.domain.layers import assertions as rules
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent
from app.domain.layers.extractors import assertion_extractor_version, extract_assertion_set, extract_assertions
from app.domain.layers.llm_assertions import SYSTEM_PROMPT, LLMAssertionExtractor
from tests.support import auth
from tests.support.llm_server import LLMServer

T0 = datetime(2024, 3, 2, 10, 0, tzinfo=timezone.utc)
TURNS = [
    ("Ana", "I live in Boston and I work at Harbor Bank."),
    ("Ben", "My sister just moved to Lisbon."),
    ("Ana", "Big news: we moved to Denver last month!"),
    ("Ana", "And I quit Harbor Bank, I'm a baker now."),
]
EVENTS = [LayerEvent(f"E{i + 1}", sp, text, T0 + timedelta(days=30 * i), "c1", seq=i) for i, (sp, text) in enumerate(TURNS)]

# What the scripted model says about each event: valid items, and invalid ones the extractor must drop.
SCRIPT = {
    "E1": [{"entity": "I", "attribute": "lives_in", "value": "Boston"},
           {"entity": "Ana", "attribute": "works_at", "value": "Harbor Bank"},
           {"entity": "Ana", "attribute": "favourite_colour", "value": "blue"},  # not in the vocabulary
           {"entity": "Ana", "attribute": "lives_in", "value": "boston"}],  # the same claim again
    "E2": [{"entity": "my sister", "attribute": "lives_in", "value": "Lisbon"},
           {"entity": "she", "attribute": "lives_in", "value": "Lisbon"}],  # a pronoun is no one
    "E3": [{"entity": "Ana", "attribute": "lives_in", "value": "Denver"},
           {"entity": "Ana", "attribute": "works_at", "value": "Google"}],  # not in the message
    "E4": [{"entity": "Ana", "attribute": "works_at", "value": "Harbor Bank", "negated": True},
           {"entity": "Ana", "attribute": "job_title", "value": "baker"},
           {"entity": "Ana", "attribute": "age", "value": "forty"}],  # no number in the message
}
LINE = re.compile(r"^\[([^\]]+)\] \([^)]*\) ([^:]+): (.*)$", re.M)


def messages_of(body: dict) -> list[str]:
    """The ids of the events the request asks about (not those shown as earlier context)."""
    user = body["messages"][-1]["content"]
    return LINE.findall(user.split("Messages:", 1)[1])


def scripted(body: dict) -> tuple[int, str]:
    items = [{"event_id": eid, **item} for eid, _, _ in messages_of(body) for item in SCRIPT.get(eid, [])]
    items.append({"event_id": "E99", "entity": "Ana", "attribute": "lives_in", "value": "Boston"})  # no such event
    items.append({"event_id": "E1", "entity": "Ana"})  # no attribute, no value
    return 200, json.dumps({"assertions": items})


def rows(assertions) -> list[tuple]:
    return [(a.event_id, a.entity, a.attribute, a.value, a.negated) for a in assertions]


def test_the_llms_assertions_make_the_timeline_and_invalid_items_are_dropped_and_counted():
    with LLMServer(scripted) as srv:
        out = extract_assertion_set(EVENTS, HttpLLM(srv.base_url, "test-model", api_key="sk-test"))
    (req,) = srv.requests  # four events: one batch, one request
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["response_format"] == {"type": "json_object"} and req["body"]["temperature"] == 0
    assert req["body"]["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [eid for eid, _, _ in messages_of(req["body"])] == ["E1", "E2", "E3", "E4"]
    assert rows(out.assertions) == [
        ("E1", "Ana", "lives_in", "Boston", False),
        ("E1", "Ana", "works_at", "Harbor Bank", False),
        ("E2", "Ben's sister", "lives_in", "Lisbon", False),  # "my sister" said by Ben, keyed as the rules key it
        ("E3", "Ana", "lives_in", "Denver", False),
        ("E4", "Ana", "works_at", "Harbor Bank", True),
        ("E4", "Ana", "job_title", "baker", False),
    ]
    assert [a.id for a in out.assertions] == ["E1#0", "E1#1", "E2#0", "E3#0", "E4#0", "E4#1"]
    assert out.stats["llm_batches"] == 1 and out.stats["fallback_batches"] == 0
    assert out.stats["items"] == 13 and out.stats["kept"] == 6
    assert out.stats["dropped"] == {"unknown_attribute": 1, "duplicate": 1, "bad_entity": 1, "ungrounded_value": 2,
                                    "unknown_event": 1, "schema": 1}
    timeline, contradictions = build_timeline(out.assertions)
    by_id = {a.id: a for a in timeline}
    assert by_id["E1#0"].superseded_by == "E3#0"  # Boston -> Denver
    assert by_id["E1#1"].superseded_by == "E4#0"  # Harbor Bank, then quit
    assert by_id["E3#0"].superseded_by is None and by_id["E2#0"].superseded_by is None
    assert {(c.kind, c.earlier_value, c.later_value) for c in contradictions} == {
        ("update", "Boston", "Denver"), ("retraction", "Harbor Bank", "not Harbor Bank")}


def test_the_same_answers_give_the_same_assertions_and_a_slice_sees_its_context():
    with LLMServer(scripted) as srv:
        llm = HttpLLM(srv.base_url, "m")
        whole = extract_assertions(EVENTS, llm)
        again = extract_assertions(EVENTS, llm)
        tail = extract_assertions(EVENTS[2:], llm, context=EVENTS[:2])
        small = LLMAssertionExtractor(llm, max_events=2).extract(EVENTS)
    assert whole == again
    assert tail == [a for a in whole if a.event_id in ("E3", "E4")]  # a slice: the same assertions for its events
    prompt = srv.requests[2]["body"]["messages"][1]["content"]
    assert prompt.index("Earlier messages") < prompt.index("[E1]") < prompt.index("Messages:") < prompt.index("[E3]")
    assert small.stats["batches"] == 2 and small.assertions == whole  # two batches of two: the same timeline
    second = srv.requests[4]["body"]["messages"][1]["content"]
    assert "[E2]" in second.split("Messages:")[0] and "[E3]" in second.split("Messages:")[1]


@pytest.mark.parametrize("reply, reason", [((500, "model crashed"), "HTTPStatusError"),
                                           ((200, "Sure! Ana lives in Boston."), "ValueError"),
                                           ((200, json.dumps({"facts": []})), "ValidationError")])
def test_an_unusable_answer_gives_that_batch_the_rules_assertions_and_says_so(reply, reason):
    answers = [reply]  # the first batch's answer fails; the second batch is answered from the script

    def respond(body: dict) -> tuple[int, str]:
        return answers.pop(0) if answers else scripted(body)

    with LLMServer(respond) as srv:
        out = LLMAssertionExtractor(HttpLLM(srv.base_url, "m", max_retries=0), max_events=2).extract(EVENTS)
    assert len(srv.requests) == 2
    assert out.stats["fallback_batches"] == 1 and out.stats["fallback_reasons"] == {reason: 1}
    assert out.stats["llm_batches"] == 1
    first = [a for a in out.assertions if a.event_id in ("E1", "E2")]
    assert first == rules.extract_all(EVENTS[:2])  # the rules' assertions for the failed batch, not nothing
    assert ("E3", "Ana", "lives_in", "Denver", False) in rows(out.assertions)  # the LLM's for the other


def test_the_version_names_the_llm_extractor_only_when_one_is_configured():
    assert assertion_extractor_version(False) == rules.LAYER_VERSION
    assert assertion_extractor_version(True) == f"llm_assertions/2+{rules.LAYER_VERSION}"


# ---- through the service: the consolidation layer built with PALIMPSEST_LLM_BASE_URL set, read by /timeline

BY_TEXT = {text: SCRIPT[f"E{i + 1}"] for i, (_, text) in enumerate(TURNS)}


def by_text(body: dict) -> tuple[int, str]:
    """The script, keyed by the message's words (the service's event ids are its own)."""
    if body["messages"][0]["content"] != SYSTEM_PROMPT:
        return 200, "{}"  # another layer's prompt (the graph's): not this test's concern
    return 200, json.dumps({"assertions": [{"event_id": eid, **item} for eid, _, text in messages_of(body)
                                           for item in BY_TEXT.get(text, [])]})


def build_timeline_through_the_service(client, make_tenant, monkeypatch, respond, conv: str):  # noqa: ANN001, ANN201
    from app.services.layers import embed_pending, run_for_pks
    from app.settings import get_settings

    with LLMServer(respond) as srv:
        s = get_settings()
        monkeypatch.setattr(s, "llm_base_url", srv.base_url)
        monkeypatch.setattr(s, "llm_model", "test-model")
        _, key = make_tenant()
        events = [{"conversation_id": conv, "event_id": str(i), "speaker": sp, "content": text,
                   "occurred_at": (T0 + timedelta(days=30 * i)).isoformat()} for i, (sp, text) in enumerate(TURNS)]
        r = client.post("/v1/events", json={"events": events}, headers=auth(key))
        assert r.status_code == 200, r.text
        pks = [x["id"] for x in r.json()["results"]]
        embed_pending(pks)
        run_for_pks("consolidate", pks)
        timeline = client.get(f"/v1/conversations/{conv}/timeline", headers=auth(key))
    assert timeline.status_code == 200, timeline.text
    return timeline.json(), srv.requests, pks


def test_timeline_rows_come_from_the_llm_when_one_is_configured(client, make_tenant, monkeypatch):
    out, requests, pks = build_timeline_through_the_service(client, make_tenant, monkeypatch, by_text, "llm-tl")
    assert any(r["body"]["messages"][0]["content"] == SYSTEM_PROMPT for r in requests)
    assert "llm_assertions/2" in out["layer_version"]  # the version says which extractor made the rows
    rows = [(a["event_id"], a["entity"], a["attribute"], a["value"], a["negated"]) for a in out["assertions"]]
    assert rows == [(pks[0], "Ana", "lives_in", "Boston", False), (pks[0], "Ana", "works_at", "Harbor Bank", False),
                    (pks[1], "Ben's sister", "lives_in", "Lisbon", False), (pks[2], "Ana", "lives_in", "Denver", False),
                    (pks[3], "Ana", "works_at", "Harbor Bank", True), (pks[3], "Ana", "job_title", "baker", False)]
    by_value = {(a["attribute"], a["value"], a["negated"]): a for a in out["assertions"]}
    assert by_value[("lives_in", "Boston", False)]["superseded_by"] == by_value[("lives_in", "Denver", False)]["id"]
    assert by_value[("works_at", "Harbor Bank", False)]["superseded_by"] == by_value[("works_at", "Harbor Bank", True)]["id"]
    assert {(c["kind"], c["earlier_value"], c["later_value"]) for c in out["contradictions"]} == {
        ("update", "Boston", "Denver"), ("retraction", "Harbor Bank", "not Harbor Bank")}
    assert not any(a["value"] in ("Google", "blue", "forty") for a in out["assertions"])  # the dropped items


def test_a_failing_llm_leaves_the_timeline_to_the_rules_not_empty(client, make_tenant, monkeypatch):
    out, requests, pks = build_timeline_through_the_service(client, make_tenant, monkeypatch,
                                                            lambda body: (500, "model crashed"), "llm-down")
    assert requests  # it was asked, and failed
    events = [LayerEvent(str(pk), sp, text, T0 + timedelta(days=30 * i), "llm-down", seq=i)
              for i, (pk, (sp, text)) in enumerate(zip(pks, TURNS))]
    expected = [(int(a.event_id), a.entity, a.attribute, a.value, a.negated) for a in rules.extract_all(events)]
    assert expected and [(a["event_id"], a["entity"], a["attribute"], a["value"], a["negated"])
                         for a in out["assertions"]] == expected
    from app.storage.db import get_engine

    with get_engine().connect() as conn:  # the fallback is in the layer run's stats, not hidden
        stats = conn.exec_driver_sql("SELECT stats FROM layer_runs WHERE conversation_id = 'llm-down' "
                                     "AND layer = 'consolidate'").scalar_one()
    assert stats["llm_assertions"]["fallback_batches"] >= 1 and stats["llm_assertions"]["llm_batches"] == 0
