"""End to end with real processes: uvicorn + a Celery worker on the test database and Redis.

A paraphrased question (no word in common with the evidence) must find the right event through
the dense signal once the worker has embedded the conversation.
"""
from __future__ import annotations

import time

import httpx
import pytest

from tests.support import accesses, own_queue
from app.embedded import ServiceStack
from app.storage import tenants

pytestmark = pytest.mark.slow

TURNS = [
    ("Maya", "I adopted a golden retriever puppy named Biscuit last weekend."),
    ("Leo", "My sister is getting married in Lisbon this October."),
    ("Maya", "Work has been stressful; the quarterly audit is due Friday."),
    ("Leo", "I've been learning to play the cello for about six months."),
    ("Maya", "We repainted the kitchen a pale shade of green."),
]


def test_post_index_and_find_by_meaning(tmp_path, database_url, redis_url, engine):
    key = tenants.new_key()
    stack = ServiceStack(var_dir=tmp_path, api_key=key, database_url=database_url, redis_url=redis_url, queue=own_queue(),
                         log_dir=tmp_path / "logs")
    with stack:
        h = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=stack.base_url, headers=h, timeout=30) as c:
            events = [{"conversation_id": "e2e", "event_id": f"t{i}", "speaker": s, "content": text,
                       "occurred_at": f"2024-06-0{i + 1}T12:00:00Z"} for i, (s, text) in enumerate(TURNS)]
            posted = c.post("/v1/events", json={"events": events}, headers={"X-Request-ID": "e2e-trace-42"})
            assert posted.status_code == 200 and posted.headers["x-request-id"] == "e2e-trace-42"
            deadline = time.time() + 180
            while True:
                st = c.get("/v1/conversations/e2e/status").json()
                if st["pending"]["embed"] == 0:
                    break
                assert time.time() < deadline, f"not indexed in time: {st}; logs in {tmp_path / 'logs'}"
                time.sleep(0.5)
            assert st["events"] == 5

            out = c.post("/v1/query", json={"query": "What animal joined her household?",
                                            "conversation_id": "e2e", "top_k": 3}).json()
            top = out["items"][0]
            assert top["event_id"] == "t0"
            # no word in common with the evidence: only the dense signal can have found it
            assert set(top["signals"]) == {"dense"} and top["signals"]["dense"]["rank"] == 1

            out = c.post("/v1/query", json={"query": "musical instrument lessons", "conversation_id": "e2e",
                                            "pipeline": {"lexical": False}}).json()
            assert out["items"][0]["event_id"] == "t3"
            assert set(out["items"][0]["signals"]) == {"dense"}
            # the reply did not wait for the heat bump: the worker makes what was handed out warmer
            handed = [e["id"] for e in out["context_items"]]
            assert handed and "heat" in out["timings_ms"]
            assert "lexical" not in out["timings_ms"] and "dense" in out["timings_ms"]
            assert "dense;dur=" in c.post("/v1/query", json={"query": "cello", "conversation_id": "e2e"}
                                          ).headers["server-timing"]
            deadline = time.time() + 60
            while accesses(engine, handed) < len(handed):
                assert time.time() < deadline, f"heat not bumped by the worker; logs in {tmp_path / 'logs'}"
                time.sleep(0.5)

            # the CLI prints the same evidence as a table with per-signal ranks
            from typer.testing import CliRunner

            from app.cli import app as cli

            r = CliRunner().invoke(cli, ["query", "musical instrument lessons", "--url", stack.base_url,
                                         "--api-key", key, "-c", "e2e", "-p", "lexical=false"], env={"COLUMNS": "200"})
            assert r.exit_code == 0, r.output
            assert "cello" in r.output and "dense" in r.output and "lexical" not in r.output  # stage off

            # a retry after indexing creates nothing and leaves nothing pending
            again = c.post("/v1/events", json={"events": events}).json()["results"]
            assert {r["status"] for r in again} == {"duplicate"}
            assert c.get("/v1/conversations/e2e/status").json()["pending"]["embed"] == 0

    # the request id followed the events into the worker's structured log
    worker_log = (tmp_path / "logs" / "worker.log").read_text()
    assert any("embedded" in line and "request_id=e2e-trace-42" in line for line in worker_log.splitlines())

    from sqlalchemy import text

    with engine.connect() as conn:
        n = conn.execute(text(
            "SELECT count(*) FROM embeddings em JOIN events e ON e.id = em.event_pk WHERE e.conversation_id = 'e2e'"
        )).scalar_one()
    assert n == 5  # exactly one vector per event

