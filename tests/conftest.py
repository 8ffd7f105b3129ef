"""What every ring shares: the settings tests run under, the packaged embedder, and the rings as
markers. Nothing here starts a service: `tests/integration/conftest.py` and `tests/e2e/conftest.py`
start PostgreSQL and Redis (`tests/support/services.py`), so `pytest tests/unit` runs without them.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import services

TESTS = Path(__file__).resolve().parent
RINGS = ("unit", "integration", "e2e")
# The benchmark data beside the repository (LoCoMo, BEAM), as the benchmark itself finds it.
SHARED_DATA = Path(os.environ.get("PALIMPSEST_BENCH_DATA") or TESTS.parents[1] / "shared" / "data").resolve()


def pytest_configure(config: pytest.Config) -> None:
    os.environ["PALIMPSEST_LOG_JSON"] = "false"
    # Tests must not depend on a reranker someone trained into var/: the stage's own tests build one.
    os.environ.setdefault("PALIMPSEST_RERANKER_MODEL_PATH", str(services.var_dir() / "no-reranker"))
    os.environ.pop("PALIMPSEST_BOOTSTRAP_API_KEY", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        services.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its ring (`-m "not e2e"`), and skip a test marked `needs_shared_data`
    when the data sets it names (LoCoMo unless told) are not beside the repository."""
    for item in items:
        rel = Path(str(item.path)).resolve().relative_to(TESTS).parts
        if rel and rel[0] in RINGS:
            item.add_marker(rel[0])
        marker = item.get_closest_marker("needs_shared_data")
        if marker:
            missing = [name for name in (marker.args or ("locomo",)) if not (SHARED_DATA / name).exists()]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"no shared data {', '.join(missing)} at {SHARED_DATA}"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The benchmark data folder; tests that read it are marked `needs_shared_data`."""
    return SHARED_DATA


@pytest.fixture(scope="session")
def embedder():
    from app.adapters.embedder import get_embedder

    return get_embedder()
