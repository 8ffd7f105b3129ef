"""The deployment files' health checks, for real: the compose file's and the k8s worker probes'
exact commands against a live API and Celery worker. The files themselves are checked in
tests/integration/test_deploy*.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.integration.deploy_support import compose, pod_specs
from tests.support.stack import live  # noqa: F401  (the session's API + worker, shared with the SDK and MCP tests)


@pytest.mark.slow
def test_health_check_commands_pass_on_the_live_service(live) -> None:
    """The exact health-check commands of the compose file and the worker probes, run against a
    live API and Celery worker (pointed at their port and host instead of a container's). The
    commands run side by side (each starts a Python of its own): the test waits for the slowest."""
    import socket

    services = compose()["services"]
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ.get('PATH', '')}", "HOSTNAME": socket.gethostname()}
    port = urlparse(live.url).netloc
    test = services["api"]["healthcheck"]["test"]
    assert test[0] == "CMD"
    api_check = [a.replace("127.0.0.1:8000", port) for a in test[1:]]
    shell = services["worker"]["healthcheck"]["test"]
    assert shell[0] == "CMD-SHELL"
    probes = [["sh", "-c", shell[1].replace("$$", "$")]]
    worker = pod_specs()["palimpsest-worker"]["spec"]["containers"][0]
    for kind in ("livenessProbe", "readinessProbe"):
        command = worker[kind]["exec"]["command"]
        if command not in probes:  # the same command twice is run once
            probes.append(command)
    runs = {"api": subprocess.Popen(api_check, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)}
    for i, argv in enumerate(probes):
        runs[f"probe {i}"] = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # and a worker name that does not exist fails the check (so the check can fail at all)
    runs["no such worker"] = subprocess.Popen(probes[0], env={**env, "HOSTNAME": "no-such-host"},
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        done = {name: (proc, *proc.communicate(timeout=120)) for name, proc in runs.items()}
    finally:  # nothing left running when one of them hung
        for proc in runs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for name, (proc, out, err) in done.items():
        if name == "no such worker":
            assert proc.returncode != 0, (name, out, err)
        else:
            assert proc.returncode == 0, (name, proc.args, out, err)
    for i, argv in enumerate(probes):
        assert "/dev/null" in argv[-1] or "pong" in done[f"probe {i}"][1]
