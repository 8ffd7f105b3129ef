"""Graph tasks keep their affinity on a live stack (#18 item 4): a main worker with two processes
beside a single-process graph worker (what `palimpsest run --workers 2`, the compose file and the
Kubernetes manifests run). Several batches posted to one conversation: every graph batch runs in the
graph worker, every one after the first on the assembly it holds, none in the main worker, and the
graph it ends with equals what `palimpsest rebuild --layer graph` computes from the same log."""
from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.embedded import ServiceStack
from tests.e2e.test_faults import wait_indexed
from tests.integration.deploy_support import compose
from tests.integration.test_incremental_graph import items, read, rebuilt
from tests.support import new_tenant, own_queue

pytestmark = pytest.mark.slow


def graph_runs(log: Path, tenant_id: int, conv: str) -> list[dict]:
    """The graph's `layer_built` lines of this conversation in a worker's log (JSON lines)."""
    out = []
    for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("event") == "layer_built" and rec.get("layer") == "graph" and rec.get("conversation") == conv \
                and rec.get("tenant") == tenant_id:
            out.append(rec)
    return out


def test_graph_batches_land_on_the_worker_that_holds_the_assembly(tmp_path, database_url, redis_url, engine):
    stack = ServiceStack(var_dir=tmp_path, database_url=database_url, redis_url=redis_url, queue=own_queue(),
                         worker_concurrency=2, log_dir=tmp_path / "logs",
                         extra_env={"PALIMPSEST_RATE_LIMIT_PER_MINUTE": "0", "PALIMPSEST_LOG_JSON": "true"})
    assert set(stack.worker_commands()) == {"worker", "graph-worker"}
    tid, key = new_tenant(engine)
    conv = "affinity"
    evs = items()
    cuts = sorted(random.Random(5).sample(range(1, len(evs)), 6))
    with stack:
        with httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
            for a, b in zip([0, *cuts], [*cuts, len(evs)]):
                body = {"events": [{"conversation_id": conv, "event_id": f"e{a + i}", "speaker": s, "content": t,
                                    "occurred_at": at.isoformat()} for i, (s, t, at) in enumerate(evs[a:b])]}
                r = c.post("/v1/events", json=body)
                assert r.status_code == 200, r.text
                wait_indexed(c, conv, b)
            grown = read(engine, c, key, tid, conv)
            logs = tmp_path / "logs"
            in_graph = graph_runs(logs / "graph-worker.log", tid, conv)
            in_main = graph_runs(logs / "worker.log", tid, conv)
            assert in_main == [], "a graph task ran in the main worker"
            assert len(in_graph) == 7, in_graph  # one run per batch
            assert [r["run"] for r in in_graph] == ["full"] + ["incremental"] * 6
            assert [r["assembly"] for r in in_graph[1:]] == ["held"] * 6
            assert grown["nodes"] and grown["api"]["nodes"]
            assert rebuilt(engine, c, key, tid, conv) == grown
        # the compose file's health check of its graph worker passes against this one (named graph@host)
        shell = compose()["services"]["graph-worker"]["healthcheck"]["test"][1].replace("$$", "$")
        env = {**stack.env(), "HOSTNAME": socket.gethostname(),
               "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
        ping = subprocess.run(["sh", "-c", shell], env=env, capture_output=True, text=True, timeout=120)
        assert ping.returncode == 0, (ping.stdout, ping.stderr)
