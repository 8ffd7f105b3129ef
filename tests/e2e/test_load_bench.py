"""The load benchmark, bounded and small: concurrent writers and readers against a real stack (the
session's shared API + worker, in a tenant of this test's own), then every acknowledged event stored
and indexed by every layer."""
from __future__ import annotations

import asyncio

import pytest

from bench.load import LoadOptions, markdown, run_load
from tests.support.stack import live  # noqa: F401  (the session's API + worker)

pytestmark = pytest.mark.slow


def test_load_run_loses_nothing(live, tenant):
    _, key = tenant
    res = asyncio.run(run_load(live.url, key, LoadOptions(duration_s=6, writers=2, readers=2, batch=10,
                                                          conversations_per_writer=2, rate=20),
                               log=lambda m: None, index_timeout_s=300))
    assert res.acknowledged_events > 0 and res.queries > 0
    assert res.errors == 0 and res.missing_events == 0 and res.unindexed_events == 0
    assert res.time_to_indexed_s is not None
    assert "sustained ingest" in markdown(res)
