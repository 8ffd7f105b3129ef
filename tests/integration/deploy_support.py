"""What the deployment-file tests share (test_deploy*.py here, tests/e2e/test_deploy_live.py): the
files' paths, the CLI's commands and the API's routes they must name, and the parsed Compose file and
k8s pod specs."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml


ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "deploy" / "docker-compose.yml"
K8S = ROOT / "deploy" / "k8s"


@lru_cache
def cli_commands() -> frozenset[str]:
    import typer.main

    from app.cli import app

    return frozenset(typer.main.get_command(app).commands)


def cli_accepts(args: list[str]) -> None:
    """`palimpsest ARGS --help` parses: the command exists and takes these options."""
    from typer.testing import CliRunner

    from app.cli import app

    assert args and args[0] in cli_commands(), f"{args!r}: not a palimpsest command ({sorted(cli_commands())})"
    res = CliRunner().invoke(app, [*args, "--help"])
    assert res.exit_code == 0, f"palimpsest {' '.join(args)}: {res.output}"


@lru_cache
def app_routes() -> frozenset[tuple[str, str]]:
    """(METHOD, path) of every route of app.api.main.app: the OpenAPI operations plus the plain
    Starlette routes that are not in the schema."""
    from starlette.routing import Route

    from app.api.main import app

    routes = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    for r in app.routes:
        if isinstance(r, Route) and type(r).__name__ != "APIRoute":
            for m in r.methods or {"GET", "POST"}:
                routes.add((m, r.path))
    return frozenset(routes)


def assert_get_route(path: str) -> None:
    from fastapi.testclient import TestClient

    from app.api.main import app

    assert ("GET", path) in app_routes(), f"GET {path} is not a route of the API"
    # and it answers (no lifespan here: /readyz says 503 'model loading', which is still the route)
    r = TestClient(app, raise_server_exceptions=False).get(path)
    assert r.status_code in (200, 503), (path, r.status_code)


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _flower_has_route(path: str) -> bool:
    import flower.urls

    pats = [h[0] if isinstance(h, tuple) else h.regex.pattern for h in flower.urls.handlers]
    return any(re.fullmatch(p.pattern if hasattr(p, "pattern") else p, path) for p in pats if p != ".*")


def manifests() -> list[dict]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def by(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


def pod_specs() -> dict[str, dict]:
    out = {name: d["spec"]["template"] for name, d in by("Deployment").items()}
    out.update({name: d["spec"]["template"] for name, d in by("Job").items()})
    return out
