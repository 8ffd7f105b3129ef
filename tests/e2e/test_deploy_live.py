"""The deployment files' health checks, for real: the compose file's and the k8s worker probes'
exact commands against a live API and Celery worker. The files themselves are checked in
tests/integration/test_deploy.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.integration.test_deploy import compose, pod_specs


@pytest.fixture(scope="session")
def live_deploy(tmp_path_factory, database_url, redis_url):
    from tests.e2e.test_sdk import (
        live_service,  # the API + worker shared with the SDK and MCP tests
    )

    with live_service(tmp_path_factory.mktemp("live-deploy"), database_url, redis_url) as svc:
        yield svc


@pytest.mark.slow
def test_health_check_commands_pass_on_the_live_service(live_deploy) -> None:
    """The exact health-check commands of the compose file and the worker probes, run against a
    live API and Celery worker (pointed at their port and host instead of a container's)."""
    import socket

    services = compose()["services"]
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ.get('PATH', '')}", "HOSTNAME": socket.gethostname()}
    port = urlparse(live_deploy.url).netloc
    for name in ("api",):
        test = services[name]["healthcheck"]["test"]
        assert test[0] == "CMD"
        argv = [a.replace("127.0.0.1:8000", port) for a in test[1:]]
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (name, r.stderr)
    shell = services["worker"]["healthcheck"]["test"]
    assert shell[0] == "CMD-SHELL"
    probes = [shell[1].replace("$$", "$")]
    worker = pod_specs()["palimpsest-worker"]["spec"]["containers"][0]
    probes += [worker[p]["exec"]["command"] for p in ("livenessProbe", "readinessProbe")]
    for probe in probes:
        argv = ["sh", "-c", probe] if isinstance(probe, str) else probe
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90)
        assert r.returncode == 0, (probe, r.stdout, r.stderr)
        assert "/dev/null" in argv[-1] or "pong" in r.stdout
    # and a worker name that does not exist fails the check (so the check can fail at all)
    r = subprocess.run(["sh", "-c", probes[0]], env={**env, "HOSTNAME": "no-such-host"}, capture_output=True,
                       text=True, timeout=90)
    assert r.returncode != 0
