"""The Python SDK's retries against a real local HTTP server this module starts (not a mock): on
503/429 honouring Retry-After, on refused connections, giving up after the policy's retries, no
retry on a 422. The SDK against the live service: tests/e2e/test_sdk.py."""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from palimpsest.client import (
    APIConnectionError,
    AsyncPalimpsest,
    Palimpsest,
    RateLimited,
    RetryPolicy,
    ServiceUnavailable,
    ValidationError,
    derive_event_id,
)



T0 = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)


class Scripted(ThreadingHTTPServer):
    """A local HTTP server that answers request n with script[n] (the last entry repeats)."""

    daemon_threads = True

    def __init__(self, script: list[tuple[int, dict[str, str], object]], port: int = 0) -> None:
        self.script = script
        self.seen: list[tuple[float, str, str, bytes]] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> Scripted:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Scripted

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with self.server.lock:
            n = len(self.server.seen)
            self.server.seen.append((time.monotonic(), self.command, self.path, body))
            status, headers, payload = self.server.script[min(n, len(self.server.script) - 1)]
        raw = json.dumps(payload).encode()
        self.send_response(status)
        for k, v in {"content-type": "application/json", **headers}.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


FAST = RetryPolicy(max_retries=4, backoff_base=0.01, backoff_max=0.05)
OK_WRITE = {"results": [{"id": 7, "event_id": "x", "status": "created"}]}


def test_retry_after_on_503_then_success_resends_the_same_event() -> None:
    script = [(503, {"Retry-After": "1"}, {"error": "unavailable", "detail": "database unavailable; retry"}),
              (200, {}, OK_WRITE)]
    with Scripted(script) as srv, Palimpsest(srv.url, "pal_a_b", retry=FAST) as pal:
        res = pal.add_event("c1", "Ana", "hello", occurred_at=T0)
    assert res.id == 7 and res.status == "created"
    assert len(srv.seen) == 2
    (t1, m1, p1, b1), (t2, m2, p2, b2) = srv.seen
    assert (m1, p1) == (m2, p2) == ("POST", "/v1/events")
    assert t2 - t1 >= 0.95  # Retry-After: 1 was honoured, not the 10 ms backoff
    assert b1 == b2  # the retry is the same request: same derived event_id
    sent = json.loads(b1)["events"][0]
    assert sent["event_id"] == derive_event_id("c1", "Ana", T0, "hello")


def test_retry_on_429_async_with_http_date() -> None:
    when = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=2), usegmt=True)
    status = {"conversation_id": "c1", "events": 3, "pending": {"embed": 0}}
    script = [(429, {"Retry-After": when}, {"detail": "slow down"}), (200, {}, status)]

    async def main():
        async with AsyncPalimpsest(srv.url, "pal_a_b", retry=FAST) as pal:
            return await pal.status("c1")

    with Scripted(script) as srv:
        st = asyncio.run(main())
    assert st.events == 3 and st.indexed
    assert len(srv.seen) == 2 and srv.seen[1][0] - srv.seen[0][0] >= 0.5  # waited for the date (1-2 s)


def test_gives_up_after_the_policy_and_raises_typed_errors() -> None:
    with Scripted([(503, {}, {"error": "unavailable"})]) as srv, \
            Palimpsest(srv.url, "pal_a_b", retry=RetryPolicy(max_retries=2, backoff_base=0.01)) as pal:
        with pytest.raises(ServiceUnavailable) as e:
            pal.status("c1")
    assert e.value.status_code == 503 and len(srv.seen) == 3  # 1 + 2 retries
    with Scripted([(429, {"Retry-After": "0"}, {"detail": "slow down"})]) as srv, \
            Palimpsest(srv.url, "pal_a_b", max_retries=1) as pal:
        with pytest.raises(RateLimited):
            pal.status("c1")
    assert len(srv.seen) == 2


def test_no_retry_on_422_and_the_field_list_is_kept() -> None:
    body = {"error": "invalid_request",
            "detail": [{"field": "events[0].content", "message": "Value error, content must not be blank",
                        "type": "value_error"}]}
    with Scripted([(422, {}, body)]) as srv, Palimpsest(srv.url, "pal_a_b", retry=FAST) as pal:
        with pytest.raises(ValidationError) as e:
            pal.add_event("c1", "Ana", "x")
    assert len(srv.seen) == 1
    assert e.value.fields == ["events[0].content"] and e.value.errors[0].type == "value_error"
    assert e.value.body == body


def test_retry_on_refused_connection_until_the_server_is_up() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started: list[Scripted] = []

    def start_later() -> None:
        time.sleep(0.6)
        started.append(Scripted([(200, {}, {"status": "ok"})], port=port).__enter__())

    threading.Thread(target=start_later, daemon=True).start()
    t0 = time.monotonic()
    try:
        with Palimpsest(f"http://127.0.0.1:{port}", "pal_a_b",
                        retry=RetryPolicy(max_retries=8, backoff_base=0.1, backoff_max=0.4, jitter=0)) as pal:
            assert pal.health() == {"status": "ok"}
        assert time.monotonic() - t0 >= 0.5  # it did fail first and came back
    finally:
        for srv in started:
            srv.__exit__(None, None, None)
    with Palimpsest(f"http://127.0.0.1:{port}", "pal_a_b", retry=RetryPolicy(max_retries=1, backoff_base=0.01)) as pal:
        with pytest.raises(APIConnectionError) as e:  # nothing listens any more
            pal.health()
    assert "2 attempt" in e.value.message
