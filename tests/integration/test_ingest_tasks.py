"""What ingest and the embed task send, through the real Celery dispatcher with its `publish` recorded
(the broker is not reached), and the tasks themselves run in this process as a worker runs them
(`Task.apply`: the same task code and success hook):

- a tenant whose encoding gate is off gets no gate outbox rows and no gate task, and every layer
  still indexes (the dependants of the gate do not wait for it);
- an embed task that marked no row done (a re-send of done rows, or a duplicate that lost the race
  to a concurrent task) sends nothing, and the task that did the embedding starts the waiting layers.
"""
from __future__ import annotations

import pytest

from app.adapters import dispatch
from app.adapters.dispatch import CeleryDispatcher
from app.domain.event import Event
from app.domain.layer_registry import LAYERS
from app.services import layers
from app.services.ingest import ingest
from app.settings import get_settings
from app.storage import outbox
from app.storage.layer_runs import layer_counts
from app.storage.tenants import set_tenant_gate_mode
from tests.integration.layers_wiring_support import TURNS

TASK_LAYER = {task: layer for layer, task in LAYERS.items()}


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, list[int]]]:
    out: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(dispatch, "publish", lambda task, args, queue=None: out.append((task, list(args[0]))) or True)
    monkeypatch.setattr(get_settings(), "gate_mode_default", "off")
    return out


@pytest.fixture(scope="module")
def tasks():
    """The worker's tasks by name (importing the modules also connects the embed task's success hook)."""
    import workers.layerbase  # noqa: F401  (the hook that starts the layers waiting on the embed layer)
    from workers.celery_app import celery

    celery.loader.import_default_modules()
    return {name: celery.tasks[name] for name in LAYERS.values()}


def post(tenant_id: int, conv: str) -> list[int]:
    batch = [Event(conversation_id=conv, event_id=str(i), speaker=s, content=c, occurred_at=at)
             for i, (s, c, at) in enumerate(TURNS)]
    return [r.id for r in ingest(tenant_id, batch, CeleryDispatcher(256))]


def pending(engine, tenant_id: int, conv: str) -> dict[str, int]:
    with engine.connect() as conn:
        return outbox.pending_counts(conn, tenant_id, conv)


def test_with_the_gate_off_a_post_sends_no_gate_task_and_every_layer_indexes(engine, make_tenant, sent, tasks):
    tid, _ = make_tenant()
    pks = post(tid, "off")
    assert sorted(TASK_LAYER[t] for t, _ in sent) == sorted(["embed", "consolidate", "surprise", "engrams", "graph"])
    assert all(ids == pks for _, ids in sent)
    assert pending(engine, tid, "off") == {"embed": 8, "consolidate": 8, "surprise": 8, "engrams": 8, "graph": 8}

    ran: list[str] = []
    while sent:  # a worker: every task sent, in order, including those the tasks send on
        task, ids = sent.pop(0)
        tasks[task].apply(args=[ids]).get()
        ran.append(TASK_LAYER[task])
    assert "gate" not in ran
    assert ran.count("consolidate") == 2 and ran.count("graph") == 2  # at ingest, and kicked when ready
    assert pending(engine, tid, "off") == dict.fromkeys(["embed", "consolidate", "surprise", "engrams", "graph"], 0)
    with engine.connect() as conn:
        counts = layer_counts(conn, tid, "off")
    assert counts["episodes"] == 2 and counts["speaker_profiles"] == 2 and counts["nodes_by_kind"], counts


def test_with_the_gate_on_a_post_sends_the_gate_task(engine, make_tenant, sent):
    tid, _ = make_tenant()
    with engine.begin() as conn:
        set_tenant_gate_mode(conn, tid, "tag")
    post(tid, "on")
    assert "gate" in {TASK_LAYER[t] for t, _ in sent}
    assert pending(engine, tid, "on")["gate"] == 8


def test_a_resent_embed_task_whose_rows_are_done_sends_nothing(engine, make_tenant, sent, tasks):
    tid, _ = make_tenant()
    pks = post(tid, "resent")
    sent.clear()
    embed = tasks[LAYERS["embed"]]
    assert embed.apply(args=[pks]).get() == len(pks)
    assert [TASK_LAYER[t] for t, _ in sent] == ["consolidate"]  # the layer that waited for the vectors
    sent.clear()
    assert embed.apply(args=[pks]).get() == 0  # as the sweeper would re-send it, consolidate still pending
    assert pending(engine, tid, "resent")["consolidate"] == 8
    assert sent == []


def test_the_task_that_embedded_starts_the_waiting_layers_not_the_one_that_lost_the_race(
        engine, make_tenant, sent, tasks, monkeypatch):
    """Two embed tasks for the same events: the second (`late`) read them as pending, then the
    first (`early`) embedded and committed while `late` was encoding."""
    tid, _ = make_tenant()
    pks = post(tid, "race")
    sent.clear()
    embed = tasks[LAYERS["embed"]]
    real = layers.get_embedder()
    seen: dict[str, object] = {}

    class Racing:
        name = real.name

        def encode(self, texts):  # noqa: ANN001, ANN202
            if "early" not in seen:  # the late task is encoding: the early one runs from start to end
                seen["early"] = "running"
                seen["early"] = embed.apply(args=[pks]).get()
                seen["sent_by_early"] = list(sent)
            return real.encode(texts)

    monkeypatch.setattr(layers, "get_embedder", lambda: Racing())
    late = embed.apply(args=[pks]).get()
    assert seen["early"] == len(pks) and late == 0
    assert [TASK_LAYER[t] for t, _ in seen["sent_by_early"]] == ["consolidate"]  # the early one kicked
    assert sent == seen["sent_by_early"]  # the late one sent nothing more
    assert pending(engine, tid, "race")["embed"] == 0
