"""`palimpsest tenants ...`: tenants and API keys."""
from __future__ import annotations

import typer

tenants_app = typer.Typer(help="Tenants and API keys.", no_args_is_help=True)


def tenant_named(conn, name: str) -> int:  # noqa: ANN001
    """The id of the tenant called `name`; a usage error when there is none."""
    from app.storage import tenants

    tid = tenants.tenant_named(conn, name)
    if tid is None:
        raise typer.BadParameter(f"no tenant named {name!r}")
    return tid


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
