"""Request dependencies: the database connection, the caller's tenant (from the Bearer key) and
the dispatcher that hands background work to the workers."""
from __future__ import annotations

from collections.abc import Iterator

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Connection

from app.adapters.dispatch import CeleryDispatcher
from app.api.limits import check_rate
from app.ports import Dispatcher
from app.settings import get_settings
from app.storage import tenants
from app.storage.db import get_engine
from app.storage.tenants import Principal

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer pal_...`")


def db() -> Iterator[Connection]:
    """One connection and one transaction per request: committed only if the handler returns."""
    with get_engine().begin() as conn:
        yield conn


# Routes take the connection through this: scope "function" commits before the response is sent,
# so a 2xx means the write is stored and the client's next request reads it. (FastAPI's default
# scope would commit after the response left: a client could be told "deleted", or read its own
# write, before the commit, and a failed commit would go unreported.)
DB = Depends(db, scope="function")


def dispatcher() -> Dispatcher:
    """Where routes send background work: the Celery broker (a test overrides this dependency)."""
    return CeleryDispatcher(get_settings().index_chunk_size)


async def _bearer_key(creds: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> str:
    """The bearer key, or 401 before any database connection is taken."""
    if creds is None or creds.scheme.lower() != "bearer":
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "missing bearer API key",
                            headers={"WWW-Authenticate": "Bearer"})
    return creds.credentials


def principal(request: Request, key: str = Depends(_bearer_key), conn: Connection = DB) -> Principal:
    """The key's tenant and scopes, read in the request's own transaction (the connection the route gets:
    FastAPI hands one request one `DB`), so a request checks out one connection, not two; a key revoked
    before the request began is refused. A request without a key is refused before a connection is taken."""
    who = tenants.authenticate(conn, key)
    if who is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "invalid or revoked API key",
                            headers={"WWW-Authenticate": "Bearer"})
    request.state.tenant_id = who.tenant_id
    wait = check_rate(who.key_id, get_settings().rate_limit_per_minute)
    if wait is not None:
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, "rate limit exceeded for this API key",
                            headers={"Retry-After": str(wait)})
    return who


def require(scope: str):
    async def check(who: Principal = Depends(principal)) -> Principal:  # no I/O: run on the loop, no thread hop
        if scope not in who.scopes and "admin" not in who.scopes:
            raise HTTPException(status.HTTP_403_FORBIDDEN, f"this API key lacks the '{scope}' scope")
        return who

    return check


reader = require("read")
writer = require("write")
admin = require("admin")  # destructive calls (erasure), the audit log, the tenant's language


def only_query_params(*allowed: str):
    """Refuse unknown query parameters (422 naming them), as request bodies refuse unknown fields."""

    def check(request: Request) -> None:
        unknown = sorted(set(request.query_params) - set(allowed))
        if unknown:
            raise HTTPException(422, detail=[{"field": k, "message": "unknown query parameter",
                                              "type": "extra_forbidden"} for k in unknown])

    return Depends(check)
