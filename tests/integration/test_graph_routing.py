"""Every path that enqueues graph work routes it by conversation (#18 item 4, app/domain/queues.py):
the dispatch after ingest, the kick after consolidation (the graph waits for it) and the beat
sweeper's send of pending outbox rows (what a forget, a regate or a language change leaves it). The broker is not reached: the Celery dispatcher's
`publish` is recorded, with the queue each task would go to."""
from __future__ import annotations

import pytest

from app.adapters import dispatch
from app.adapters.dispatch import CeleryDispatcher
from app.domain.event import Event
from app.domain.layer_registry import LAYERS
from app.domain.queues import queue_for, shard_of
from app.services import layers
from app.services.ingest import ingest
from app.settings import get_settings
from app.storage import outbox

SHARDS = 4


@pytest.fixture
def sent(monkeypatch):
    out: list[tuple[str, list[int], str | None]] = []
    monkeypatch.setattr(dispatch, "publish", lambda task, args, queue=None: out.append((task, args[0], queue)) or True)
    monkeypatch.setattr(get_settings(), "celery_queue", "routing-test")
    monkeypatch.setattr(get_settings(), "graph_shards", SHARDS)
    return out


def graph_tasks(sent, owners: dict[int, tuple[int, str]]) -> list[tuple[list[int], str | None]]:
    """The graph tasks among `sent` that carry these events (other tests' rows may be swept too)."""
    return [(pks, q) for task, pks, q in sent if task == LAYERS["graph"] and set(pks) & set(owners)]


def assert_routed(tasks, owners: dict[int, tuple[int, str]], only_ours: bool = True) -> None:
    """Each task's events (of this test) are of conversations of the task's shard. The sweeper also
    re-sends other tests' stale rows (`only_ours=False`): those may share a task of their shard."""
    assert tasks
    for pks, queue in tasks:
        ours = [pk for pk in pks if pk in owners]
        assert not only_ours or len(ours) == len(pks), "a graph task mixes this test's events with others'"
        assert {queue_for("graph", "routing-test", SHARDS, owners[pk]) for pk in ours} == {queue}, (pks, queue)


def test_ingest_kick_and_sweep_route_graph_tasks_to_their_conversations_shard(engine, tenant, sent):
    tid, _ = tenant
    by_shard: dict[int, str] = {}
    for i in range(100):  # three conversations of this tenant on three different shards
        by_shard.setdefault(shard_of(tid, f"conv-{i}", SHARDS), f"conv-{i}")
    convs = [by_shard[s] for s in sorted(by_shard)[:3]]
    batch = [Event(conversation_id=c, event_id=f"{c}-{i}", speaker="Ann" if i % 2 else "Bob",
                   content=f"Ann met Priya at the Tallow Studio pottery class, visit {i} in {c}.")
             for i in range(6) for c in convs]
    results = ingest(tid, batch, CeleryDispatcher(256))
    owners = {r.id: (tid, r.conversation_id) for r in results}
    at_ingest = graph_tasks(sent, owners)
    assert_routed(at_ingest, owners)
    assert sorted(pk for pks, _ in at_ingest for pk in pks) == sorted(owners)  # each event once
    assert len({q for _, q in at_ingest}) == 3
    embed = [(pks, q) for task, pks, q in sent if task == LAYERS["embed"]]
    assert embed == [(list(owners), "routing-test")]  # the rest: one task on the deployment's queue

    # the graph waits for consolidate: when consolidate finishes a conversation, its graph is sent
    sent.clear()
    layers.embed_pending(list(owners))
    layers.run_for_pks("consolidate", list(owners), CeleryDispatcher(256))
    kicked = graph_tasks(sent, owners)
    assert_routed(kicked, owners)
    assert {owners[pks[0]][1] for pks, _ in kicked} == set(convs)

    # the sweeper sends what is pending and not enqueued: here the conversations made pending again as a
    # forget, a regate or a language change does (the rows left for the sweeper)
    sent.clear()
    with engine.begin() as conn:
        outbox.mark_conversations_pending(conn, tid, convs, ["graph"])
    with engine.connect() as conn:
        pending = {pk for c in convs for pk in outbox.pending_in_conversation(conn, "graph", tid, c)}
    assert pending == set(owners)
    swept = layers.sweep_once(CeleryDispatcher(256))
    assert swept["graph"] >= len(owners)
    again = graph_tasks(sent, owners)
    assert_routed(again, owners, only_ours=False)
    assert sorted(pk for pks, _ in again for pk in pks if pk in owners) == sorted(owners)
