"""End to end with real processes: uvicorn + a Celery worker on the test database and Redis (the
session's shared live service, tests/support/stack.py; this test works in a tenant of its own).

A paraphrased question (no word in common with the evidence) must find the right event through
the dense signal once the worker has embedded the conversation.
"""
from __future__ import annotations

import time

import httpx
import pytest

from tests.support import accesses
from tests.support.stack import live, log_line  # noqa: F401  (live: the session's API + worker)

pytestmark = pytest.mark.slow

TURNS = [
    ("Maya", "I adopted a golden retriever puppy named Biscuit last weekend."),
    ("Leo", "My sister is getting married in Lisbon this October."),
    ("Maya", "Work has been stressful; the quarterly audit is due Friday."),
    ("Leo", "I've been learning to play the cello for about six months."),
    ("Maya", "We repainted the kitchen a pale shade of green."),
]


def test_post_index_and_find_by_meaning(live, tenant, engine):
    tid, key = tenant
    logs = live.logs
    h = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=live.url, headers=h, timeout=30) as c:
        events = [{"conversation_id": "e2e", "event_id": f"t{i}", "speaker": s, "content": text,
                   "occurred_at": f"2024-06-0{i + 1}T12:00:00Z"} for i, (s, text) in enumerate(TURNS)]
        posted = c.post("/v1/events", json={"events": events}, headers={"X-Request-ID": "e2e-trace-42"})
        assert posted.status_code == 200 and posted.headers["x-request-id"] == "e2e-trace-42"
        deadline = time.time() + 180
        while True:
            st = c.get("/v1/conversations/e2e/status").json()
            if st["pending"]["embed"] == 0:
                break
            assert time.time() < deadline, f"not indexed in time: {st}; logs in {logs}"
            time.sleep(0.2)
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
            assert time.time() < deadline, f"heat not bumped by the worker; logs in {logs}"
            time.sleep(0.2)

        # the CLI prints the same evidence as a table with per-signal ranks
        from typer.testing import CliRunner

        from app.cli import app as cli

        r = CliRunner().invoke(cli, ["query", "musical instrument lessons", "--url", live.url,
                                     "--api-key", key, "-c", "e2e", "-p", "lexical=false"], env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        assert "cello" in r.output and "dense" in r.output and "lexical" not in r.output  # stage off

        # a retry after indexing creates nothing and leaves nothing pending
        again = c.post("/v1/events", json={"events": events}).json()["results"]
        assert {r["status"] for r in again} == {"duplicate"}
        assert c.get("/v1/conversations/e2e/status").json()["pending"]["embed"] == 0

    # the request id followed the events into the worker's structured log
    log_line(logs / "worker.log", lambda line: "embedded" in line and "request_id=e2e-trace-42" in line)

    from sqlalchemy import text

    with engine.connect() as conn:
        n = conn.execute(text(
            "SELECT count(*) FROM embeddings em JOIN events e ON e.id = em.event_pk "
            "WHERE e.tenant_id = :t AND e.conversation_id = 'e2e'"), {"t": tid}).scalar_one()
    assert n == 5  # exactly one vector per event

