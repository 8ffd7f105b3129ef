"""Every process the project starts is stopped by what started it. After a CLI command and after a test
session, the process list holds nothing of theirs: no PostgreSQL, no Redis left behind. A command run
beside a running service uses it and leaves it running."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from app.embedded import ensure_postgres, postgres_running, stop_postgres

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).with_name("palimpsest"))


def processes_under(root: Path) -> list[str]:
    """The command lines of the running processes that name a path under `root` (a PostgreSQL's data
    directory, a Redis socket): what the project started there and left running."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if str(root) in cmd and p.pid != os.getpid():
            found.append(f"{p.pid}: {cmd}")
    return found


@pytest.fixture
def tmp_path():  # noqa: F811 - a directory the embedded PostgreSQL's own user can enter (pytest's is 0700)
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="palimpsest-procs-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a newcomer's shell: no services configured (the embedded default), no CI."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PALIMPSEST_") and k not in ("CI", "PYTEST_CURRENT_TEST", "XDG_RUNTIME_DIR")}
    env.update(**extra)
    return env


def cli(var: Path, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([CLI, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env=clean_env(PALIMPSEST_VAR_DIR=str(var)))
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    assert "Warning" not in r.stderr, r.stderr  # a quiet CLI: no RuntimeDirWarning, no deprecations
    return r


def test_cli_commands_stop_what_they_start_and_leave_a_running_server_alone(tmp_path):
    var = tmp_path / "var"
    cli(var, "migrate")
    assert processes_under(tmp_path) == []
    cli(var, "tenants", "create", "acme")
    assert "acme" in cli(var, "tenants", "list").stdout
    assert processes_under(tmp_path) == []
    regated = cli(var, "regate")  # reaches the broker too: the embedded Redis starts and stops
    assert "tenant" in regated.stdout
    assert processes_under(tmp_path) == [] and not postgres_running(var)

    # beside a running server (as under `palimpsest run`), a command uses it and leaves it running
    ensure_postgres(var)
    try:
        assert "acme" in cli(var, "tenants", "list").stdout
        assert postgres_running(var), "the command stopped a server it did not start"
    finally:
        stop_postgres(var)
    assert processes_under(tmp_path) == []


def test_a_test_session_stops_its_services_ci_or_not(tmp_path):
    """A whole pytest session on the integration ring, as `make test` runs it outside CI: afterwards
    neither its PostgreSQL nor its Redis is running."""
    test_var, tmp = tmp_path / "test-var", tmp_path / "tmp"
    tmp.mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/integration/test_error_shape.py::test_blank_content_is_named_in_words"],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
        env=clean_env(PALIMPSEST_TEST_VAR=str(test_var), TMPDIR=str(tmp)))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "1 passed" in r.stdout
    assert (test_var / "pgdata").exists()  # it did start its own PostgreSQL there...
    assert processes_under(tmp_path) == []  # ...and stopped it, and its Redis (socket under TMPDIR)
