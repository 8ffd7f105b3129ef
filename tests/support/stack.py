"""One live service for the whole test session: uvicorn + a Celery worker (`app.embedded.ServiceStack`) on
the session's database and Redis, started by the first test that asks for it and stopped at the end.

Starting a stack costs two Python processes that each import the app and load the embedder (tens of
seconds on two cores), so every test that only *talks* to a running service shares this one: the SDK,
MCP and deploy checks, the end-to-end path, the load run, the worker that builds every layer. Each of
those tests works in its own tenant (`tenant`, `make_tenant`, `new_tenant`), so sharing the processes
shares no data. A test that kills, restarts or reconfigures a process (tests/e2e/test_faults.py), or
needs settings the shared one does not have, starts its own stack.

Use it by importing the fixture into a test module (or a conftest):

    from tests.support.stack import live  # noqa: F401  (a fixture)

`live` yields a `Live` (base URL, the bootstrap key of tenant 'dev', the folder of the process logs).
However many modules import it, one stack runs: `live_service` counts its users.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

_LIVE: dict = {}


@dataclass
class Live:
    url: str
    key: str  # the bootstrap key (tenant 'dev', every scope)
    logs: Path  # api.log and worker.log


@contextmanager
def live_service(root: Path, database_url: str, redis_url: str) -> Iterator[Live]:
    """One API + worker for every user (reference-counted): start once, stop after the last."""
    from app.embedded import ServiceStack
    from app.storage import tenants
    from tests.support import own_queue

    if not _LIVE.get("refs"):
        key = tenants.new_key()
        stack = ServiceStack(var_dir=root, api_key=key, database_url=database_url, redis_url=redis_url,
                             queue=own_queue(), log_dir=root / "logs")
        try:
            stack.start()
        except BaseException:
            stack.stop()  # nothing left running when it did not come up (logs under root/logs)
            raise
        _LIVE.update(stack=stack, live=Live(stack.base_url, key, root / "logs"), refs=0)
    _LIVE["refs"] += 1
    try:
        yield _LIVE["live"]
    finally:
        _LIVE["refs"] -= 1
        if _LIVE["refs"] == 0:
            _LIVE.pop("stack").stop()
            _LIVE.clear()


@pytest.fixture(scope="session")
def live(tmp_path_factory, database_url, redis_url) -> Iterator[Live]:
    """The session's live service (see the module's docstring)."""
    with live_service(tmp_path_factory.mktemp("live"), database_url, redis_url) as svc:
        yield svc


def log_size(path: Path) -> int:
    """Where a log ends now: pass it as `since` to `log_line` to look only at what comes after."""
    return path.stat().st_size if path.exists() else 0


def log_line(path: Path, match: Callable[[str], bool], since: int = 0, timeout: float = 30.0) -> str:
    """The first line of a running process's log, from byte `since` on, that `match`es (the process
    is still up, so the line may reach the file a moment after what caused it); fails, with the
    log's tail, when none comes."""
    deadline = time.monotonic() + timeout
    while True:
        text = (path.read_bytes()[since:] if path.exists() else b"").decode(errors="replace")
        found = next((ln for ln in text.splitlines() if match(ln)), None)
        if found is not None:
            return found
        assert time.monotonic() < deadline, f"no such line in {path} after {timeout:.0f}s; it ends:\n{text[-2000:]}"
        time.sleep(0.2)
