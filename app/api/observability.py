"""Prometheus metrics and request ids.

Per-process metrics (request latency, model timings) live in this process's registry; the state
of the background work (queue depth, indexing lag per layer, gate decisions) is read from Redis
and PostgreSQL at scrape time, so every API replica reports the same truth.
"""
from __future__ import annotations

import time
import uuid

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger(__name__)

REQUEST_LATENCY = Histogram(
    "palimpsest_http_request_duration_seconds",
    "HTTP request latency by route template, method and status",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.08, 0.1, 0.25, 0.4, 0.5, 1, 2.5, 5, 10),
)

REQUEST_ID_HEADER = "x-request-id"


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


class RequestContext:
    """Gives every request an id (the caller's X-Request-ID or a new one), logs it, times it."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        incoming = headers.get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")[:64]
        request_id = incoming if incoming and incoming.isprintable() else uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(request_id=request_id)
        start = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [(REQUEST_ID_HEADER.encode(), request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - start
            REQUEST_LATENCY.labels(_route_template(scope), scope.get("method", ""), str(status)).observe(elapsed)
            structlog.contextvars.unbind_contextvars("request_id")


class BackgroundWorkCollector:
    """Scrape-time gauges: Celery queue depth, outbox lag per layer, gate decisions."""

    def collect(self):
        depth = GaugeMetricFamily("palimpsest_queue_depth", "Messages waiting in the Celery queue", labels=["queue"])
        pending = GaugeMetricFamily("palimpsest_indexing_pending", "Events waiting for a layer", labels=["layer"])
        lag = GaugeMetricFamily("palimpsest_indexing_lag_seconds", "Age of the oldest pending event per layer",
                                labels=["layer"])
        gate = GaugeMetricFamily("palimpsest_gate_events", "Events by encoding-gate decision", labels=["status"])
        try:
            from app.api.limits import _redis

            from app.settings import get_settings

            queue = get_settings().celery_queue
            depth.add_metric([queue], float(_redis().llen(queue)))
        except Exception as exc:  # noqa: BLE001 - a scrape never fails because Redis does
            log.debug("metrics_redis_unavailable", error=str(exc))
        try:
            from app.storage.db import get_engine
            from app.storage.events import gate_counts
            from app.storage.outbox import indexing_lag

            with get_engine().connect() as conn:
                for layer, n, age in indexing_lag(conn):
                    pending.add_metric([layer], float(n))
                    lag.add_metric([layer], float(age))
                for status, n in gate_counts(conn):
                    gate.add_metric([status], float(n))
        except Exception as exc:  # noqa: BLE001
            log.debug("metrics_db_unavailable", error=str(exc))
        yield from (depth, pending, lag, gate)


_collector_registered = False


def register_collectors() -> None:
    global _collector_registered
    if not _collector_registered:
        REGISTRY.register(BackgroundWorkCollector())
        _collector_registered = True


def metrics_endpoint(_request: Request) -> Response:
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
