"""The Python SDK (`palimpsest.client`).

Against the LIVE service (uvicorn + a Celery worker on the test database and Redis, started once
and shared with tests/test_mcp.py): writes with derived idempotent ids, reads, auto-paging,
status, wait_until_indexed, query, typed errors, the async client.

Against a real local HTTP server this module starts (not a mock): retries on 503/429 honouring
Retry-After, on refused connections, giving up after the policy's retries, no retry on a 422.
"""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from palimpsest.client import (
    APIConnectionError,
    AsyncPalimpsest,
    AuthError,
    NotFound,
    Palimpsest,
    PermissionDenied,
    RateLimited,
    RetryPolicy,
    ServerError,
    ServiceUnavailable,
    ValidationError,
    derive_event_id,
    parse_retry_after,
)

# ============================================================ the live service (shared)

_LIVE: dict = {}


@dataclass
class Live:
    url: str
    key: str  # the bootstrap key (tenant 'dev', every scope)
    logs: Path


def _main_app_has_mcp() -> bool:
    from app.api.main import app
    from app.api.mcp import has_mcp

    return has_mcp(app)


@contextmanager
def live_service(root: Path, database_url: str, redis_url: str) -> Iterator[Live]:
    """One API + worker for every module that asks (reference-counted): start once, stop after the last."""
    from app.embedded import ServiceStack
    from app.storage import tenants
    from tests.conftest import own_queue

    class Stack(ServiceStack):
        # Until app.api.main mounts /mcp itself, serve the same app with it mounted (a factory).
        def _spawn(self, name: str, args: list[str]) -> None:
            if name == "api" and "app.api.main:app" in args and not _main_app_has_mcp():
                args = [("app.api.mcp:create_app_with_mcp" if a == "app.api.main:app" else a) for a in args]
                args.append("--factory")
            super()._spawn(name, args)

    if not _LIVE.get("refs"):
        key = tenants.new_key()
        stack = Stack(var_dir=root, api_key=key, database_url=database_url, redis_url=redis_url, queue=own_queue(),
                      log_dir=root / "logs")
        try:
            stack.start()
        except BaseException:
            stack.stop()  # nothing left running when it did not come up (logs under root/logs)
            raise
        _LIVE.update(stack=stack, live=Live(stack.base_url, key, root / "logs"), refs=0)
    _LIVE["refs"] += 1
    try:
        yield _LIVE["live"]
    finally:
        _LIVE["refs"] -= 1
        if _LIVE["refs"] == 0:
            _LIVE.pop("stack").stop()
            _LIVE.clear()


@pytest.fixture(scope="session")
def live(tmp_path_factory, database_url, redis_url) -> Iterator[Live]:
    with live_service(tmp_path_factory.mktemp("live-sdk"), database_url, redis_url) as svc:
        yield svc


TURNS = [
    ("Maya", "I adopted a golden retriever puppy named Biscuit last weekend."),
    ("Leo", "My sister is getting married in Lisbon this October."),
    ("Maya", "Work has been stressful; the quarterly audit is due Friday — café at 7, naïve plan 🙂"),
    ("Leo", "I've been learning to play the cello for about six months."),
    ("Maya", "We repainted the kitchen a pale shade of green."),
]
T0 = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)


def _events(conv: str) -> list[dict]:
    return [{"conversation_id": conv, "speaker": s, "content": text, "occurred_at": T0 + timedelta(minutes=i)}
            for i, (s, text) in enumerate(TURNS)]


# ============================================================ live tests


@pytest.mark.slow
def test_write_read_page_wait_and_query(live: Live, tenant) -> None:
    _, key = tenant
    conv = f"sdk-{uuid.uuid4().hex[:8]}"
    with Palimpsest(live.url, key) as pal:
        first = pal.write_events(_events(conv))
        assert [r.status for r in first.results] == ["created"] * 5
        # no event_id given: each is derived from the event, so the same call again stores nothing
        assert [r.event_id for r in first.results] == [
            derive_event_id(conv, s, T0 + timedelta(minutes=i), text) for i, (s, text) in enumerate(TURNS)]
        again = pal.write_events(_events(conv))
        assert again.duplicates == 5 and again.ids == first.ids

        stored = pal.get_event(first.ids[2])
        assert stored.content == TURNS[2][1] and stored.speaker == "Maya"  # verbatim
        assert stored.occurred_at == T0 + timedelta(minutes=2)

        page = pal.list_events(conv, limit=2)
        assert len(page.events) == 2 and page.next_cursor
        everything = list(pal.iter_events(conv, page_size=2))  # three pages
        assert [e.id for e in everything] == first.ids
        assert [e.content for e in everything] == [t for _, t in TURNS]

        st = pal.wait_until_indexed(conv, timeout=180)
        assert st.indexed and st.events == 5 and st.pending.get("embed") == 0

        out = pal.query("What animal joined her household?", conversation_id=conv, top_k=3)
        assert out.items[0].id == first.ids[0]
        assert "dense" in out.items[0].signals and out.items[0].signals["dense"].rank == 1
        assert "Biscuit" in out.context and out.context_tokens > 0

        only_dense = pal.query("musical instrument lessons", conversation_id=conv,
                               pipeline={"lexical": False, "rerank": False, "window": False})
        assert only_dense.items[0].id == first.ids[3] and set(only_dense.items[0].signals) == {"dense"}
        assert only_dense.pipeline["rerank"] is False and only_dense.relevance["dense"] > 0
        assert only_dense.abstain is False and only_dense.context_items

        with pytest.raises(ServerError) as e:  # this stack has no LLM: 501 at once, no retries
            pal.answer("What animal joined her household?", conversation_id=conv)
        assert e.value.status_code == 501 and "PALIMPSEST_LLM_BASE_URL" in e.value.message


@pytest.mark.slow
def test_event_ids_are_per_call_without_a_time(live: Live, tenant) -> None:
    _, key = tenant
    conv = f"sdk-{uuid.uuid4().hex[:8]}"
    with Palimpsest(live.url, key) as pal:
        # the same words said twice, no time given: two events (each call stamps its own time)
        a = pal.add_event(conv, "Ana", "ok")
        b = pal.add_event(conv, "Ana", "ok")
        assert a.status == b.status == "created" and a.event_id != b.event_id
        # a time given: the same event, so the repeat is a duplicate
        at = datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
        c = pal.add_event(conv, "Ana", "see you", occurred_at=at)
        d = pal.add_event(conv, "Ana", "see you", occurred_at=at.astimezone(timezone(timedelta(hours=2))))
        assert (c.status, d.status) == ("created", "duplicate") and c.id == d.id
        # an explicit event_id is used as given; idempotent_ids=False sends none
        e = pal.add_event(conv, "Ben", "mine", event_id="client-1")
        assert e.event_id == "client-1"
    with Palimpsest(live.url, key, idempotent_ids=False) as raw:
        f = raw.add_event(conv, "Ben", "no id")
        assert f.event_id is None and f.status == "created"


@pytest.mark.slow
def test_typed_errors(live: Live, tenant, make_tenant) -> None:
    _, key = tenant
    conv = f"sdk-{uuid.uuid4().hex[:8]}"
    with Palimpsest(live.url, "pal_nothere_xxxxxxxx") as bad:
        with pytest.raises(AuthError) as e:
            bad.status(conv)
        assert e.value.status_code == 401 and not isinstance(e.value, PermissionDenied)
    _, ro_key = make_tenant(scopes=("read",))
    with Palimpsest(live.url, ro_key) as ro:
        with pytest.raises(PermissionDenied) as e:
            ro.add_event(conv, "Ana", "hello")
        assert e.value.status_code == 403 and "write" in e.value.message
    with Palimpsest(live.url, key) as pal:
        with pytest.raises(NotFound):
            pal.get_event(10**12)
        with pytest.raises(ValidationError) as e:
            pal.write_events([{"conversation_id": conv, "speaker": "Ana", "content": "fine"},
                              {"conversation_id": conv, "speaker": "Ana", "content": "   "}])
        assert e.value.status_code == 422 and e.value.fields == ["events[1].content"]
        assert e.value.errors[0].message and e.value.errors[0].type
        assert pal.status(conv).events == 0  # nothing of the refused batch was written
        with pytest.raises(ValidationError) as e:
            pal.list_events(conv, cursor="not-a-cursor")
        assert e.value.fields == ["cursor"]
        with pytest.raises(ValidationError) as e:  # caught before sending: unknown field
            pal.write_events([{"conversation_id": conv, "speaker": "A", "content": "x", "mood": "happy"}])
        assert e.value.status_code is None and e.value.fields == ["events[0].mood"]
        mine = pal.add_event(conv, "Ana", "private")
    _, other = make_tenant()
    with Palimpsest(live.url, other) as pal2:  # another tenant sees none of it
        with pytest.raises(NotFound):
            pal2.get_event(mine.id)
        assert pal2.status(conv).events == 0


@pytest.mark.slow
def test_async_client(live: Live, tenant) -> None:
    _, key = tenant
    conv = f"sdk-async-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with AsyncPalimpsest(live.url, key) as pal:
            assert (await pal.health())["status"] == "ok"
            assert (await pal.ready())["status"] == "ready"
            w = await pal.write_events(_events(conv), batch_size=2)  # three requests
            assert w.created == 5
            assert (await pal.write_events(_events(conv))).duplicates == 5
            seen = [e async for e in pal.iter_events(conv, page_size=3)]
            assert [e.id for e in seen] == w.ids
            assert (await pal.get_event(w.ids[4])).content == TURNS[4][1]
            await pal.wait_until_indexed(conv, timeout=180, layers=["embed"])
            out = await pal.query("Who plays a string instrument?", conversation_id=conv, top_k=2,
                                  speakers=["Leo"], time_range={"start": T0, "end": T0 + timedelta(hours=1)})
            assert out.items and all(it.speaker == "Leo" for it in out.items)
            assert out.items[0].id == w.ids[3]
            with pytest.raises(NotFound):
                await pal.get_event(10**12)

    asyncio.run(main())


# ============================================================ retries, against a real HTTP server


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


def test_parse_retry_after_and_event_id_scheme() -> None:
    assert parse_retry_after("3") == 3.0 and parse_retry_after("-1") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    past = format_datetime(datetime(2000, 1, 1, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after(past) == 0.0
    a = derive_event_id("c", "Ana", datetime(2024, 1, 1, 12), "hi")  # naive = UTC, as on the server
    assert a == derive_event_id("c", "Ana", datetime(2024, 1, 1, 13, tzinfo=timezone(timedelta(hours=1))), "hi")
    assert a.startswith("sdk1-") and len(a) == 37
    assert len({a, derive_event_id("c2", "Ana", datetime(2024, 1, 1, 12), "hi"),
                derive_event_id("c", "Ben", datetime(2024, 1, 1, 12), "hi"),
                derive_event_id("c", "Ana", datetime(2024, 1, 1, 12, 0, 0, 1), "hi"),
                derive_event_id("c", "Ana", datetime(2024, 1, 1, 12), "hi ")}) == 5
