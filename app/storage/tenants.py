"""Tenants and API keys. Keys are random, shown once, stored as a SHA-256 hash with a lookup prefix.
A tenant also carries its encoding-gate mode."""
from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import Connection, func, insert, select, update

from app.storage.models import ApiKey, Tenant

KEY_PREFIX = "pal"
ALL_SCOPES = ("read", "write", "admin")
GATE_MODES = ("off", "tag", "filter")


@dataclass(frozen=True)
class Principal:
    tenant_id: int
    tenant_name: str
    key_id: int
    scopes: tuple[str, ...]


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def split_key(key: str) -> str | None:
    """The lookup prefix of a well-formed key `pal_<prefix>_<secret>`, else None."""
    parts = key.split("_")
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1]


def new_key() -> str:
    return f"{KEY_PREFIX}_{secrets.token_hex(6)}_{secrets.token_urlsafe(24).replace('_', '-')}"


def create_tenant(conn: Connection, name: str) -> int:
    existing = conn.execute(select(Tenant.id).where(Tenant.name == name)).scalar()
    if existing is not None:
        return existing
    return conn.execute(insert(Tenant).values(name=name).returning(Tenant.id)).scalar_one()


def add_key(conn: Connection, tenant_id: int, key: str, name: str = "", scopes: tuple[str, ...] = ("read", "write")) -> int:
    prefix = split_key(key)
    if prefix is None:
        raise ValueError("malformed API key; expected pal_<prefix>_<secret>")
    return conn.execute(
        insert(ApiKey)
        .values(tenant_id=tenant_id, prefix=prefix, key_hash=hash_key(key), name=name, scopes=list(scopes))
        .returning(ApiKey.id)
    ).scalar_one()


def create_key(conn: Connection, tenant_id: int, name: str = "", scopes: tuple[str, ...] = ("read", "write")) -> str:
    key = new_key()
    add_key(conn, tenant_id, key, name, scopes)
    return key


def ensure_bootstrap_key(conn: Connection, tenant_name: str, key: str) -> int:
    """Idempotently make `key` a full-scope key of `tenant_name` (for `make run` and scripts)."""
    tenant_id = create_tenant(conn, tenant_name)
    prefix = split_key(key)
    if prefix is None:
        raise ValueError("PALIMPSEST_BOOTSTRAP_API_KEY must look like pal_<prefix>_<secret>")
    row = conn.execute(select(ApiKey.tenant_id, ApiKey.key_hash).where(ApiKey.prefix == prefix)).first()
    if row is None:
        add_key(conn, tenant_id, key, name="bootstrap", scopes=ALL_SCOPES)
    elif row.tenant_id != tenant_id or not hmac.compare_digest(row.key_hash, hash_key(key)):
        raise ValueError("the bootstrap key's prefix is already used by another key")
    return tenant_id


def revoke_key(conn: Connection, prefix: str) -> bool:
    res = conn.execute(
        update(ApiKey).where(ApiKey.prefix == prefix, ApiKey.revoked_at.is_(None)).values(revoked_at=func.now())
    )
    return res.rowcount > 0


def authenticate(conn: Connection, key: str) -> Principal | None:
    prefix = split_key(key)
    if prefix is None:
        return None
    row = conn.execute(
        select(ApiKey.id, ApiKey.key_hash, ApiKey.scopes, ApiKey.revoked_at, Tenant.id.label("tid"), Tenant.name)
        .join(Tenant, Tenant.id == ApiKey.tenant_id)
        .where(ApiKey.prefix == prefix)
    ).first()
    if row is None or row.revoked_at is not None:
        return None
    if not hmac.compare_digest(row.key_hash, hash_key(key)):
        return None
    return Principal(tenant_id=row.tid, tenant_name=row.name, key_id=row.id, scopes=tuple(row.scopes))


def list_tenants(conn: Connection) -> list[tuple[int, str]]:
    return [(r.id, r.name) for r in conn.execute(select(Tenant.id, Tenant.name).order_by(Tenant.id))]


def tenant_named(conn: Connection, name: str) -> int | None:
    """The id of the tenant called `name`, or None."""
    return conn.execute(select(Tenant.id).where(Tenant.name == name)).scalar()


def tenant_gate_mode(conn: Connection, tenant_id: int, default: str = "off") -> str:
    """The tenant's effective gate mode: its own, or the server default when it says 'default'."""
    mode = conn.execute(select(Tenant.gate_mode).where(Tenant.id == tenant_id)).scalar()
    return mode if mode in GATE_MODES else default


def set_tenant_gate_mode(conn: Connection, tenant_id: int, mode: str) -> None:
    if mode not in GATE_MODES + ("default",):
        raise ValueError(f"unknown gate mode {mode!r}")
    conn.execute(update(Tenant).where(Tenant.id == tenant_id).values(gate_mode=mode))
