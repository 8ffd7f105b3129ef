"""Which backing services a process talks to: the configured URLs, or, when none is configured, the
embedded PostgreSQL and Redis (app/embedded.py), started on demand under `var_dir`.

The decision lives here, with the processes, not in storage: `app/storage/db.py` only takes a URL.
Each process's entry point calls `install()` once (the CLI before any command, the API app when it
is created, the Celery app when it is made); it starts nothing until a connection is first needed.
"""
from __future__ import annotations

from app.settings import get_settings
from app.storage import db


def database_url() -> str:
    """The configured database URL, or the embedded server's (started or attached to now)."""
    s = get_settings()
    if s.database_url:
        return db.normalise_url(s.database_url)
    from app.embedded import ensure_postgres

    return ensure_postgres(s.var_dir)


def redis_url() -> str:
    """The configured Redis URL (the Celery broker, the rate limiter), or the embedded server's."""
    s = get_settings()
    if s.redis_url:
        return s.redis_url
    from app.embedded import ensure_redis

    return ensure_redis(s.var_dir)


def install() -> None:
    """Let storage fall back on the embedded database when no URL is configured."""
    db.set_fallback_url(database_url)
