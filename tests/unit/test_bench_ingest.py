"""The benchmark's ingest in a var dir an earlier run left behind (bench.runner.ingest against a fake
service): `--fresh` on the harness's own var dir erases every conversation, not only the data set's,
and the data set's conversations waiting behind other work is no stall while that work moves.

The incident this guards (a LongMemEval run, 2026-11-24): a run that crashed mid-ingest had posted
70 conversations; the re-run, with 40 of them, erased and re-posted those 40 with `--fresh`, and the
worker spent the next 600 s on the 30 others' queued tasks (11 built) while the 40 waited behind them
in the queue; the harness saw the 40 not move and aborted ("indexing made no progress for 600s").
"""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

import bench.runner as runner
from app.locomo import Conversation, Turn
from bench.datasets import Dataset
from bench.runner import ServiceError, ingest


class FakeService:
    """Conversations with their pending counts; one tick of work per `status` round: the worker
    drains the other conversations' work first (FIFO: it was queued first), then the data set's."""

    def __init__(self, others: dict[str, int], moving: bool = True):
        self.others = dict(others)  # conversation -> events pending (an earlier run's)
        self.mine: dict[str, int] = {}
        self.moving = moving
        self.deleted: list[str] = []

    def delete_conversation(self, cid: str) -> int:
        self.deleted.append(cid)
        return self.others.pop(cid, 0) + self.mine.pop(cid, 0)

    def conversation_ids(self) -> list[str]:
        return [*self.others, *self.mine]

    def post_events(self, events):
        for e in events:
            self.mine[e["conversation_id"]] = self.mine.get(e["conversation_id"], 0) + 1
        return [{"status": "created"} for _ in events]

    def status(self, cid: str) -> dict:
        if cid == next(iter(self.mine)) and self.moving:  # one round of work per round of status calls
            busy = next((c for c, n in self.others.items() if n), None)
            if busy is not None:
                self.others[busy] -= 1
            else:
                todo = next(c for c, n in self.mine.items() if n) if any(self.mine.values()) else None
                if todo is not None:
                    self.mine[todo] -= 1
        return {"events": 1, "pending": {"embed": self.mine.get(cid, 0)}}

    def service_pending(self) -> int:
        return sum(self.others.values()) + sum(self.mine.values())


def dataset(n: int = 2) -> Dataset:
    at = datetime(2024, 1, 1, tzinfo=UTC)
    return Dataset("t", [Conversation(f"mine{i}", [Turn("1", "a", "x", at)]) for i in range(n)], [])


@pytest.fixture
def clock(monkeypatch):
    """A second passes at every look at the clock, and sleeping takes no time."""
    now = [0.0]

    def monotonic() -> float:
        now[0] += 1.0
        return now[0]

    monkeypatch.setattr(runner.time, "monotonic", monotonic)
    monkeypatch.setattr(runner.time, "sleep", lambda _s: None)
    return now


def test_fresh_on_the_harness_var_dir_erases_what_an_earlier_run_left(clock):
    svc, lines = FakeService({"left-a": 3, "left-b": 2}), []
    out = ingest(svc, dataset(), fresh=True, erase_others=True, poll_s=0, log=lines.append)
    assert sorted(svc.deleted) == ["left-a", "left-b", "mine0", "mine1"]
    assert any("also deleted 5 events of 2 other conversations" in ln for ln in lines), lines
    assert out["pending_before"] == 0 and out["created"] == 2


def test_a_fresh_run_against_a_given_service_keeps_its_other_conversations_and_says_they_come_first(clock):
    svc, lines = FakeService({"left-a": 3}), []
    out = ingest(svc, dataset(), fresh=True, poll_s=0, probe_s=0, stall_s=5, log=lines.append)
    assert svc.deleted == ["mine0", "mine1"] and "left-a" in svc.others
    assert out["pending_before"] == 3
    assert any("already has 3" in ln for ln in lines), lines


def test_waiting_behind_other_work_is_no_stall_while_that_work_moves(clock):
    # 30 rounds of other work before the data set's first moves; a stall is 5 rounds without progress
    svc = FakeService({"left-a": 30})
    out = ingest(svc, dataset(), poll_s=0, probe_s=0, stall_s=5, log=lambda _: None)
    assert out["created"] == 2 and svc.service_pending() == 0


def test_nothing_moving_anywhere_is_a_stall(clock):
    svc = FakeService({"left-a": 30}, moving=False)
    with pytest.raises(ServiceError, match=r"no progress for 5s \(2 pending here, 32 in the whole service\)"):
        ingest(svc, dataset(), poll_s=0, probe_s=0, stall_s=5, log=lambda _: None)


def test_the_clients_status_reads_a_404_as_a_conversation_with_nothing_pending():
    """The API answers 404 for a conversation it holds no event of (one the data set has no turn in,
    or one erased); the harness waits on it as on an indexed empty conversation, not an error."""
    import httpx

    from bench.client import Client

    answers = {"/v1/conversations/empty/status": (404, {"error": "not_found", "detail": "conversation 'empty' "
                                                        "not found", "fields": []}),
               "/v1/conversations/full/status": (200, {"conversation_id": "full", "events": 2,
                                                       "pending": {"embed": 1}}),
               "/v1/conversations/broken/status": (403, {"error": "forbidden", "detail": "no", "fields": []})}
    client = Client("http://svc", "key")
    client.http = httpx.Client(base_url="http://svc", transport=httpx.MockTransport(
        lambda req: httpx.Response(answers[req.url.path][0], json=answers[req.url.path][1])))
    assert client.status("empty") == {"conversation_id": "empty", "events": 0, "pending": {}}
    assert runner.pending_total(client.status("empty")) == 0
    assert client.status("full")["pending"] == {"embed": 1}
    with pytest.raises(ServiceError, match="HTTP 403"):
        client.status("broken")
