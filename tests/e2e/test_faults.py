"""Fault injection with real processes: a worker killed with SIGKILL mid-batch, Redis stopped during
ingest, PostgreSQL restarted under load. After recovery every committed event is indexed exactly
once, and while a dependency is down the API answers 503 with Retry-After, never 500.
"""
from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from app.embedded import ServiceStack, ensure_redis, stop_redis
from tests.support import accesses, new_tenant, own_queue

pytestmark = pytest.mark.slow

FAST_SWEEP = {"PALIMPSEST_SWEEP_INTERVAL_S": "2", "PALIMPSEST_SWEEP_STALE_AFTER_S": "6",
              "PALIMPSEST_INDEX_CHUNK_SIZE": "32", "PALIMPSEST_RATE_LIMIT_PER_MINUTE": "0"}


def batch(conv: str, start: int, n: int) -> dict:
    return {"events": [{"conversation_id": conv, "event_id": str(i), "speaker": "S",
                        "content": f"event number {i} about topic {i % 7}"} for i in range(start, start + n)]}


def wait_indexed(c: httpx.Client, conv: str, expect: int, timeout: float = 240) -> dict:
    deadline = time.time() + timeout
    while True:
        try:
            st = c.get(f"/v1/conversations/{conv}/status").json()
            if st["events"] == expect and all(n == 0 for n in st["pending"].values()):
                return st
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        assert time.time() < deadline, f"not indexed in {timeout}s"
        time.sleep(0.25)


def assert_exactly_once(engine, tenant_id: int, conv: str, n: int) -> None:
    with engine.connect() as conn:
        row = conn.execute(text(
            "SELECT count(DISTINCT e.id), count(em.event_pk), count(DISTINCT em.event_pk) "
            "FROM events e LEFT JOIN embeddings em ON em.event_pk = e.id "
            "WHERE e.tenant_id = :t AND e.conversation_id = :c"), {"t": tenant_id, "c": conv}).one()
        pending = conn.execute(text(
            "SELECT count(*) FROM indexing_state WHERE tenant_id = :t AND conversation_id = :c AND done_at IS NULL"),
            {"t": tenant_id, "c": conv}).scalar_one()
    assert tuple(row) == (n, n, n) and pending == 0


@pytest.fixture
def own_database(database_url):
    """A migrated database of this test's own on the session's server. The beat sweeper of a stack
    re-sends every stale outbox row of its database, and the session's database holds the rows other
    tests left pending (their stacks are gone): on a busy machine this stack's worker would spend
    minutes on them before it reaches this test's events."""
    from app.storage.migrate import upgrade
    from tests.support import scratch_database

    with scratch_database(database_url, "faults") as (url, engine):
        upgrade(url)
        yield url, engine


@pytest.fixture
def stack_factory(tmp_path, database_url):
    stacks = []

    def make(redis_url: str, db_url: str | None = None) -> tuple[ServiceStack, int, str]:
        """A stack of this test's own, and a tenant of its own in the stack's database (not the
        bootstrap tenant 'dev', which other stacks on the session's database share)."""
        s = ServiceStack(var_dir=tmp_path, database_url=db_url or database_url, redis_url=redis_url,
                         queue=own_queue(), beat=True, extra_env=FAST_SWEEP, log_dir=tmp_path / "logs")
        s.start()
        stacks.append(s)
        from app.storage.db import make_engine

        engine = make_engine(s.database_url)
        try:
            tid, key = new_tenant(engine)
        finally:
            engine.dispose()
        return s, tid, key

    yield make
    for s in stacks:
        s.stop()


@pytest.fixture
def own_postgres():
    """An embedded PostgreSQL of this test's own (migrated), so that restarting it disturbs no other
    test: not the session's live service, nor a test running beside it under pytest-xdist."""
    import shutil
    import tempfile

    from app.embedded import ensure_postgres, stop_postgres
    from app.storage.migrate import upgrade

    root = Path(tempfile.mkdtemp(prefix="palimpsest-faults-"))
    root.chmod(0o755)  # the server runs as its own user, which must reach its socket (pytest's tmp is 0700)
    var = root / "var"
    try:
        url = ensure_postgres(var)
        upgrade(url)
        yield var, url
    finally:
        stop_postgres(var)
        shutil.rmtree(root, ignore_errors=True)


def test_worker_killed_mid_batch_loses_nothing(own_database, stack_factory, redis_url):
    db_url, engine = own_database
    stack, tid, key = stack_factory(redis_url, db_url)
    with httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        for start in range(0, 600, 200):
            assert c.post("/v1/events", json=batch("kill", start, 200)).status_code == 200
        # let the worker get going, then kill it (and its pool child) without a chance to ack
        deadline = time.time() + 120
        while c.get("/v1/conversations/kill/status").json()["pending"]["embed"] == 600:
            assert time.time() < deadline
            time.sleep(0.2)
        stack.kill("worker", signal.SIGKILL)
        left = c.get("/v1/conversations/kill/status").json()["pending"]["embed"]
        assert left > 0, "the worker finished before it could be killed; make the batch larger"
        stack.respawn("worker")
        wait_indexed(c, "kill", 600)
    assert_exactly_once(engine, tid, "kill", 600)


def test_redis_down_during_ingest(own_database, stack_factory, tmp_path):
    db_url, engine = own_database
    rdir = tmp_path / "own-redis"
    url = ensure_redis(rdir)
    stack, tid, key = stack_factory(url, db_url)
    with httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        assert c.post("/v1/events", json=batch("redis", 0, 50)).status_code == 200
        stop_redis(rdir)
        # the broker is gone: writes are still committed and acknowledged
        t0 = time.time()
        for start in range(50, 250, 50):
            r = c.post("/v1/events", json=batch("redis", start, 50))
            assert r.status_code == 200, r.text
        assert time.time() - t0 < 30, "ingest must not hang on a dead broker"
        assert c.get("/readyz").status_code == 503
        # a query still answers; the heat bump it cannot queue is written in its own transaction
        out = c.post("/v1/query", json={"query": "event number 7", "conversation_id": "redis"})
        assert out.status_code == 200, out.text
        handed = [e["id"] for e in out.json()["context_items"]]
        assert handed and accesses(engine, handed) == len(handed)
        ensure_redis(rdir)  # same socket, same data directory
        wait_indexed(c, "redis", 250)
    stack.stop()
    stop_redis(rdir)
    assert_exactly_once(engine, tid, "redis", 250)


def test_postgres_restart_under_load(stack_factory, redis_url, own_postgres):
    from app.embedded import ensure_postgres, stop_postgres
    from app.storage.db import make_engine

    var, db_url = own_postgres
    stack, tid, key = stack_factory(redis_url, db_url)
    engine = make_engine(db_url)
    with httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        assert c.post("/v1/events", json=batch("pg", 0, 100)).status_code == 200
        engine.dispose()
        stop_postgres(var)
        r = c.post("/v1/events", json=batch("pg", 100, 100))
        assert r.status_code == 503 and int(r.headers["Retry-After"]) > 0, r.text
        q = c.post("/v1/query", json={"query": "topic", "conversation_id": "pg"})
        assert q.status_code == 503
        ensure_postgres(var, database="postgres")
        # the client retries what got 503; now it lands
        deadline = time.time() + 60
        while (r := c.post("/v1/events", json=batch("pg", 100, 100))).status_code == 503:
            assert time.time() < deadline
            time.sleep(0.25)
        assert r.status_code == 200
        wait_indexed(c, "pg", 200)
    engine.dispose()
    try:
        assert_exactly_once(engine, tid, "pg", 200)
    finally:
        engine.dispose()
