"""The load benchmark, bounded and small: concurrent writers and readers against a real stack,
then every acknowledged event stored and indexed by every layer."""
from __future__ import annotations

import asyncio

import pytest

from tests.support import own_queue
from app.embedded import ServiceStack
from app.storage import tenants
from bench.load import LoadOptions, markdown, run_load

pytestmark = pytest.mark.slow


def test_load_run_loses_nothing(tmp_path, database_url, redis_url):
    key = tenants.new_key()
    with ServiceStack(var_dir=tmp_path, api_key=key, database_url=database_url, redis_url=redis_url, queue=own_queue(),
                      log_dir=tmp_path / "logs", extra_env={"PALIMPSEST_RATE_LIMIT_PER_MINUTE": "0"}) as stack:
        res = asyncio.run(run_load(stack.base_url, key, LoadOptions(duration_s=6, writers=2, readers=2, batch=10,
                                                                    conversations_per_writer=2, rate=20),
                                   log=lambda m: None, index_timeout_s=300))
    assert res.acknowledged_events > 0 and res.queries > 0
    assert res.errors == 0 and res.missing_events == 0 and res.unindexed_events == 0
    assert res.time_to_indexed_s is not None
    assert "sustained ingest" in markdown(res)
