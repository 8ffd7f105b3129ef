"""The integration ring runs on the real services: its `pytest_configure` starts the embedded PostgreSQL
and Redis (once, shared with the other ring) before its test modules are imported."""
from __future__ import annotations

from tests.support.fixtures import (  # noqa: F401  (pytest finds fixtures and hooks by name here)
    client,
    database_url,
    engine,
    make_tenant,
    pytest_configure,
    pytest_configure_node,
    redis_url,
    tenant,
)
