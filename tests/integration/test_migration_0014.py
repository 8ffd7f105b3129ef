"""Migration 0014 against the real database: every column that stores a layer's version takes 255
characters after the upgrade (a graph built from an LLM's claims names a 65-character version), and the
downgrade narrows them back once no longer value is stored."""
from __future__ import annotations

import pytest
from sqlalchemy import text

LONG = "graph/4+llm_assertions/2+assertions/10+timeparse/14+llm_extract/3+" + "x" * 40  # 106 characters
COLUMNS = {(t, "layer_version") for t in ("episodes", "assertions", "contradictions", "speaker_profiles", "graph_nodes",
                                          "graph_edges", "layer_runs", "layer_state")} | {
    ("event_signals", c) for c in ("surprise_version", "consolidation_version", "graph_version")}


def widths(eng) -> dict[tuple[str, str], int]:  # noqa: ANN001
    with eng.connect() as c:
        rows = c.execute(text("SELECT table_name, column_name, character_maximum_length FROM information_schema.columns "
                              "WHERE table_schema = 'public' AND (column_name = 'layer_version' OR column_name LIKE '%\\_version')"
                              )).all()
    return {(t, col): n for t, col, n in rows if (t, col) in COLUMNS}


def store_run(eng, tenant: int, version: str) -> None:  # noqa: ANN001
    with eng.begin() as c:
        c.execute(text("INSERT INTO layer_runs (tenant_id, conversation_id, layer, layer_version, events) "
                       "VALUES (:t, 'c', 'graph', :v, 1)"), {"t": tenant, "v": version})


def test_migration_0014_widens_every_layer_version_column(database_url):
    from app.storage.migrate import downgrade, upgrade
    from tests.support import scratch_database

    with scratch_database(database_url, "mig14") as (url, eng):
        upgrade(url, "0013")
        assert widths(eng) == {k: 64 for k in COLUMNS}
        with eng.begin() as c:
            tenant = c.execute(text("INSERT INTO tenants (name) VALUES ('m') RETURNING id")).scalar_one()
        with pytest.raises(Exception, match="too long"):
            store_run(eng, tenant, LONG)
        upgrade(url, "0014")
        assert widths(eng) == {k: 255 for k in COLUMNS}
        store_run(eng, tenant, LONG)
        with eng.connect() as c:
            assert c.execute(text("SELECT layer_version FROM layer_runs")).scalar_one() == LONG
        with pytest.raises(Exception):  # a longer version is stored: the downgrade refuses, nothing is cut
            downgrade(url, "0013")
        with eng.begin() as c:
            c.execute(text("DELETE FROM layer_runs"))
        downgrade(url, "0013")
        assert widths(eng) == {k: 64 for k in COLUMNS}
