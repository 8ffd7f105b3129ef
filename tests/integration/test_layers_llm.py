"""The LLM extractor against a real OpenAI-compatible HTTP server started by the test (127.0.0.1)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.consolidation import segment_episodes
from app.domain.layers.events import LayerEvent
from app.adapters.llm import HttpLLM
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.llm_extract import LLMExtractor
from tests.support.llm_server import LLMServer
from tests.unit.test_layers_llm import GOOD

MON = datetime(2023, 5, 8, 14, 0, tzinfo=timezone.utc)
EVENTS = [
    LayerEvent("D1", "Caroline", "Hey Mel! I went to a support group yesterday.", MON, "c1", seq=0),
    LayerEvent("D2", "Melanie", "Nice! I signed up at acme robotics last week because I love building things.", MON + timedelta(minutes=1), "c1", seq=1),
]


class _Server(LLMServer):
    """Answers from `self.replies` in turn ((status, content) pairs), then "{}"; records every request."""

    def __init__(self):
        self.replies: list[tuple[int, str]] = []
        super().__init__(lambda _body: self.replies.pop(0) if self.replies else (200, "{}"))


@pytest.fixture
def server():
    s = _Server()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_valid_json_becomes_the_graph(server):
    server.replies = [(200, "```json\n" + json.dumps(GOOD) + "\n```")]
    ex = LLMExtractor(HttpLLM(server.base_url, "test-model", api_key="sk-test"))
    frag = ex.extract(EVENTS, segment_episodes(EVENTS))
    # the request: model, key, system + user prompt naming the events
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["model"] == "test-model" and req["body"]["response_format"] == {"type": "json_object"}
    assert "[D1]" in req["body"]["messages"][1]["content"] and "[D2]" in req["body"]["messages"][1]["content"]
    # the answer: the LLM's facts, kinds, dates and causes, assembled like the rule path
    assert frag.extractor == "llm" and frag.stats["llm"]["llm_chunks"] == 1 and frag.stats["llm"]["fallback_chunks"] == 0
    assert [fp.text for fp in frag.facet_points] == [f["text"] for f in GOOD["facts"]]
    acme = next(e for e in frag.entities if e.name == "Acme Robotics")
    assert acme.kind == "organization"  # "organisation" normalised by the schema
    first, _, third = frag.facet_points
    assert first.dates[0].date == "2023-05-07" and first.dates[0].surface == "yesterday"
    assert third.dates[0].range_start == "2023-05-01"  # "last week" resolved by timeparse
    causal = [(e.src, e.dst) for e in frag.edges if e.type == "causal"]
    assert causal == [(frag.facet_points[1].id, frag.facet_points[2].id)]
    assert acme.id in third.entity_ids


@pytest.mark.parametrize(
    "reply, reason",
    [
        ((200, "Sure! Here are the facts: Caroline went to a group."), "ValueError"),
        ((200, json.dumps({"entities": [], "facts": [{"event_id": "D1"}]})), "ValidationError"),
        ((200, json.dumps({"facts": [{"event_id": "D99", "text": "made up"}]})), "ValueError"),
        ((400, ""), "HTTPStatusError"),
    ],
)
def test_bad_answers_fall_back_to_the_rules(server, reply, reason):
    server.replies = [reply]
    ex = LLMExtractor(HttpLLM(server.base_url, "test-model", max_retries=0))
    frag = ex.extract(EVENTS, segment_episodes(EVENTS))
    rules = RuleExtractor().extract(EVENTS, segment_episodes(EVENTS))
    assert frag.stats["llm"]["fallback_chunks"] == 1 and frag.stats["llm"]["fallback_reasons"] == {reason: 1}
    assert [fp.text for fp in frag.facet_points] == [fp.text for fp in rules.facet_points]
    assert {e.name for e in frag.entities} == {e.name for e in rules.entities}


def test_server_errors_are_retried_then_fall_back(server):
    server.replies = [(500, ""), (200, json.dumps(GOOD))]
    ex = LLMExtractor(HttpLLM(server.base_url, "m", max_retries=1))
    frag = ex.extract(EVENTS, segment_episodes(EVENTS))
    assert len(server.requests) == 2 and frag.stats["llm"]["llm_chunks"] == 1
    server.replies = [(500, ""), (503, "")]
    frag = ex.extract(EVENTS, segment_episodes(EVENTS))
    assert frag.stats["llm"]["fallback_reasons"] == {"HTTPStatusError": 1}


def test_unreachable_server_falls_back():
    ex = LLMExtractor(HttpLLM("http://127.0.0.1:9/v1", "m", timeout_s=2, max_retries=0))
    frag = ex.extract(EVENTS)
    assert frag.stats["llm"]["fallback_chunks"] == 1 and frag.facet_points


def test_choose_extractor_picks_the_llm_when_one_is_given(server):
    assert isinstance(choose_extractor(llm=HttpLLM(server.base_url, "m")), LLMExtractor)
    assert isinstance(choose_extractor(), RuleExtractor)
