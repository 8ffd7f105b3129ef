"""The query endpoint in-process: lexical evidence right after the POST, filters, budgets, ablation."""
from __future__ import annotations

import re

from app.adapters.embedder import count_tokens
from tests.support import auth

CONV = [
    ("Ana", "We finally moved to Denver last spring, the mountains are gorgeous.", "2024-03-02T10:00:00Z"),
    ("Ben", "Nice! Did you bring your cat Miso along?", "2024-03-02T10:01:00Z"),
    ("Ana", "Of course, Miso hates the snow though.", "2024-03-02T10:02:00Z"),
    ("Ben", "I started a new job at the bakery on Main Street.", "2024-04-10T09:00:00Z"),
    ("Ana", "Congrats on the bakery job! What do you bake?", "2024-04-10T09:01:00Z"),
    ("Ben", "Mostly sourdough bread and cinnamon rolls.", "2024-04-10T09:02:00Z"),
]


def load(client, key, conv="talk"):
    events = [{"conversation_id": conv, "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(CONV)]
    r = client.post("/v1/events", headers=auth(key), json={"events": events})
    assert r.status_code == 200


def q(client, key, **body):
    r = client.post("/v1/query", headers=auth(key), json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_lexical_finds_events_as_soon_as_post_returns(client, tenant):
    _, key = tenant
    load(client, key)
    out = q(client, key, query="Where does Ana live, Denver?", conversation_id="talk")
    top = out["items"][0]
    assert top["event_id"] == "0"
    assert "lexical" in top["signals"] and top["signals"]["lexical"]["rank"] == 1
    assert top["in_context"] is True
    assert "Ana: We finally moved to Denver" in out["context"]


def _stamps(context: str) -> list[str]:
    """Each turn's "YYYY-MM-DD HH:MM", read from the compact stamps: a day's first line has the date
    and time, a new minute its time, a line in the same minute as the one above none."""
    out, day, time = [], "", ""
    for line in context.splitlines():
        if line.endswith("left out to fit the token budget.]"):
            continue
        full = re.match(r"\[(\d{4}-\d\d-\d\d) (\d\d:\d\d)\] ", line)
        short = re.match(r"\[(\d\d:\d\d)\] ", line)
        if full:
            day, time = full.groups()
        elif short:
            time = short.group(1)
        assert day, line  # the first line says its date
        out.append(f"{day} {time}")
    return out


def test_context_is_time_ordered_dated_and_within_budget(client, tenant):
    _, key = tenant
    load(client, key)
    for budget in (15, 40, 2000):
        out = q(client, key, query="bakery job sourdough Miso Denver", conversation_id="talk", token_budget=budget)
        assert out["context_tokens"] <= budget
        assert count_tokens(out["context"]) == out["context_tokens"]
        stamps = _stamps(out["context"])
        assert stamps == sorted(stamps)
    small = q(client, key, query="bakery job", conversation_id="talk", token_budget=25)
    assert sum(it["in_context"] for it in small["items"]) < len(small["items"])


def test_filters_speakers_and_time_range(client, tenant):
    _, key = tenant
    load(client, key)
    out = q(client, key, query="bakery job bread", conversation_id="talk", speakers=["Ana"])
    assert out["items"] and all(it["speaker"] == "Ana" for it in out["items"])
    out = q(client, key, query="bakery Denver Miso bread", conversation_id="talk",
            time_range={"start": "2024-04-01T00:00:00Z"})
    assert out["items"] and all(it["occurred_at"] >= "2024-04-01" for it in out["items"])


def test_top_k_and_pipeline_switches(client, tenant):
    _, key = tenant
    load(client, key)
    out = q(client, key, query="bakery", conversation_id="talk", top_k=1)
    assert len(out["items"]) == 1
    off = q(client, key, query="bakery", conversation_id="talk", pipeline={"lexical": False, "dense": False})
    assert off["items"] == [] and off["context"] == "" and off["context_items"] == []
    assert off["pipeline"]["lexical"] is False and off["pipeline"]["dense"] is False
    knobs = {"window_max_days": 31, "reweight_depth": 40, "abstain_dense_floor": 0.2, "abstain_rerank_floor": 0.6}
    assert q(client, key, query="bakery", conversation_id="talk", pipeline=knobs)["pipeline"].items() >= knobs.items()
    plain = q(client, key, query="bakery", conversation_id="talk", pipeline={"recipe": "hybrid_rrf"})["pipeline"]
    assert plain["lexical"] and plain["dense"] and not plain["graph"] and not plain["rerank"]


def test_query_validation(client, tenant):
    _, key = tenant
    bad = [
        ({"query": ""}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "token_budget": 10**9}, "token_budget"),
        ({"query": "x", "pipeline": {"nope": True}}, "pipeline.nope"),
        ({"query": "x", "pipeline": {"window_max_days": -1}}, "pipeline.window_max_days"),
        ({"query": "x", "pipeline": {"reweight_depth": 0}}, "pipeline.reweight_depth"),
        ({"query": "x", "pipeline": {"abstain_rerank_floor": 2}}, "pipeline.abstain_rerank_floor"),
        ({"query": "x", "pipeline": {"recipe": "bm25"}}, "pipeline.recipe"),
        ({"query": "x", "time_range": {"start": "2024-02-01T00:00:00Z", "end": "2024-01-01T00:00:00Z"}}, "time_range"),
    ]
    for body, field in bad:
        r = client.post("/v1/query", headers=auth(key), json=body)
        assert r.status_code == 422, body
        assert field in {f["path"] for f in r.json()["fields"]}, r.json()


def test_openapi_documents_the_endpoints(client):
    spec = client.get("/openapi.json").json()
    for path in ("/v1/events", "/v1/events/{id}", "/v1/conversations/{conversation_id}/events",
                 "/v1/conversations/{conversation_id}/status", "/v1/query", "/healthz", "/readyz"):
        assert path in spec["paths"], path
    assert client.get("/docs").status_code == 200
    assert "examples" in str(spec["components"]["schemas"]["EventBatch"])


def test_health_and_readiness(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    import time

    deadline = time.time() + 60
    while time.time() < deadline:
        r = client.get("/readyz")
        if r.status_code == 200:
            break
        time.sleep(0.5)
    assert r.status_code == 200 and r.json()["checks"] == {"database": "ok", "broker": "ok", "model": "ok"}


def test_context_items_say_why_each_event_is_there(client, tenant):
    _, key = tenant
    load(client, key)
    out = q(client, key, query="sourdough bread", conversation_id="talk", top_k=1, token_budget=2000)
    reasons = {c["event_id"]: c["reason"] for c in out["context_items"]}
    assert reasons["5"] == "direct evidence"
    assert reasons["4"].startswith("next to #")  # the question this answer replies to
    off = q(client, key, query="sourdough bread", conversation_id="talk", top_k=1, token_budget=2000,
            pipeline={"neighbours": 0})
    assert not any(c["reason"].startswith("next to #") for c in off["context_items"])
    assert len(out["context_items"]) == len(out["context"].splitlines()) - (1 if out["left_out"] else 0)
    tight = q(client, key, query="bakery job bread Denver Miso", conversation_id="talk", token_budget=40)
    assert tight["left_out"] > 0 and tight["context"].endswith("left out to fit the token budget.]")


def test_body_is_the_response_models_json_and_server_timing_names_each_stage(client, tenant):
    from pydantic import TypeAdapter

    from app.api.schemas import QueryOut

    _, key = tenant
    load(client, key)
    r = client.post("/v1/query", headers=auth(key), json={"query": "bakery job", "conversation_id": "talk"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    # byte for byte what FastAPI writes for response_model=QueryOut (pydantic's JSON of the model)
    assert r.content == TypeAdapter(QueryOut).dump_json(QueryOut.model_validate_json(r.content), by_alias=True)
    timings = r.json()["timings_ms"]
    assert "lexical" in timings and "heat" in timings
    assert r.headers["server-timing"] == ", ".join(f"{k};dur={v:.1f}" for k, v in timings.items())
