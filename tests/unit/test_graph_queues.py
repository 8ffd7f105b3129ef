"""Graph tasks get affinity to one process (#18 item 4): which queue a task goes to, that a
conversation's shard is the same in every process, what each worker role consumes, and that the
Celery dispatcher, the Celery app's routes and the worker command agree (app/domain/queues.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from app.adapters import dispatch
from app.domain.layer_registry import LAYERS
from app.domain.queues import graph_queues, group_by_queue, queue_for, shard_of, worker_args, worker_queues

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_graph_tasks_go_to_the_graph_queue_and_the_rest_stay_on_the_deployments() -> None:
    for layer in ("embed", "gate", "consolidate", "surprise", "engrams"):
        assert queue_for(layer, "pal", 1, (1, "c")) == "pal"
        assert queue_for(layer, "pal", 4, (1, "c")) == "pal"
    assert queue_for("graph", "pal", 1, (1, "c")) == "pal.graph"
    assert queue_for("graph", "pal", 1) == "pal.graph"
    assert queue_for("graph", "pal", 4, (1, "alpha")) == "pal.graph.3"
    assert queue_for("graph", "pal", 4) == "pal.graph.0"  # no conversation known: shard 0
    assert graph_queues("pal", 1) == ["pal.graph"]
    assert graph_queues("pal", 3) == ["pal.graph.0", "pal.graph.1", "pal.graph.2"]


def test_a_conversations_shard_is_stable_across_processes_and_spreads() -> None:
    cases = [(1, "alpha", 4), (1, "beta", 4), (2, "alpha", 4), (7, "conv-42", 8), (3, "ü-é", 16)]
    expected = [3, 3, 3, 4, 13]  # fixed: a release that changed them would move every conversation
    assert [shard_of(*c) for c in cases] == expected
    code = f"from app.domain.queues import shard_of; print([shard_of(*c) for c in {cases!r}])"
    for seed in ("1", "2"):  # another process, another str hash salt: the same shards
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": ROOT})
        assert out.stdout.strip() == str(expected)
    counts = [0] * 4
    for i in range(2000):
        counts[shard_of(1, f"conversation-{i}", 4)] += 1
    assert min(counts) > 400, counts
    assert {shard_of(5, f"c{i}", 1) for i in range(50)} == {0}


def test_one_enqueue_is_split_per_shard_only_for_the_graph() -> None:
    owners = {10: (1, "alpha"), 11: (1, "zeta"), 12: (1, "alpha"), 13: (2, "x")}
    assert group_by_queue("embed", list(owners), "pal", 4, owners) == {"pal": [10, 11, 12, 13]}
    groups = group_by_queue("graph", list(owners), "pal", 4, owners)
    assert groups == {"pal.graph.3": [10, 12], "pal.graph.0": [11], "pal.graph.2": [13]}
    for queue, pks in groups.items():
        assert {queue_for("graph", "pal", 4, owners[pk]) for pk in pks} == {queue}
    assert group_by_queue("graph", [10, 11], "pal", 1, owners) == {"pal.graph": [10, 11]}
    assert group_by_queue("graph", [10, 11], "pal", 4, None) == {"pal.graph.0": [10, 11]}


def test_worker_roles_consume_what_they_say() -> None:
    assert worker_queues("pal", 1) == ["pal", "pal.graph"]
    assert worker_queues("pal", 2, "all") == ["pal", "pal.graph.0", "pal.graph.1"]
    assert worker_queues("pal", 2, "main") == ["pal"]
    assert worker_queues("pal", 2, "graph") == ["pal.graph.0", "pal.graph.1"]
    assert worker_queues("pal", 2, "graph", 1) == ["pal.graph.1"]
    with pytest.raises(ValueError):
        worker_queues("pal", 2, "graph", 2)
    with pytest.raises(ValueError):
        worker_queues("pal", 2, "main", 0)
    args = worker_args("pal", 1, "graph")
    assert args[args.index("-Q") + 1] == "pal.graph" and args[args.index("--concurrency") + 1] == "1"
    assert args[args.index("-n") + 1] == "graph@%h"


@pytest.fixture
def sent(monkeypatch):
    """What the Celery dispatcher sends: (task name, event pks, queue), the broker never reached."""
    out: list[tuple[str, list[int], str | None]] = []
    monkeypatch.setattr(dispatch, "publish", lambda task, args, queue=None: out.append((task, args[0], queue)) or True)
    return out


def test_the_dispatcher_routes_graph_tasks_by_conversation(sent, monkeypatch) -> None:
    from app.settings import get_settings

    monkeypatch.setattr(get_settings(), "celery_queue", "pal")
    monkeypatch.setattr(get_settings(), "graph_shards", 4)
    owners = {pk: (1, "alpha" if pk % 2 else "gamma") for pk in range(1, 7)}  # shards 3 and 1
    d = dispatch.CeleryDispatcher(chunk_size=2)
    assert d.enqueue("embed", list(owners), owners) == 3
    assert d.enqueue("graph", list(owners), owners) == 4  # two conversations, three events each, chunks of 2
    embed = [s for s in sent if s[0] == LAYERS["embed"]]
    graph = [s for s in sent if s[0] == LAYERS["graph"]]
    assert [q for *_, q in embed] == ["pal"] * 3 and [p for _, p, _ in embed] == [[1, 2], [3, 4], [5, 6]]
    for _, pks, queue in graph:
        assert {queue_for("graph", "pal", 4, owners[pk]) for pk in pks} == {queue}
    assert {q for *_, q in graph} == {queue_for("graph", "pal", 4, (1, "alpha")),
                                      queue_for("graph", "pal", 4, (1, "gamma"))} == {"pal.graph.3", "pal.graph.1"}


def test_a_graph_task_sent_without_a_queue_is_routed_to_the_graph(monkeypatch) -> None:
    """What a retry or a bare send_task gets: the app's routes, not the default queue."""
    from workers.celery_app import celery

    route = celery.amqp.router.route({}, LAYERS["graph"], (), {})
    assert route["queue"].name.endswith(".graph")
    assert celery.amqp.router.route({}, LAYERS["embed"], (), {})["queue"].name == celery.conf.task_default_queue
    explicit = celery.amqp.router.route({"queue": "pal.graph.3"}, LAYERS["graph"], (), {})
    assert explicit["queue"].name == "pal.graph.3"
    consumed = {q.name for q in celery.conf.task_queues}
    assert consumed == {celery.conf.task_default_queue, route["queue"].name}  # a bare worker takes them all


def test_the_worker_command_refuses_a_multi_process_graph_worker(monkeypatch) -> None:
    from app import cli

    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(cli, "_celery", lambda *a: ran.append(a))
    runner = CliRunner()
    bad = runner.invoke(cli.app, ["worker", "--role", "graph", "--concurrency", "2"])
    assert bad.exit_code != 0 and "one process" in bad.output and not ran
    assert runner.invoke(cli.app, ["worker", "--role", "graph"]).exit_code == 0
    assert runner.invoke(cli.app, ["worker", "--role", "main", "--concurrency", "2"]).exit_code == 0
    assert runner.invoke(cli.app, ["worker"]).exit_code == 0
    graph, main, default = (dict(zip(a, a[1:])) for a in ran)
    assert graph["-Q"].endswith(".graph") and graph["--concurrency"] == "1"
    assert "graph" not in main["-Q"] and main["--concurrency"] == "2"
    assert default["-Q"] == f"{main['-Q']},{graph['-Q']}"
