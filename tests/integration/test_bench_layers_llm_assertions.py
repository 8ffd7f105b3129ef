"""`palimpsest bench layers --llm` scores the LLM's assertions and supersessions: the product's LLM
assertion extractor over the product's HTTP client, against a real OpenAI-compatible server on
127.0.0.1 (tests/support/llm_server.py) that answers the graph prompt and the assertion prompt
each in its own shape, on a small labelled set with one move superseding an earlier home."""
from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from app.adapters.llm import HttpLLM
from app.domain.layers import assertion_spans, llm_assertions, llm_extract
from bench.cli import bench_app
from bench.layers import markdown, run
from tests.support.llm_server import LLMServer

CONV = {
    "id": "l3-friends-move",
    "register": "friends",
    "sessions": [
        {"start": "2023-03-04T10:00:00Z", "turns": [
            ["Ana", "I live in Lisbon and I work at Harbor Bank."],
            ["Ben", "Nice, say hi to the team."],
        ]},
        {"start": "2023-06-10T09:00:00Z", "turns": [
            ["Ana", "Big news: we moved to Porto in May."],
            ["Ben", "Wow, congratulations!"],
        ]},
    ],
    "entities": [{"id": "ana", "name": "Ana"}, {"id": "ben", "name": "Ben"}, {"id": "lisbon", "name": "Lisbon"},
                 {"id": "porto", "name": "Porto"}, {"id": "harbor-bank", "name": "Harbor Bank"}],
    "assertions": [
        {"id": "a1", "turn": "s1t1", "says": "I live in Lisbon", "entity": "ana", "attribute": "lives_in",
         "value": "Lisbon"},
        {"id": "a2", "turn": "s1t1", "says": "I work at Harbor Bank", "entity": "ana", "attribute": "works_at",
         "value": "Harbor Bank"},
        {"id": "a3", "turn": "s2t1", "says": "we moved to Porto", "entity": "ana", "attribute": "lives_in",
         "value": "Porto", "supersedes": ["a1"]},
    ],
    "times": [{"turn": "s2t1", "text": "in May", "start": "2023-05-01", "end": "2023-06-01"}],
}
LINE = re.compile(r"^\[([^\]]+)\] \([^)]*\) ([^:]+): (.*)$", re.M)
GOLD = {"s1t1": [{"entity": "I", "attribute": "lives_in", "value": "Lisbon"},
                 {"entity": "Ana", "attribute": "works_at", "value": "Harbor Bank"}],
        "s2t1": [{"entity": "Ana", "attribute": "lives_in", "value": "Porto"}]}


@pytest.fixture
def labelled(tmp_path):
    data = tmp_path / "layers"
    (data / "conversations").mkdir(parents=True)
    (data / "conversations" / f"{CONV['id']}.json").write_text(json.dumps(CONV), encoding="utf-8")
    (data / "manifest.json").write_text(json.dumps({"dev": [CONV["id"]], "test": []}), encoding="utf-8")
    return data


def model(said: dict[str, list[dict]], extra: list[dict] = (), fail_assertions: bool = False):
    """A server answering the graph prompt with one fact per message and the assertion prompt with `said`."""
    def respond(body: dict) -> tuple[int, str]:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system == llm_extract.SYSTEM_PROMPT:
            facts = [{"event_id": i, "text": t, "entities": [sp], "topic": "life"} for i, sp, t in LINE.findall(user)]
            return 200, json.dumps({"entities": [], "facts": facts})
        assert system == llm_assertions.SYSTEM_PROMPT
        if fail_assertions:
            return 500, "model crashed"
        ids = [i for i, _, _ in LINE.findall(user.split("Messages:", 1)[1])]
        return 200, json.dumps({"assertions": [{"event_id": i, **x} for i in ids for x in said.get(i, [])] + list(extra)})
    return respond


def test_an_llm_stating_the_gold_assertions_scores_them_and_the_supersession_perfect(labelled):
    invalid = [{"event_id": "s1t1", "entity": "Ana", "attribute": "lives_in", "value": "Paris"}]  # not in the turn
    with LLMServer(model(GOLD, invalid)) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model"))
    dev = result["splits"]["dev"]
    assert (dev["assertions"]["tp"], dev["assertions"]["fp"], dev["assertions"]["fn"]) == (3, 0, 0)
    assert dev["supersessions"]["f1"] == 1.0 and dev["supersessions"]["tp"] == 1
    assert result["scored_from"]["assertions"].startswith("llm") and result["scored_from"]["supersessions"].startswith("llm")
    la = result["llm"]["assertions"]
    assert (la["batches"], la["llm_batches"], la["fallback_batches"]) == (1, 1, 0)
    assert (la["items"], la["kept"], la["dropped"]) == (4, 3, {"ungrounded_value": 1})
    llm = result["llm"]  # one call per graph chunk (episode) and per assertion batch
    assert llm["calls"] == len(srv.requests) == llm["chunks"] + la["batches"] == 3 and llm["failed_calls"] == 0
    assert result["conversations"][0]["llm"]["assertions"]["kept"] == 3
    assert "1 of 1 batches extracted by the LLM, 0 by its rule fallback; 3 of 4 items kept, dropped: " \
           "ungrounded_value 1" in markdown(result)


def test_an_llm_that_misses_the_move_loses_it_and_its_supersession_where_the_rules_find_them(labelled):
    with LLMServer(model({"s1t1": GOLD["s1t1"]})) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model"))
    dev = result["splits"]["dev"]
    assert (dev["assertions"]["tp"], dev["assertions"]["fn"]) == (2, 1)
    assert dev["supersessions"]["tp"] == 0 and dev["supersessions"]["fn"] == 1
    rules = run("all", labelled)
    assert rules["scored_from"]["assertions"] == f"rules + span model {assertion_spans.VERSION} (consolidation)"  # shipped
    assert rules["splits"]["dev"]["supersessions"]["tp"] == 1  # so the miss above is the LLM's


def test_an_llm_failing_on_the_assertions_is_reported_and_the_command_fails(labelled, tmp_path):
    with LLMServer(model(GOLD, fail_assertions=True)) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model", max_retries=0))
        out = tmp_path / "results"
        cli = CliRunner().invoke(bench_app, ["layers", "--data-dir", str(labelled), "--out-dir", str(out),
                                             "--llm-url", srv.base_url, "--llm-model", "test-model"])
    llm = result["llm"]
    assert llm["failed_calls"] == 1 and llm["llm_chunks"] == llm["chunks"]  # the graph's calls went through
    assert llm["assertions"]["fallback_batches"] == 1 and llm["assertions"]["fallback_reasons"] == {"HTTPStatusError": 1}
    md = markdown(result)
    assert "**The LLM failed**" in md and "assertion and supersession scores below do not measure the LLM" in md
    assert cli.exit_code == 1 and "Nothing saved" in cli.output
    assert not out.exists() or not any(out.iterdir())
