"""Request guards that run before any handler: body size and per-key rate limits."""
from __future__ import annotations

import time
from functools import lru_cache

import structlog
from starlette.types import ASGIApp, Receive, Scope, Send

log = structlog.get_logger(__name__)


class BodySizeLimit:
    """Refuse bodies over `max_bytes` with 413, counting what arrives (Content-Length can lie)."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await _too_large(send, self.max_bytes)
        seen = 0

        async def limited() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _BodyTooLarge:
            await _too_large(send, self.max_bytes)


class _BodyTooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    import json

    from app.api.errors import error_body

    field = {"path": "body", "message": f"is over the {limit} bytes allowed (PALIMPSEST_MAX_BODY_BYTES)",
             "type": "too_large"}
    body = json.dumps(error_body(413, f"the request body is over the {limit} bytes allowed; send fewer events "
                                      "per request", [field])).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def redis_client_url(broker_url: str) -> str:
    """Celery's `redis+socket:///path` is redis-py's `unix:///path`."""
    if broker_url.startswith("redis+socket://"):
        return "unix://" + broker_url[len("redis+socket://"):]
    return broker_url


@lru_cache
def _redis():
    import redis

    from app.runtime import redis_url

    return redis.Redis.from_url(redis_client_url(redis_url()), socket_timeout=0.5, socket_connect_timeout=0.5)


def check_rate(key_id: int, per_minute: int, now: float | None = None) -> int | None:
    """None if the request may go ahead, else the seconds to wait (fixed one-minute windows).

    Fails open: if Redis is unreachable, requests are not limited (and ingest keeps working).
    """
    if per_minute <= 0:
        return None
    now = time.time() if now is None else now
    window = int(now // 60)
    name = f"palimpsest:rl:{key_id}:{window}"
    try:
        pipe = _redis().pipeline()
        pipe.incr(name)
        pipe.expire(name, 120)
        count = pipe.execute()[0]
    except Exception as exc:  # noqa: BLE001
        log.warning("rate_limit_unavailable", error=str(exc))
        return None
    if count > per_minute:
        return max(1, int(60 - now % 60))
    return None
