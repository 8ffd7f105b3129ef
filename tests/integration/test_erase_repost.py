"""A conversation erased and posted again under the same ids is indexed again, as if it were new.

Real processes (the session's shared API + Celery worker, tests/support/stack.py; no beat, so the
tasks of the first post are the only ones sent for it): the first post's tasks name events that
the erasure deleted. Whether they already ran, are running or still wait in the queue, they must
neither mark the new events done nor hold them back, and the erasure must leave no per-conversation
state (outbox rows, layer state, locks) that keeps the second post from draining.
"""
from __future__ import annotations

import time

import httpx
import pytest

from tests.support import auth
from tests.support.stack import live  # noqa: F401  (live: the session's API + worker)

pytestmark = pytest.mark.slow

ADMIN = ("read", "write", "admin")
CONV = "erase-repost"
TURNS = [
    ("Maya", "I adopted a golden retriever puppy named Biscuit last weekend."),
    ("Leo", "My sister is getting married in Lisbon this October."),
    ("Maya", "Work has been stressful; the quarterly audit is due Friday."),
    ("Leo", "I've been learning to play the cello for about six months."),
    ("Maya", "We repainted the kitchen a pale shade of green."),
    ("Leo", "We moved to Denver last month."),
]
EVENTS = [{"conversation_id": CONV, "event_id": f"t{i}", "speaker": s, "content": text,
           "occurred_at": f"2024-06-0{i + 1}T12:00:00Z"} for i, (s, text) in enumerate(TURNS)]


def post_all(c: httpx.Client) -> list[str]:
    r = c.post("/v1/events", json={"events": EVENTS})
    assert r.status_code == 200, r.text
    return [x["status"] for x in r.json()["results"]]


def status(c: httpx.Client) -> dict:
    r = c.get(f"/v1/conversations/{CONV}/status")
    assert r.status_code == 200, r.text
    return r.json()


def wait_until(c: httpx.Client, done, what: str, logs, timeout: float = 240.0) -> dict:
    deadline = time.time() + timeout
    while True:
        st = status(c)
        if done(st):
            return st
        assert time.time() < deadline, f"{what}: still {st}; logs in {logs}"
        time.sleep(0.2)


def erase(c: httpx.Client) -> int:
    r = c.delete(f"/v1/conversations/{CONV}")
    assert r.status_code == 200, r.text
    return r.json()["deleted_events"]


def test_an_erased_conversation_posted_again_drains_and_is_found(live, make_tenant):
    _, key = make_tenant(ADMIN)
    with httpx.Client(base_url=live.url, headers=auth(key), timeout=30) as c:
        # 1. indexing has started (every event embedded, later layers may still run), then erase and re-post
        assert post_all(c) == ["created"] * len(TURNS)
        wait_until(c, lambda st: st["pending"]["embed"] == 0, "first post not embedded", live.logs)
        assert erase(c) == len(TURNS)
        gone = c.get(f"/v1/conversations/{CONV}/status")  # nothing of it is left, its pending work neither
        assert gone.status_code == 404 and gone.json()["error"] == "not_found" and CONV in gone.json()["detail"]
        assert post_all(c) == ["created"] * len(TURNS)  # the same ids are new events again
        # 2. erased again at once, while the tasks of the post before wait in the queue or run
        assert erase(c) == len(TURNS)
        assert post_all(c) == ["created"] * len(TURNS)

        st = wait_until(c, lambda st: all(n == 0 for n in st["pending"].values()),
                        "the re-posted conversation never finished indexing", live.logs)
        assert st["events"] == len(TURNS)
        assert set(st["pending"]) == {"embed", "gate", "consolidate", "surprise", "engrams", "graph"}

        # found by meaning alone (the dense signal: the new events have vectors)...
        out = c.post("/v1/query", json={"query": "What animal joined her household?", "conversation_id": CONV,
                                        "top_k": 3, "pipeline": {"lexical": False}}).json()
        assert out["items"][0]["event_id"] == "t0" and set(out["items"][0]["signals"]) == {"dense"}
        # ... and by words, and the conversation-level layers were rebuilt from the new events
        out = c.post("/v1/query", json={"query": "cello lessons", "conversation_id": CONV}).json()
        assert out["items"][0]["event_id"] == "t3"
        speakers = c.get(f"/v1/conversations/{CONV}/speakers").json()["speakers"]
        assert {p["speaker"] for p in speakers} == {"Maya", "Leo"}
