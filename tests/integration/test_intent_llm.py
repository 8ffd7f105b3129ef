"""Intent routing's LLM tier against a real local HTTP server (an OpenAI-compatible endpoint on
127.0.0.1): the reply decides the label, and errors or silence fall back to the default."""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.adapters.llm import HttpLLM
from app.domain.retrieval.intent import IntentRouter
from app.domain.retrieval.intent_rules import LABELS

REF = datetime(2024, 6, 20, 15, 30, tzinfo=timezone.utc)


class _LLMHandler(BaseHTTPRequestHandler):
    replies: list = []
    seen: list = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("authorization"), "body": body})
        status, content = type(self).replies.pop(0)
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *a):  # keep pytest output clean
        pass


@pytest.fixture
def llm_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LLMHandler)
    _LLMHandler.replies, _LLMHandler.seen = [], []
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", _LLMHandler
    server.shutdown()
    server.server_close()


QUIET = "Tell me about the trip to the lake."  # no keyword; no encoder -> the LLM decides


def test_llm_tier_classifies_through_an_openai_compatible_endpoint(llm_server):
    url, handler = llm_server
    handler.replies.append((200, 'Sure: {"temporal": 0.1, "causal": 0.0, "multi_hop": 0.9, "entity_centric": 0.6, '
                                 '"knowledge_update": 0.0, "preference": 0.3}'))
    router = IntentRouter(llm=HttpLLM(url, "tiny-llm", api_key="sk-test", max_retries=0))
    intent = router.route(QUIET, reference_time=REF)
    assert (intent.label, intent.tier) == ("multi_hop", "llm")
    assert intent.confidence == pytest.approx(0.9)
    assert intent.labels == {"multi_hop", "entity_centric"}
    req = handler.seen[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["model"] == "tiny-llm" and req["body"]["temperature"] == 0
    assert QUIET in req["body"]["messages"][-1]["content"]


def test_llm_tier_low_scores_mean_general(llm_server):
    url, handler = llm_server
    handler.replies.append((200, json.dumps({k: 0.1 for k in LABELS if k != "general"})))
    intent = IntentRouter(llm=HttpLLM(url, "m", max_retries=0)).route(QUIET)
    assert (intent.label, intent.tier) == ("general", "llm")


@pytest.mark.parametrize("reply", [(500, "overloaded"), (200, "I think it is temporal."), (200, '{"other": 1}')])
def test_llm_errors_fall_back_to_general(llm_server, reply):
    url, handler = llm_server
    handler.replies.append(reply)
    intent = IntentRouter(llm=HttpLLM(url, "m", max_retries=0)).route(QUIET)
    assert (intent.label, intent.tier) == ("general", "default")
    assert intent.evidence and intent.evidence[0].startswith("llm-error")


def test_llm_unreachable_falls_back_and_keywords_skip_the_llm(llm_server):
    url, handler = llm_server
    dead = IntentRouter(llm=HttpLLM("http://127.0.0.1:9/v1", "m", timeout_s=0.5, max_retries=0)).route(QUIET)
    assert dead.tier == "default" and dead.label == "general"
    IntentRouter(llm=HttpLLM(url, "m", max_retries=0)).route("Why did Ana leave?")
    assert handler.seen == []  # tier 1 answered; no LLM call
