"""Fixtures on the real services, for the integration and e2e rings. Their conftests import these
names; the unit ring does not, so a unit test that asks for `engine` or `client` fails to collect
instead of quietly reaching a database."""
from __future__ import annotations

import pytest

from tests.support import new_tenant
from tests.support.services import state


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        # a pytest-xdist worker: the controller started the services (its environment, with the
        # PALIMPSEST_DATABASE_URL and _REDIS_URL it set, is this process's) and handed over their state
        state.update(config.workerinput.get("palimpsest_services", {}))
        return
    from tests.support.services import start

    start()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001  (pytest-xdist's hook, on the controller)
    """Hand each xdist worker the services this session started (one database, one Redis for all)."""
    node.workerinput["palimpsest_services"] = dict(state)


@pytest.fixture(scope="session")
def database_url() -> str:
    return state["url"]


@pytest.fixture(scope="session")
def redis_url() -> str:
    return state["redis_url"]


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


@pytest.fixture
def tenant(engine) -> tuple[int, str]:
    """A fresh tenant and a read+write key: tests never see each other's data."""
    return new_tenant(engine)


@pytest.fixture
def make_tenant(engine):
    return lambda scopes=("read", "write"): new_tenant(engine, scopes)
