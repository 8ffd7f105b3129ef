"""The CLI's import on the database: idempotent, resumable from its checkpoint, and it needs one
destination. The file readers' own tests are in tests/unit/test_importers.py."""
from __future__ import annotations

from sqlalchemy import text
from typer.testing import CliRunner

from app.cli import app as cli
from tests.unit.test_importers import LME, OPENAI, write


def _count(engine, tenant: str) -> int:
    with engine.connect() as conn:
        return conn.execute(text(
            "SELECT count(*) FROM events e JOIN tenants t ON t.id = e.tenant_id WHERE t.name = :n"), {"n": tenant}
        ).scalar_one()


def test_import_is_idempotent_and_resumes_from_checkpoint(tmp_path, engine):
    runner = CliRunner()
    path = write(tmp_path, "m.json", LME)
    r = runner.invoke(cli, ["import", str(path), "--format", "longmemeval", "--tenant", "imp-a", "--batch", "1"])
    assert r.exit_code == 0 and "imported 3 events (0 already present)" in r.output, r.output
    r = runner.invoke(cli, ["import", str(path), "--format", "longmemeval", "--tenant", "imp-a"])
    assert "imported 0 events (3 already present)" in r.output
    assert _count(engine, "imp-a") == 3
    # an interrupted run left a checkpoint after 2 records: the next run does only the rest
    (tmp_path / "m.json.longmemeval.checkpoint").write_text("2")
    r = runner.invoke(cli, ["import", str(path), "--format", "longmemeval", "--tenant", "imp-b"])
    assert "imported 1 events" in r.output and _count(engine, "imp-b") == 1
    assert not (tmp_path / "m.json.longmemeval.checkpoint").exists()


def test_import_needs_one_destination(tmp_path):
    r = CliRunner().invoke(cli, ["import", str(write(tmp_path, "o.json", OPENAI)), "--format", "openai"])
    assert r.exit_code != 0
