"""The `palimpsest` command line (typer)."""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import typer

from app.settings import get_settings

app = typer.Typer(help="Palimpsest: a memory service for AI agents.", no_args_is_help=True)
tenants_app = typer.Typer(help="Tenants and API keys.", no_args_is_help=True)
app.add_typer(tenants_app, name="tenants")

try:  # the benchmark harness is an optional part of the distribution
    from bench.cli import bench_app
    from bench.load import load_command

    bench_app.command("load")(load_command)
    app.add_typer(bench_app, name="bench")
except ImportError:  # pragma: no cover
    pass


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
    from app.embedded import ServiceStack, stop_postgres, stop_redis

    s = get_settings()
    var_dir = s.var_dir.resolve()
    key = _dev_key(var_dir)
    embedded_db, embedded_redis = not s.database_url, not s.redis_url
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
        stack.stop()
        if embedded_redis:
            stop_redis(var_dir)
        if embedded_db:
            stop_postgres(var_dir)
        typer.echo("Stopped. Data is kept under " + str(var_dir))
        sys.exit(0)

    signal.signal(signal.SIGTERM, _stop)
    try:
        stack.start()
        base = stack.base_url
        typer.echo(
            "\nPalimpsest is running.\n"
            f"  API:      {base}\n"
            f"  Docs:     {base}/docs\n"
            f"  Flower:   http://{stack.host}:{stack.flower_port}\n"
            f"  Logs:     {var_dir / 'logs'}\n"
            f"  Dev API key (tenant 'dev'): {key}\n\n"
            f"  curl -H 'Authorization: Bearer {key}' {base}/v1/conversations/demo/status\n\n"
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
        stack.stop()
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
def worker(concurrency: int = typer.Option(1, help="worker processes")) -> None:
    """Run a Celery worker."""
    _celery("worker", "--loglevel", "INFO", "--concurrency", str(concurrency), "-E")


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


@tenants_app.command("create")
def tenants_create(
    name: str,
    scopes: str = typer.Option("read,write", help="comma-separated: read, write, admin"),
) -> None:
    """Create a tenant (or reuse it) and print a new API key for it, once."""
    from app.storage import tenants
    from app.storage.db import transaction

    wanted = tuple(x.strip() for x in scopes.split(",") if x.strip())
    bad = [x for x in wanted if x not in tenants.ALL_SCOPES]
    if bad:
        raise typer.BadParameter(f"unknown scope(s): {', '.join(bad)}")
    with transaction() as conn:
        tenant_id = tenants.create_tenant(conn, name)
        key = tenants.create_key(conn, tenant_id, name=f"{name} key", scopes=wanted)
    typer.echo(f"tenant {name} (id {tenant_id})\nAPI key (shown once): {key}")


@tenants_app.command("list")
def tenants_list() -> None:
    """List tenants."""
    from app.storage import tenants
    from app.storage.db import connect

    with connect() as conn:
        for tid, name in tenants.list_tenants(conn):
            typer.echo(f"{tid}\t{name}")


@tenants_app.command("revoke-key")
def revoke_key(key_or_prefix: str) -> None:
    """Revoke an API key (give the key or its prefix); it is refused from the next request on."""
    from app.storage import tenants
    from app.storage.db import transaction

    prefix = tenants.split_key(key_or_prefix) or key_or_prefix
    with transaction() as conn:
        ok = tenants.revoke_key(conn, prefix)
    typer.echo("revoked" if ok else "no active key with that prefix")
    raise typer.Exit(0 if ok else 1)


def main() -> None:
    app()


def _tenant_id(conn, name: str) -> int:
    from sqlalchemy import select

    from app.storage.models import Tenant

    tid = conn.execute(select(Tenant.id).where(Tenant.name == name)).scalar()
    if tid is None:
        raise typer.BadParameter(f"no tenant named {name!r}")
    return tid


@app.command("export")
def export_cmd(
    tenant: str = typer.Option(..., help="tenant name"),
    out: Path = typer.Option(None, help="output file (default: stdout)"),
) -> None:
    """Write a tenant's verbatim events as JSON Lines (everything else is rebuilt from them)."""
    import json

    from app.storage.db import connect
    from app.transfer import export_events

    n = 0
    with connect() as conn:
        tid = _tenant_id(conn, tenant)
        fh = open(out, "w", encoding="utf-8") if out else sys.stdout
        try:
            for rec in export_events(conn, tid):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
        finally:
            if out:
                fh.close()
    typer.echo(f"exported {n} events", err=True)


@app.command("import")
def import_cmd(
    path: Path = typer.Argument(..., help="the file to import"),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl (palimpsest export), locomo, longmemeval, openai"),
    tenant: str = typer.Option(None, help="write straight to the database for this tenant (created if missing)"),
    url: str = typer.Option(None, help="or post to a running service at this URL ..."),
    api_key: str = typer.Option(None, envvar="PALIMPSEST_API_KEY", help="... with this API key"),
    batch: int = typer.Option(500, help="events per transaction / request"),
    checkpoint: Path = typer.Option(None, help="resume file (default: <path>.<format>.checkpoint)"),
) -> None:
    """Import conversations from a file, with a progress bar; an interrupted import resumes where it stopped."""
    from itertools import islice

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from app.importers import read_records, stable_event_id

    if (tenant is None) == (url is None):
        raise typer.BadParameter("give either --tenant (direct to the database) or --url with --api-key")
    sink = _HttpSink(url, api_key) if url else _DbSink(tenant)
    checkpoint = checkpoint or path.with_name(f"{path.name}.{fmt}.checkpoint")
    done = int(checkpoint.read_text()) if checkpoint.exists() else 0
    records = read_records(path, fmt)
    created = dup = 0
    with Progress(TextColumn("[bold]import"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=False) as progress:
        task = progress.add_task("events", total=None, completed=done)
        for _ in islice(records, done):  # resume: skip what an earlier run committed
            pass
        while chunk := list(islice(records, batch)):
            if fmt != "jsonl":  # a restore stays verbatim; other formats get stable ids (re-runs are no-ops)
                for rec in chunk:
                    if rec.get("event_id") is None:
                        rec["event_id"] = stable_event_id(rec)
            c, d = sink.write(chunk)
            created, dup = created + c, dup + d
            done += len(chunk)
            checkpoint.write_text(str(done))
            progress.update(task, completed=done)
    checkpoint.unlink(missing_ok=True)
    typer.echo(f"imported {created} events ({dup} already present)")


class _DbSink:
    def __init__(self, tenant: str):
        from app.storage import tenants as tenant_store
        from app.storage.db import transaction

        with transaction() as conn:
            self.tenant_id = tenant_store.create_tenant(conn, tenant)

    def write(self, records: list[dict]) -> tuple[int, int]:
        from app.storage.db import transaction
        from app.transfer import import_batch
        from workers.dispatch import enqueue
        from workers.registry import LAYERS

        with transaction() as conn:
            results = import_batch(conn, self.tenant_id, records, list(LAYERS))
        new = [r.id for r in results if r.status == "created"]
        for layer in LAYERS:
            enqueue(layer, new, get_settings().index_chunk_size)
        return len(new), len(results) - len(new)


class _HttpSink:
    def __init__(self, url: str, key: str | None):
        import httpx

        if not key:
            raise typer.BadParameter("--url needs --api-key (or PALIMPSEST_API_KEY)")
        self.client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120)

    def write(self, records: list[dict]) -> tuple[int, int]:
        r = self.client.post("/v1/events", json={"events": records})
        if r.status_code != 200:
            raise typer.BadParameter(f"the service refused a batch ({r.status_code}): {r.text[:500]}")
        statuses = [x["status"] for x in r.json()["results"]]
        return statuses.count("created"), statuses.count("duplicate")


REBUILDABLE = ("embed", "gate", "consolidate", "surprise", "engrams", "graph")


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
    from app.settings import get_settings as settings_
    from app.storage import layers as store
    from app.storage.db import connect, transaction
    from workers import consolidate, engrams, gate, graph, surprise
    from workers.embed import embed_pending
    from workers.layerbase import process_conversation

    jobs = {j.LAYER: j.JOB for j in (gate, consolidate, surprise, engrams, graph)}
    wanted = ["consolidate", "surprise", "engrams", "graph"] if layer == "all" else [layer]
    if any(w not in REBUILDABLE for w in wanted):
        raise typer.BadParameter(f"unknown layer {layer!r}; one of {', '.join(REBUILDABLE)} or all")
    with connect() as conn:
        tid = _tenant_id(conn, tenant) if tenant else None
        targets = store.conversations_named(conn, conversation, tid)
    if not targets:
        typer.echo("no matching conversation", err=True)
        raise typer.Exit(1)
    model = settings_().embedding_model_name
    for tenant_id, conv in targets:
        for name in wanted:
            with transaction() as conn:
                if name == "embed":
                    store.delete_embeddings(conn, tenant_id, conv, model)
                store.mark_conversations_pending(conn, tenant_id, [conv], [name])
            if name == "embed" or jobs[name].needs_vectors:
                with connect() as conn:
                    todo = store.pending_in_conversation(conn, "embed", tenant_id, conv)
                for i in range(0, len(todo), 256):
                    embed_pending(todo[i : i + 256])
            if name == "embed":
                typer.echo(f"{tenant_id}/{conv}\tembed\t{len(todo)} events embedded")
                continue
            out = process_conversation(jobs[name], tenant_id, conv, force=True, version=as_version)
            version = as_version or jobs[name].version()
            dropped = 0
            if prune:
                with transaction() as conn:
                    dropped = store.drop_other_versions(conn, tenant_id, conv, name, version)
            summary = {k: v for k, v in out.stats.items() if isinstance(v, (int, float, str))}
            typer.echo(f"{tenant_id}/{conv}\t{name}\t{version}\t{out.events} events\t{out.seconds:.2f}s\t"
                       f"{summary}" + (f"\tpruned {dropped} rows" if prune else ""))


@app.command()
def regate(
    tenant: str = typer.Option(None, help="only this tenant (name); default: every tenant"),
    mode: str = typer.Option(None, help="first set the tenant's gate mode: off, tag, filter or default"),
    conversation: str = typer.Option(None, "--conversation", "-c", help="only this conversation"),
) -> None:
    """Re-run the encoding gate over stored events from their stored signals (no model needed):
    re-admits events a stricter setting held back, holds back what the new one rejects (nothing is
    deleted). Conversations whose admitted events changed are rebuilt by the worker."""
    from app.storage import tenants as tenant_store
    from app.storage.db import connect, transaction
    from workers.gate import regate_tenant

    if mode is not None and mode not in ("off", "tag", "filter", "default"):
        raise typer.BadParameter("mode is one of off, tag, filter, default")
    with connect() as conn:
        ids = [_tenant_id(conn, tenant)] if tenant else [t for t, _ in tenant_store.list_tenants(conn)]
    for tid in ids:
        with transaction() as conn:
            counts = regate_tenant(conn, tid, mode, conversation)
        typer.echo(f"tenant {tid}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    try:  # send the rows it made pending now rather than at the next sweep
        from workers.sweep import sweep_once

        sweep_once()
    except Exception as exc:  # noqa: BLE001 - the beat sweeper sends them later
        typer.echo(f"(not enqueued now: {exc}; the sweeper will)", err=True)


@app.command("query")
def query_cmd(
    question: str = typer.Argument(...),
    url: str = typer.Option("http://127.0.0.1:8000", envvar="PALIMPSEST_URL"),
    api_key: str = typer.Option(..., envvar="PALIMPSEST_API_KEY"),
    conversation: str = typer.Option(None, "--conversation", "-c"),
    top_k: int = typer.Option(10),
    token_budget: int = typer.Option(2000),
    pipeline: list[str] = typer.Option([], "--pipeline", "-p", help="stage override key=value (repeatable)"),
    show_context: bool = typer.Option(False, "--context", help="also print the assembled context"),
) -> None:
    """Ask a running service and print the ranked evidence with each signal's rank and score."""
    import json

    import httpx
    from rich.console import Console
    from rich.table import Table

    overrides = {}
    for item in pipeline:
        k, _, v = item.partition("=")
        try:
            overrides[k] = json.loads(v)
        except json.JSONDecodeError:
            overrides[k] = v
    body = {"query": question, "top_k": top_k, "token_budget": token_budget}
    if conversation:
        body["conversation_id"] = conversation
    if overrides:
        body["pipeline"] = overrides
    r = httpx.post(f"{url}/v1/query", json=body, headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
    if r.status_code != 200:
        typer.echo(f"error {r.status_code}: {r.text}", err=True)
        raise typer.Exit(1)
    out = r.json()
    signals = sorted({name for it in out["items"] for name in it["signals"]})
    table = Table(title=f"{question}  ({out['context_tokens']} context tokens)")
    for col in ("#", "score", *signals, "ctx", "when", "speaker", "content"):
        table.add_column(col, overflow="fold")
    for rank, it in enumerate(out["items"], start=1):
        cells = [f"{it['signals'][s]['rank']} ({it['signals'][s]['score']:.3f})" if s in it["signals"] else "-"
                 for s in signals]
        table.add_row(str(rank), f"{it['score']:.4f}", *cells, "✓" if it["in_context"] else "",
                      it["occurred_at"][:16], it["speaker"], it["content"][:200])
    console = Console()
    console.print(table)
    if show_context:
        console.print(out["context"])


@app.command("train-reranker", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def train_reranker_cmd(ctx: typer.Context) -> None:
    """Fine-tune the packaged MiniLM as a cross-encoder on pairs mined from conversations
    (its own options: `palimpsest train-reranker --help`); the query path uses it once it is in place."""
    from app.training.reranker import main as train_main

    raise typer.Exit(train_main(ctx.args))
