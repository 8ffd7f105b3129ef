"""The deployment as a whole: `palimpsest migrate` registers the bootstrap key every role is handed, and
docs/deploy.md says what was not run. The files themselves: test_deploy_docker.py,
test_deploy_compose.py, test_deploy_k8s.py; their health checks run live in tests/e2e/test_deploy_live.py."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.integration.deploy_support import ROOT


def test_migrate_registers_the_bootstrap_key(database_url, engine) -> None:
    """Compose and the k8s Secret hand PALIMPSEST_BOOTSTRAP_API_KEY to every role; the one-shot
    `palimpsest migrate` is what makes it a working key of the 'dev' tenant."""
    from app.storage import tenants

    key = tenants.new_key()
    env = {**os.environ, "PALIMPSEST_DATABASE_URL": database_url, "PALIMPSEST_BOOTSTRAP_API_KEY": key}
    r = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "migrate"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with engine.connect() as conn:
        who = tenants.authenticate(conn, key)
    assert who is not None and who.tenant_name == "dev" and "admin" in who.scopes


def test_deploy_doc_says_what_was_not_run() -> None:
    doc = (ROOT / "docs" / "deploy.md").read_text()
    for needle in ("docker compose", "kubectl apply -k deploy/k8s", "ef_search", "ef_construction", "replica",
                   "What was not run here"):
        assert needle in doc, needle
