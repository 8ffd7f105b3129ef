"""The cross-claim step (`assertion_claims`) is one function for both extractors: the rules'
`extract_all` and the LLM's `LLMAssertionExtractor` (here against a real local OpenAI-compatible HTTP
server that answers with the claims the rules read, before the step). Both must end with the same
value keys, the same plan a bare cancellation ends, the same job a shortened name retracts and the same
dates (`valid_from`) read by the one resolver; a divergence of either path fails these tests."""
from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone

from app.adapters.llm import HttpLLM
from app.domain.layers import assertion_claims
from app.domain.layers.assertion_claims import CrossClaims, settle_all
from app.domain.layers.assertions import Assertion, extract_all
from app.domain.layers.events import LayerEvent
from app.domain.layers.llm_assertions import LLMAssertionExtractor
from tests.support.llm_server import LLMServer

T0 = datetime(2024, 4, 29, 10, 0, tzinfo=timezone.utc)  # a Monday
TURNS = [
    ("Maya", "I joined Tallow Studio as a designer."),
    ("Maya", "We're planning a trip to Lisbon in June."),
    ("Maya", "I left Tallow last week."),
    ("Maya", "I start at Harborview Clinic on May 6."),
    ("Maya", "We called off the trip."),
]
EVENTS = [LayerEvent(f"E{i + 1}", sp, text, T0 + timedelta(days=i), "c1", seq=i) for i, (sp, text) in enumerate(TURNS)]
# what a model says about each message: the claims as the message words them, before the cross-claim step
SCRIPT = {
    "E1": [{"entity": "Maya", "attribute": "works_at", "value": "Tallow Studio"},
           {"entity": "Maya", "attribute": "job_title", "value": "designer"}],
    "E2": [{"entity": "I", "attribute": "plan:trip", "value": "Lisbon"}],
    "E3": [{"entity": "Maya", "attribute": "works_at", "value": "Tallow", "negated": True}],
    "E4": [{"entity": "Maya", "attribute": "works_at", "value": "Harborview Clinic"}],
    "E5": [{"entity": "Maya", "attribute": "plan:trip", "value": "planned", "negated": True}],
}
LINE = re.compile(r"^\[([^\]]+)\] \(", re.M)


def scripted(body: dict) -> tuple[int, str]:
    asked = LINE.findall(body["messages"][-1]["content"].split("Messages:", 1)[1])
    return 200, json.dumps({"assertions": [{"event_id": eid, **item} for eid in asked for item in SCRIPT.get(eid, [])]})


def settled(assertions) -> list[tuple]:
    return [(a.event_id, a.entity, a.attribute, a.value_key, a.negated, a.valid_from) for a in assertions]


def llm_path() -> list[Assertion]:
    with LLMServer(scripted) as srv:
        return LLMAssertionExtractor(HttpLLM(srv.base_url, "test-model")).extract(EVENTS).assertions


def test_the_rules_and_the_llm_end_the_cross_claim_step_alike():
    expected = [
        ("E1", "Maya", "works_at", "tallow studio", False, None),
        ("E1", "Maya", "job_title", "designer", False, None),
        ("E2", "Maya", "plan:trip", "lisbon", False, None),  # a plan to come takes no date
        ("E3", "Maya", "works_at", "tallow studio", True, date(2024, 4, 22)),  # the short form meets the long one
        ("E4", "Maya", "works_at", "harborview clinic", False, date(2024, 5, 6)),  # "I start ... on May 6"
        ("E5", "Maya", "plan:trip", "lisbon", True, None),  # the bare cancellation ends the plan it names
    ]
    assert settled(extract_all(EVENTS)) == expected
    assert settled(llm_path()) == expected


def test_both_paths_go_through_the_one_step(monkeypatch):
    calls: list[str] = []
    original = CrossClaims.settle

    def spy(self, a, out, conversation=""):
        calls.append(a.event_id)
        return original(self, a, out, conversation)

    monkeypatch.setattr(assertion_claims.CrossClaims, "settle", spy)
    extract_all(EVENTS)
    rules_calls, calls[:] = list(calls), []
    llm_path()
    assert rules_calls == ["E1", "E1", "E2", "E3", "E4", "E5"] and calls == rules_calls


def test_a_bare_retraction_takes_what_stands_and_state_is_per_conversation():
    plan = Assertion("B1#0", "B1", "Maya", "plan:trip", "Lisbon", "lisbon", T0, "Lisbon")
    off = Assertion("B3#0", "B3", "Jon", "plan:trip", "planned", "", T0, "planned", negated=True)
    out = settle_all([plan, off])
    assert (out[1].entity, out[1].value_key) == ("Maya", "lisbon")  # the latest plan of its kind, anyone's
    other = settle_all([plan, off], lambda a: "c1" if a.event_id == "B1" else "c2")
    assert other[1].value_key == ""  # another conversation's plan is not this one's
    job = Assertion("B1#0", "B1", "Maya", "works_at", "Tallow", "tallow", T0, "Tallow")
    fired = Assertion("B2#0", "B2", "Maya", "works_at", "job", "", T0, "laid off", negated=True)
    assert [a.value_key for a in settle_all([job, fired])] == ["tallow", "tallow"]
    assert settle_all([fired]) == []  # nothing stands: the retraction ends nothing
