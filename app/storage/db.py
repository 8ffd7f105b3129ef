"""Engine and connections, on the URL the process is given: the configured one, else the one its
runtime supplies (app/runtime.py decides on the embedded server; storage only takes a URL)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import BigInteger, ColumnElement, Connection, Engine, any_, bindparam, create_engine, event
from sqlalchemy.dialects.postgresql import ARRAY

from app.settings import get_settings

_fallback_url: Callable[[], str] | None = None


def set_fallback_url(source: Callable[[], str]) -> None:
    """Where the URL comes from when none is configured. The process's runtime sets it
    (app/runtime.py: the embedded server, started on first use); storage never decides that."""
    global _fallback_url
    _fallback_url = source


def database_url() -> str:
    """The configured URL, else the runtime's fallback; an error when there is neither."""
    s = get_settings()
    if s.database_url:
        return normalise_url(s.database_url)
    if _fallback_url is None:
        raise RuntimeError("no database configured: set PALIMPSEST_DATABASE_URL, or call app.runtime.install() "
                           "at the process's start for the embedded default")
    return normalise_url(_fallback_url())


def normalise_url(url: str) -> str:
    # psycopg 3 is the driver; accept the plain URLs people paste.
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def make_engine(url: str, pool_size: int | None = None, max_overflow: int | None = None) -> Engine:
    """One pooled engine per process (QueuePool): `db_pool_size` connections kept open, up to
    `db_max_overflow` more under load, a wait of `db_pool_timeout_s` for a free one, connections
    checked before use (pre-ping) and replaced after `db_pool_recycle_s`. Forked Celery children
    dispose the parent's pool (workers/celery_app.py)."""
    s = get_settings()
    engine = create_engine(
        normalise_url(url),
        pool_size=pool_size or s.db_pool_size,
        max_overflow=s.db_max_overflow if max_overflow is None else max_overflow,
        pool_timeout=s.db_pool_timeout_s,
        pool_pre_ping=True,
        pool_recycle=s.db_pool_recycle_s,
    )

    @event.listens_for(engine, "connect")
    def _register_vector(dbapi_conn, _record):  # noqa: ANN001
        from pgvector.psycopg import register_vector

        register_vector(dbapi_conn)

    return engine


@lru_cache
def get_engine() -> Engine:
    return make_engine(database_url())


@contextmanager
def transaction(engine: Engine | None = None) -> Iterator[Connection]:
    with (engine or get_engine()).begin() as conn:
        yield conn


@contextmanager
def connect(engine: Engine | None = None) -> Iterator[Connection]:
    with (engine or get_engine()).connect() as conn:
        yield conn


def ping(engine: Engine | None = None) -> None:
    """One round trip (`SELECT 1`); raises when the database cannot answer (the readiness check)."""
    with (engine or get_engine()).connect() as conn:
        conn.exec_driver_sql("SELECT 1")


def any_pk(values, name: str = "pks") -> ColumnElement:
    """`= ANY(:pks)` with the ids as one array parameter. `IN (...)` renders a placeholder per id, so
    its statement text changes with every list length: psycopg can never prepare it, and rendering a
    few hundred placeholders costs more than the index lookup it asks for."""
    return any_(bindparam(name, [int(v) for v in values], type_=ARRAY(BigInteger)))


def refresh_statistics(engine: Engine | None = None) -> None:
    """ANALYZE the database now, as autovacuum would about a minute after a bulk load. Until then the
    planner believes the freshly filled tables are empty and picks plans for that: a conversation's
    dense search ran as a nested loop over every event pair, 28 ms instead of 2.5 (docs/pipeline.md)."""
    with (engine or get_engine()).connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE")
