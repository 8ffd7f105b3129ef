"""Which backing services a process talks to: the configured URLs, or, when none is configured, the
embedded PostgreSQL and Redis (app/embedded.py), started on demand under `var_dir`.

The decision lives here, with the processes, not in storage: `app/storage/db.py` only takes a URL.
Each process's entry point calls `install()` once (the CLI before any command, the API app when it
is created, the Celery app when it is made); it starts nothing until a connection is first needed.

What a process starts here it stops: `stop_started()` stops the embedded servers this process
started (not one that was already up, e.g. under a running `palimpsest run`); the CLI calls it when
a command ends.
"""
from __future__ import annotations

from pathlib import Path

from app.settings import get_settings
from app.storage import db

_started: dict[str, Path] = {}  # "postgres" / "redis" -> var_dir, for servers this process started


def database_url() -> str:
    """The configured database URL, or the embedded server's (started or attached to now)."""
    s = get_settings()
    if s.database_url:
        return db.normalise_url(s.database_url)
    from app import embedded

    if "postgres" not in _started and not embedded.postgres_running(s.var_dir):
        _started["postgres"] = Path(s.var_dir)
    return embedded.ensure_postgres(s.var_dir)


def redis_url() -> str:
    """The configured Redis URL (the Celery broker, the rate limiter), or the embedded server's."""
    s = get_settings()
    if s.redis_url:
        return s.redis_url
    from app import embedded

    if "redis" not in _started and not embedded.redis_running(s.var_dir):
        _started["redis"] = Path(s.var_dir)
    return embedded.ensure_redis(s.var_dir)


def install() -> None:
    """Let storage fall back on the embedded database when no URL is configured."""
    db.set_fallback_url(database_url)


def started_here() -> dict[str, Path]:
    """The embedded servers this process started (name -> var_dir)."""
    return dict(_started)


def stop_started() -> list[str]:
    """Stop the embedded servers this process started; return their names. Connections are closed first."""
    from app import embedded

    stopped = []
    if "postgres" in _started:
        if db.get_engine.cache_info().currsize:  # close the pool before the server goes
            db.get_engine().dispose()
        embedded.stop_postgres(_started.pop("postgres"))
        stopped.append("postgres")
    if "redis" in _started:
        embedded.stop_redis(_started.pop("redis"))
        stopped.append("redis")
    return stopped
