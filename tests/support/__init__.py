"""Helpers shared by the test rings. Importing this package starts nothing: the database and Redis
come up only in `tests.support.services`, which the integration and e2e conftests call."""
from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def own_queue() -> str:
    """A Celery queue for one test's stack: stacks share the test Redis, and a worker of another
    stack (the SDK tests keep one up for the session) must not take this stack's tasks."""
    return f"test-{secrets.token_hex(4)}"


def new_tenant(engine, scopes=("read", "write")) -> tuple[int, str]:  # noqa: ANN001
    """A fresh tenant and a key with these scopes: tests never see each other's data."""
    from app.storage import tenants

    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, f"t-{secrets.token_hex(4)}")
        key = tenants.create_key(conn, tid, scopes=scopes)
    return tid, key


def accesses(engine, pks: list[int]) -> int:  # noqa: ANN001
    """How many times retrieval handed out these events (the heat layer's access counts)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        return conn.execute(text("SELECT coalesce(sum(access_count), 0) FROM event_signals WHERE event_pk = ANY(:p)"),
                            {"p": list(pks)}).scalar_one()


@contextmanager
def scratch_database(database_url: str, prefix: str = "scratch") -> Iterator[tuple[str, object]]:
    """An empty database beside the test one (same server), with an engine on it: (url, engine).
    Nothing is migrated; it is dropped afterwards. For tests of migrations and of a stack's own data."""
    from sqlalchemy.engine import make_url

    from app.embedded import create_database, drop_database
    from app.storage.db import make_engine

    base = make_url(database_url)
    admin = base.set(database="postgres").render_as_string(hide_password=False)
    name = f"{prefix}_{secrets.token_hex(4)}"
    create_database(admin, name)
    url = base.set(database=name).render_as_string(hide_password=False)
    engine = make_engine(url)
    try:
        yield url, engine
    finally:
        engine.dispose()
        drop_database(admin, name)
