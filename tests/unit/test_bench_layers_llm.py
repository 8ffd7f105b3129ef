"""`palimpsest bench layers --llm`: the product's LLM extractor, over the product's HTTP client, against a
real OpenAI-compatible server on 127.0.0.1 (tests/support/llm_server.py), scored on a small labelled set.

The server reads the chunk the extractor sent (the `[event id] (time) speaker: text` lines of
`llm_extract.build_prompt`) and answers in the JSON shape `llm_extract` validates, so the entity scores
can be worked out from what it answered."""
from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from app.adapters.llm import HttpLLM
from app.domain.layers.llm_extract import SYSTEM_PROMPT
from app.settings import get_settings
from bench.cli import bench_app
from bench.layers import markdown, run
from tests.support.llm_server import LLMServer

KINDS = {"Ana": "person", "Ben": "person", "Leah": "person", "Harbor Bank": "organization", "Lisbon": "place",
         "Miso": "animal", "Pixel": "animal"}
CONV = {
    "id": "l1-friends-pets",
    "register": "friends",
    "sessions": [
        {"start": "2023-03-04T10:00:00Z", "turns": [
            ["Ana", "My friend Leah started at Harbor Bank last week."],
            ["Ben", "Great! Is she still in Lisbon?"],
            ["Ana", "Yes, Leah lives in Lisbon with her cat Miso."],
        ]},
        {"start": "2023-04-10T09:00:00Z", "turns": [
            ["Ben", "I adopted a dog called Pixel yesterday."],
            ["Ana", "Pixel is a lovely name."],
        ]},
    ],
    "entities": [{"id": n.lower().replace(" ", "-"), "name": n} for n in KINDS],
    "assertions": [
        {"id": "a1", "turn": "s1t3", "says": "Leah lives in Lisbon", "entity": "leah", "attribute": "lives_in",
         "value": "Lisbon"},
    ],
    "times": [
        {"turn": "s1t1", "text": "last week", "start": "2023-02-20", "end": "2023-02-27"},
        {"turn": "s2t1", "text": "yesterday", "start": "2023-04-09", "end": "2023-04-10"},
    ],
}
LINE = re.compile(r"^\[([^\]]+)\] \([^)]*\) ([^:]+): (.*)$")


@pytest.fixture
def labelled(tmp_path):
    data = tmp_path / "layers"
    (data / "conversations").mkdir(parents=True)
    (data / "conversations" / f"{CONV['id']}.json").write_text(json.dumps(CONV), encoding="utf-8")
    (data / "manifest.json").write_text(json.dumps({"dev": [CONV["id"]], "test": []}), encoding="utf-8")
    return data


def chunk_of(body: dict) -> list[tuple[str, str, str]]:
    """(event id, speaker, text) of each message the extractor put in its prompt."""
    user = body["messages"][-1]["content"]
    return [m.groups() for m in map(LINE.match, user.splitlines()) if m]


def answer_naming(names: dict[str, str]):
    def respond(body: dict) -> tuple[int, str]:
        facts = [{"event_id": eid, "text": text, "entities": [speaker, *(n for n in names if n in text)],
                  "topic": "life"} for eid, speaker, text in chunk_of(body)]
        return 200, json.dumps({"entities": [{"name": n, "kind": k} for n, k in names.items()], "facts": facts})
    return respond


gold_answer = answer_naming(KINDS)  # a model that names exactly the gold entities each message mentions
no_pets_answer = answer_naming({n: k for n, k in KINDS.items() if k != "animal"})  # ...all but the two pets


def empty_answer(body: dict) -> tuple[int, str]:
    """A model that finds nothing: one valid fact naming no entity (the schema wants one fact)."""
    eid = chunk_of(body)[0][0]
    return 200, json.dumps({"entities": [], "facts": [{"event_id": eid, "text": "small talk", "entities": []}]})


def test_an_llm_naming_the_gold_entities_scores_them_perfect_and_the_results_say_the_llm_ran(labelled):
    with LLMServer(gold_answer) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model"))
    assert srv.requests, "the extractor never called the server"
    body = srv.requests[0]["body"]
    assert body["model"] == "test-model" and body["response_format"] == {"type": "json_object"}
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert result["extractor"] == "llm" and result["scored_from"]["entities"].startswith("llm")
    llm = result["llm"]
    assert (llm["model"], llm["base_url"], llm["calls"], llm["failed_calls"]) == ("test-model", srv.base_url,
                                                                                  len(srv.requests), 0)
    assert llm["llm_chunks"] == llm["chunks"] >= 1 and llm["fallback_chunks"] == 0
    row = result["conversations"][0]
    assert row["extractor"] == "llm" and row["llm"]["llm_chunks"] == llm["chunks"]
    dev = result["splits"]["dev"]
    assert dev["entities"]["f1"] == 1.0 and dev["entities"]["tp"] == len(KINDS)
    assert dev["entities_without_speakers"]["recall"] == 1.0
    md = markdown(result)
    assert "llm test-model" in md.splitlines()[0]
    assert f"{llm['chunks']} of {llm['chunks']} chunks extracted by the LLM, 0 by its rule fallback" in md


def test_an_llm_that_misses_the_pets_loses_exactly_those_clusters_where_the_rules_find_them(labelled):
    with LLMServer(no_pets_answer) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model"))
    assert srv.requests and result["llm"]["llm_chunks"] == result["llm"]["chunks"]
    e = result["splits"]["dev"]["entities"]
    assert (e["tp"], e["fp"], e["fn"]) == (len(KINDS) - 2, 0, 2)
    assert result["splits"]["dev"]["entities_without_speakers"]["recall"] == 0.6  # Leah, Harbor Bank, Lisbon of 5
    rules = run("all", labelled)
    assert rules["splits"]["dev"]["entities_without_speakers"]["recall"] > 0.6  # the miss is the LLM's


def test_an_llm_that_finds_nothing_scores_zero_recall_on_named_entities_where_the_rules_find_some(labelled):
    with LLMServer(empty_answer) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model"))
    assert srv.requests and result["llm"]["fallback_chunks"] == 0 and result["llm"]["failed_calls"] == 0
    dev = result["splits"]["dev"]
    assert dev["entities_without_speakers"]["recall"] == 0.0  # only the speakers, who are always entities
    assert dev["entities"]["tp"] == 2 and dev["entities"]["fn"] == len(KINDS) - 2
    rules = run("all", labelled)
    assert rules["extractor"] == "rules" and rules["llm"] is None and "extractor" in rules["conversations"][0]
    assert rules["splits"]["dev"]["entities_without_speakers"]["recall"] > 0  # so the zero above is the LLM's
    # this server answers the assertion prompt in the graph's shape too, which the assertion extractor
    # rejects, so every batch falls back to the rules: here the assertions (and always the times) equal
    # the rules-only run's
    assert rules["splits"]["dev"]["assertions"] == dev["assertions"] and rules["splits"]["dev"]["times"] == dev["times"]


def test_an_llm_answering_500_is_reported_and_the_command_fails_instead_of_scoring_the_rules(labelled, tmp_path):
    with LLMServer(lambda body: (500, "model crashed")) as srv:
        result = run("all", labelled, llm=HttpLLM(srv.base_url, "test-model", max_retries=0))
        out = tmp_path / "results"
        cli = CliRunner().invoke(bench_app, ["layers", "--data-dir", str(labelled), "--out-dir", str(out),
                                             "--llm-url", srv.base_url, "--llm-model", "test-model"])
    llm = result["llm"]
    assert llm["calls"] >= 1 and llm["failed_calls"] == llm["calls"]
    assert llm["llm_chunks"] == 0 and llm["fallback_chunks"] == llm["chunks"]
    assert "500" in llm["errors"][0] and "HTTPStatusError" in llm["fallback_reasons"]
    assert "**The LLM failed**" in markdown(result)
    assert cli.exit_code == 1, cli.output
    assert "the LLM failed on" in cli.output and "Nothing saved" in cli.output
    assert not out.exists() or not any(out.iterdir())


def test_a_failing_llm_stops_the_run_after_the_first_conversation_unless_told_to_go_on(labelled):
    second = {**CONV, "id": "l2-friends-pets"}
    (labelled / "conversations" / "l2-friends-pets.json").write_text(json.dumps(second), encoding="utf-8")
    (labelled / "manifest.json").write_text(json.dumps({"dev": [CONV["id"], second["id"]], "test": []}),
                                            encoding="utf-8")
    with LLMServer(lambda body: (500, "model crashed")) as srv:
        client = HttpLLM(srv.base_url, "test-model", max_retries=0)
        stopped = run("all", labelled, llm=client, stop_on_llm_failure=True)
        calls_first = len(srv.requests)
        full = run("all", labelled, llm=client)
    assert [r["id"] for r in stopped["conversations"]] == [CONV["id"]]
    assert stopped["llm"]["stopped_after"] == CONV["id"] and stopped["llm"]["calls"] == calls_first
    assert "the run stopped after l1-friends-pets" in markdown(stopped)
    assert len(full["conversations"]) == 2 and full["llm"]["stopped_after"] is None
    assert full["llm"]["calls"] == 2 * calls_first


def test_an_llm_that_fails_can_still_be_saved_on_request_with_the_failure_in_the_results(labelled, tmp_path):
    out = tmp_path / "results"
    with LLMServer(lambda body: (500, "model crashed")) as srv:
        cli = CliRunner().invoke(bench_app, ["layers", "--data-dir", str(labelled), "--out-dir", str(out),
                                             "--llm-url", srv.base_url, "--allow-llm-errors"])
    assert cli.exit_code == 0, cli.output
    saved = json.loads(next(out.glob("layers-*.json")).read_text(encoding="utf-8"))
    assert saved["extractor"] == "llm" and saved["llm"]["failed_calls"] >= 1
    assert saved["llm"]["model"] == get_settings().llm_model  # --llm-url alone keeps the configured model


@pytest.fixture
def fresh_settings(monkeypatch):
    for var in ("PALIMPSEST_LLM_BASE_URL", "PALIMPSEST_LLM_MODEL", "PALIMPSEST_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


def test_llm_flag_uses_the_products_llm_settings(labelled, tmp_path, fresh_settings):
    out = tmp_path / "results"
    with LLMServer(gold_answer) as srv:
        fresh_settings.setenv("PALIMPSEST_LLM_BASE_URL", srv.base_url)
        fresh_settings.setenv("PALIMPSEST_LLM_MODEL", "env-model")
        fresh_settings.setenv("PALIMPSEST_LLM_API_KEY", "sk-local")
        get_settings.cache_clear()
        cli = CliRunner().invoke(bench_app, ["layers", "--data-dir", str(labelled), "--out-dir", str(out), "--llm"])
    assert cli.exit_code == 0, cli.output
    assert srv.requests and {r["body"]["model"] for r in srv.requests} == {"env-model"}
    assert {r["auth"] for r in srv.requests} == {"Bearer sk-local"}
    saved = json.loads(next(out.glob("layers-*.json")).read_text(encoding="utf-8"))
    assert (saved["extractor"], saved["llm"]["model"], saved["llm"]["failed_calls"]) == ("llm", "env-model", 0)
    assert saved["splits"]["dev"]["entities"]["f1"] == 1.0
    assert "sk-local" not in json.dumps(saved)  # the key is never written


def test_llm_flag_without_a_configured_llm_is_refused(labelled, tmp_path, fresh_settings):
    cli = CliRunner().invoke(bench_app, ["layers", "--data-dir", str(labelled), "--out-dir", str(tmp_path), "--llm"])
    assert cli.exit_code == 2
    assert "PALIMPSEST_LLM_BASE_URL" in cli.output
