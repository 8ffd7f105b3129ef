"""The `palimpsest` command line (typer): the process commands (run, serve, worker, beat, flower,
migrate, mcp) and the layer rebuilds here; tenants, export/import and query in app/commands/; and
whatever ships beside the product (the benchmark, the reranker's training) found through the
`palimpsest.commands` entry points, so the product never imports them."""
from __future__ import annotations

import os
import signal
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path

import typer

from app.commands.query import query_cmd
from app.commands.tenants import tenant_named as _tenant_id
from app.commands.tenants import tenants_app
from app.commands.transfer import export_cmd, import_cmd
from app.settings import get_settings

PLUGIN_GROUP = "palimpsest.commands"

app = typer.Typer(help="Palimpsest: a memory service for AI agents.", no_args_is_help=True)
app.add_typer(tenants_app, name="tenants")


# Commands that hand the embedded servers on: `run` stops what it started itself on Ctrl-C; the
# Celery commands exec into Celery, which shares the servers with the other processes.
_HANDS_ON = {"run", "worker", "beat", "flower"}


@app.callback()
def _services(ctx: typer.Context) -> None:
    # Before any command: with no URL configured, storage falls back on the embedded server (started
    # only when a command first connects). What the command started, it stops when it ends; a server
    # that was already up (a running `palimpsest run`) is used and left running.
    from app.runtime import install, stop_started

    install()
    if ctx.invoked_subcommand not in _HANDS_ON:
        ctx.call_on_close(stop_started)


def _dev_key(var_dir: Path) -> str:
    """The bootstrap key if set, else a dev key generated once and kept under var/."""
    s = get_settings()
    if s.bootstrap_api_key:
        return s.bootstrap_api_key
    from app.storage.tenants import new_key

    path = var_dir / "dev-api-key"
    if path.exists():
        return path.read_text().strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    key = new_key()
    path.write_text(key + "\n")
    path.chmod(0o600)
    return key


@app.command()
def run(
    host: str = typer.Option(None, help="API host (default: PALIMPSEST_HOST)"),
    port: int = typer.Option(None, help="API port (default: PALIMPSEST_PORT)"),
    workers: int = typer.Option(1, help="Celery worker processes"),
) -> None:
    """Start the whole system: API, Celery worker, beat and Flower (embedded services by default)."""
    from app.embedded import ServiceStack, postgres_running, redis_running, stop_postgres, stop_redis

    s = get_settings()
    var_dir = s.var_dir.resolve()
    key = _dev_key(var_dir)
    # stop on exit only the embedded servers this command starts (not ones already up)
    embedded_db = not s.database_url and not postgres_running(var_dir)
    embedded_redis = not s.redis_url and not redis_running(var_dir)
    stack = ServiceStack(
        var_dir=var_dir, host=host or s.host, port=port or s.port, api_key=key,
        database_url=s.database_url, redis_url=s.redis_url, beat=True, flower=True,
        flower_port=s.flower_port, worker_concurrency=workers, log_dir=var_dir / "logs",
    )
    stopping = False

    def _stop(*_args) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        typer.echo("\nStopping...")
        _stop_all()
        typer.echo("Stopped. Data is kept under " + str(var_dir))
        sys.exit(0)

    def _stop_all() -> None:
        stack.stop()
        if embedded_redis:
            stop_redis(var_dir)
        if embedded_db:
            stop_postgres(var_dir)

    signal.signal(signal.SIGTERM, _stop)
    try:
        stack.start()
        base = stack.base_url
        typer.echo(
            "\nPalimpsest is running.\n"
            f"  API:      {base}\n"
            f"  Docs:     {base}/docs\n"
            f"  Explorer: {base}/ui/#key={key}  (opens connected; the key stays in the browser session)\n"
            f"  Flower:   http://{stack.host}:{stack.flower_port}\n"
            f"  Logs:     {var_dir / 'logs'}\n"
            f"  Dev API key (tenant 'dev'): {key}\n\n"
            f"  curl -H 'Authorization: Bearer {key}' {base}/v1/status   (the tenant, its key's scopes, language and layers)\n"
            "  Then the README's example: post the readme-demo conversation and read its /timeline.\n\n"
            "Press Ctrl-C to stop."
        )
        while True:
            for name, proc in stack.procs.items():
                if proc.poll() is not None:
                    typer.echo(f"{name} exited with {proc.returncode}; see {var_dir / 'logs' / (name + '.log')}")
                    _stop()
            time.sleep(1)
    except KeyboardInterrupt:
        _stop()
    except Exception:
        _stop_all()
        raise


@app.command()
def migrate() -> None:
    """Apply database migrations (Alembic) up to the newest revision."""
    from app.storage.db import database_url
    from app.storage.migrate import upgrade

    upgrade(database_url())
    typer.echo("database is at the newest revision")
    s = get_settings()
    if s.bootstrap_api_key:  # compose and k8s hand the first key to the migrate job
        from app.storage import tenants
        from app.storage.db import transaction

        with transaction() as conn:
            tenants.ensure_bootstrap_key(conn, s.bootstrap_tenant, s.bootstrap_api_key)
        typer.echo(f"bootstrap API key registered for tenant '{s.bootstrap_tenant}'")


@app.command()
def mcp() -> None:
    """Serve the memory as MCP tools over stdio, for agent hosts (PALIMPSEST_URL, PALIMPSEST_API_KEY)."""
    from app.api.mcp import run_stdio

    run_stdio()


@app.command()
def serve(host: str = typer.Option(None), port: int = typer.Option(None)) -> None:
    """Run only the API server (uvicorn), on the configured services."""
    import uvicorn

    s = get_settings()
    uvicorn.run("app.api.main:app", host=host or s.host, port=port or s.port, proxy_headers=True)


def _celery(*args: str) -> None:
    os.execvp(sys.executable, [sys.executable, "-m", "celery", "-A", "workers.celery_app", *args])


@app.command()
def worker(
    concurrency: int = typer.Option(1, help="worker processes"),
    role: str = typer.Option("all", help="all: every queue (one worker runs everything); main: every task but "
                                         "the graph's; graph: the graph's queues only, in one process"),
    graph_shard: int = typer.Option(None, "--graph-shard", envvar="PALIMPSEST_GRAPH_SHARD",
                                    help="a graph worker of this shard only (0 .. PALIMPSEST_GRAPH_SHARDS-1)"),
) -> None:
    """Run a Celery worker. The graph layer keeps each conversation's assembly in the process that built
    its last batch, so with more than one worker process run `--role main` beside one `--role graph`
    (concurrency 1) per graph shard (docs/deploy.md)."""
    from app.domain.queues import worker_args

    s = get_settings()
    if graph_shard is not None and role == "all":
        role = "graph"
    if role == "graph" and concurrency != 1:
        raise typer.BadParameter("a graph worker runs one process (its assembly is per process): "
                                 "run one graph worker per shard instead", param_hint="--concurrency")
    try:
        args = worker_args(s.celery_queue, s.graph_shards, role, concurrency, graph_shard)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    _celery(*args)


@app.command()
def beat() -> None:
    """Run Celery beat (the outbox sweeper's clock)."""
    s = get_settings()
    s.var_dir.mkdir(parents=True, exist_ok=True)
    _celery("beat", "--loglevel", "INFO", "-s", str(s.var_dir / "celerybeat-schedule"))


@app.command()
def flower() -> None:
    """Run the Flower worker dashboard."""
    s = get_settings()
    _celery("flower", f"--port={s.flower_port}", f"--address={s.host}")


app.command("export")(export_cmd)
app.command("import")(import_cmd)


@app.command()
def rebuild(
    layer: str = typer.Option(..., "--layer", help="embed, gate, consolidate, surprise, engrams, graph, or all"),
    conversation: str = typer.Option(None, "--conversation", "-c", help="only this conversation"),
    tenant: str = typer.Option(None, help="only this tenant (name)"),
    as_version: str = typer.Option(None, "--as-version",
                                   help="write the rebuilt rows under this layer version, beside the current ones"),
    prune: bool = typer.Option(False, help="then delete the conversation's rows of every other version"),
) -> None:
    """Recompute a layer from the verbatim log, synchronously in this process (no worker needed).

    Conversation-level layers are rebuilt one conversation at a time, each in one transaction (readers
    see the old rows until it commits). Layers that read vectors first embed what is not embedded yet.
    """
    from app.services import layers as layer_service
    from app.storage.db import connect
    from app.storage.events import conversations_named

    wanted = list(layer_service.REBUILT_BY_ALL) if layer == "all" else [layer]
    if any(w not in layer_service.REBUILDABLE for w in wanted):
        raise typer.BadParameter(f"unknown layer {layer!r}; one of {', '.join(layer_service.REBUILDABLE)} or all")
    with connect() as conn:
        tid = _tenant_id(conn, tenant) if tenant else None
        targets = conversations_named(conn, conversation, tid)
    if not targets:
        typer.echo("no matching conversation", err=True)
        raise typer.Exit(1)
    for tenant_id, conv in targets:
        for name in wanted:
            res = layer_service.rebuild(name, tenant_id, conv, as_version=as_version, prune=prune)
            if name == "embed":
                typer.echo(f"{tenant_id}/{conv}\tembed\t{res['embedded']} events embedded")
                continue
            out = res["outcome"]
            summary = {k: v for k, v in out.stats.items() if isinstance(v, (int, float, str))}
            typer.echo(f"{tenant_id}/{conv}\t{name}\t{res['version']}\t{out.events} events\t{out.seconds:.2f}s\t"
                       f"{summary}" + (f"\tpruned {res['pruned']} rows" if prune else ""))


@app.command()
def regate(
    tenant: str = typer.Option(None, help="only this tenant (name); default: every tenant"),
    mode: str = typer.Option(None, help="first set the tenant's gate mode: off, tag, filter or default"),
    conversation: str = typer.Option(None, "--conversation", "-c", help="only this conversation"),
) -> None:
    """Re-run the encoding gate over stored events from their stored signals (no model needed):
    re-admits events a stricter setting held back, holds back what the new one rejects (nothing is
    deleted). Conversations whose admitted events changed are rebuilt by the worker."""
    from app.services.layers import sweep_once
    from app.services.regate import regate_tenant
    from app.storage import tenants as tenant_store
    from app.storage.db import connect, transaction

    if mode is not None and mode not in ("off", "tag", "filter", "default"):
        raise typer.BadParameter("mode is one of off, tag, filter, default")
    with connect() as conn:
        ids = [_tenant_id(conn, tenant)] if tenant else [t for t, _ in tenant_store.list_tenants(conn)]
    for tid in ids:
        with transaction() as conn:
            counts = regate_tenant(conn, tid, mode, conversation)
        typer.echo(f"tenant {tid}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    try:  # send the rows it made pending now rather than at the next sweep
        from app.adapters.dispatch import CeleryDispatcher

        sweep_once(CeleryDispatcher(get_settings().index_chunk_size))
    except Exception as exc:  # noqa: BLE001 - the beat sweeper sends them later
        typer.echo(f"(not enqueued now: {exc}; the sweeper will)", err=True)


app.command("query")(query_cmd)


def add_plugins(root: typer.Typer) -> None:
    """Mount the commands registered under the `palimpsest.commands` entry points (pyproject.toml):
    a typer app becomes the sub-command group of the entry point's name; anything else is called
    with the root app and adds its own commands. One that cannot be imported is left out."""
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            plugin = ep.load()
        except ImportError:
            continue
        if isinstance(plugin, typer.Typer):
            root.add_typer(plugin, name=ep.name)
        else:
            plugin(root)


add_plugins(app)


def main() -> None:
    app()
