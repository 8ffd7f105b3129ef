"""`palimpsest export` and `palimpsest import`: a tenant's verbatim events out as JSON Lines, and
conversations in from that or from other tools' files (app/importers.py), resumable."""
from __future__ import annotations

import sys
from pathlib import Path

import typer

from app.commands.tenants import tenant_named
from app.settings import get_settings


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
        tid = tenant_named(conn, tenant)
        fh = open(out, "w", encoding="utf-8") if out else sys.stdout
        try:
            for rec in export_events(conn, tid):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
        finally:
            if out:
                fh.close()
    typer.echo(f"exported {n} events", err=True)


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
            # the other formats get the importer's stable ids (kept for files imported before); a jsonl
            # line without an event_id gets the server's derived one: either way a re-run is a no-op
            if fmt != "jsonl":
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
        from app.adapters.dispatch import CeleryDispatcher
        from app.transfer import import_batch

        results = import_batch(self.tenant_id, records, CeleryDispatcher(get_settings().index_chunk_size))
        new = [r.id for r in results if r.status == "created"]
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
