"""The Dockerfile, checked without a container engine (docs/deploy.md lists what was not run):
multi-stage on python:3.11-slim, CPU torch pinned in the builder, a non-root runtime with the hub off,
every package and the migrations copied, entrypoint and default command real `palimpsest` commands."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from tests.integration.deploy_support import ROOT, DOCKERFILE, cli_commands, cli_accepts


ROLES = {"serve", "worker", "beat", "flower", "migrate"}


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
