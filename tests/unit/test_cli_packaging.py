"""The CLI's shape and the product's import graph: the benchmark and the training job ship as
commands of `palimpsest` (entry points) while the product never imports them, and storage takes
the URL it is given (the embedded fallback is the runtime's decision, app/runtime.py)."""
from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
import typer

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("app", "workers", "palimpsest")


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_the_product_never_imports_the_benchmark_or_the_training_code() -> None:
    found = [f"{p.relative_to(ROOT)}: {name}"
             for pkg in PRODUCT for p in sorted((ROOT / pkg).rglob("*.py"))
             for name in _imports(p) if name.split(".")[0] in ("bench", "training")]
    assert not found, found


def test_storage_never_imports_the_process_launcher() -> None:
    found = [f"{p.relative_to(ROOT)}: {name}" for p in sorted((ROOT / "app" / "storage").rglob("*.py"))
             for name in _imports(p) if name in ("app.embedded", "app.runtime")]
    assert not found, found


def test_every_command_is_there_plugins_included() -> None:
    from app.cli import app

    root = typer.main.get_command(app)
    names = set(root.commands)  # type: ignore[attr-defined]
    assert {"run", "serve", "worker", "beat", "flower", "migrate", "mcp", "tenants", "export", "import",
            "rebuild", "regate", "query"} <= names
    # found through the `palimpsest.commands` entry points (pyproject.toml) of the installed package
    assert {"bench", "train-reranker", "train-embedder"} <= names, "reinstall the package (pip install -e .) for its entry points"
    assert {"locomo", "beam", "ablate", "scale", "load", "layers"} <= set(root.commands["bench"].commands)  # type: ignore[attr-defined]


def test_storage_falls_back_only_on_the_runtime(monkeypatch, tmp_path) -> None:
    import app.embedded
    from app import runtime
    from app.storage import db

    unset = SimpleNamespace(database_url=None, redis_url=None, var_dir=tmp_path)
    monkeypatch.setattr(db, "get_settings", lambda: unset)
    monkeypatch.setattr(runtime, "get_settings", lambda: unset)
    monkeypatch.setattr(db, "_fallback_url", None)
    started: list[Path] = []
    monkeypatch.setattr(app.embedded, "ensure_postgres",
                        lambda var: started.append(var) or "postgresql://postgres@/palimpsest?host=%2Fsock")
    with pytest.raises(RuntimeError, match="no database configured"):
        db.database_url()
    runtime.install()
    assert started == []  # nothing starts until a URL is asked for
    assert db.database_url() == "postgresql+psycopg://postgres@/palimpsest?host=%2Fsock"
    assert started == [tmp_path]
    configured = SimpleNamespace(database_url="postgres://u@db/x", redis_url="redis://r:6379/0", var_dir=tmp_path)
    monkeypatch.setattr(db, "get_settings", lambda: configured)
    monkeypatch.setattr(runtime, "get_settings", lambda: configured)
    assert db.database_url() == "postgresql+psycopg://u@db/x" and runtime.redis_url() == "redis://r:6379/0"
    assert started == [tmp_path]
