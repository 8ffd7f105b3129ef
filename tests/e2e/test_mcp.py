"""The MCP server, driven by the official `mcp` SDK's own clients against the live service.

- streamable HTTP at /mcp in the API (mcp.client.streamable_http): the tools, the API keys (401
  without one, each call acting for its key's tenant, scopes enforced), forget (offered to `admin`
  keys only).
- stdio (mcp.client.stdio): the server process talks to the live API through the Python SDK.

The live service is the one tests/e2e/test_sdk.py starts (shared, started once per session).
"""
from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import httpx
import pytest

from tests.e2e.test_sdk import Live, live_service

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"remember", "recall", "timeline"}  # what a read/write key is offered
ADMIN_TOOLS = TOOLS | {"forget"}  # a key with the `admin` scope also gets the destructive tool
T0 = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)
FACTS = [
    ("Maya", "I adopted a golden retriever puppy named Biscuit last weekend."),
    ("Leo", "My sister is getting married in Lisbon this October."),
    ("Maya", "We repainted the kitchen a pale shade of green."),
]


@pytest.fixture(scope="session")
def live_mcp(tmp_path_factory, database_url, redis_url):
    with live_service(tmp_path_factory.mktemp("live-mcp"), database_url, redis_url) as svc:
        yield svc


@asynccontextmanager
async def http_session(live: Live, key: str) -> AsyncIterator:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as hc:
        async with streamable_http_client(f"{live.url}/mcp", http_client=hc) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                yield session


async def call(session, tool: str, **args):
    r = await session.call_tool(tool, args)
    text = "".join(getattr(c, "text", "") for c in r.content)
    return r, text


def _cli_has_mcp() -> bool:
    import typer.main

    from app.cli import app as cli

    return "mcp" in typer.main.get_command(cli).commands


def wait_indexed(live: Live, key: str, conv: str) -> None:
    from palimpsest.client import Palimpsest

    with Palimpsest(live.url, key) as pal:
        pal.wait_until_indexed(conv, timeout=180)


async def remember_facts(session, conv: str) -> list[dict]:
    out = []
    for i, (speaker, text) in enumerate(FACTS):
        r, body = await call(session, "remember", content=text, conversation_id=conv, speaker=speaker,
                             occurred_at=(T0 + timedelta(minutes=i)).isoformat())
        assert not r.is_error, body
        out.append(r.structured_content)
    return out


# ============================================================ streamable HTTP


@pytest.mark.slow
def test_http_tools_round_trip(live_mcp: Live, tenant) -> None:
    _, key = tenant
    conv = f"mcp-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with http_session(live_mcp, key) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            assert tools["recall"].annotations.read_only_hint is True
            assert set(tools["remember"].input_schema["required"]) == {"content", "conversation_id"}

            stored = await remember_facts(s, conv)
            assert [x["status"] for x in stored] == ["created"] * 3
            assert all(x["event_id"].startswith("sdk1-") for x in stored)
            # the same event again (same time, same words): nothing new is stored
            r, _ = await call(s, "remember", content=FACTS[0][1], conversation_id=conv, speaker="Maya",
                              occurred_at=T0.isoformat())
            assert r.structured_content["status"] == "duplicate" and r.structured_content["id"] == stored[0]["id"]

            await anyio.to_thread.run_sync(wait_indexed, live_mcp, key, conv)
            r, text = await call(s, "recall", query="What animal joined her household?", conversation_id=conv,
                                 top_k=2)
            assert not r.is_error, text
            top = r.structured_content["items"][0]
            assert top["id"] == stored[0]["id"] and "Biscuit" in top["content"]
            assert "dense" in top["signals"]
            assert "Biscuit" in r.structured_content["context"]
            assert "Biscuit" in text  # the same result as text, for hosts that only read text

            r, _ = await call(s, "recall", query="wedding", speakers=["Leo"], start="2024-06-01T00:00:00Z",
                              end="2024-06-02T00:00:00Z")  # across conversations, filtered
            assert [i["speaker"] for i in r.structured_content["items"]] == ["Leo"]

            r, _ = await call(s, "timeline", conversation_id=conv, limit=2)
            page1 = r.structured_content
            assert [e["content"] for e in page1["events"]] == [FACTS[0][1], FACTS[1][1]] and page1["next_cursor"]
            r, _ = await call(s, "timeline", conversation_id=conv, limit=2, cursor=page1["next_cursor"])
            assert [e["content"] for e in r.structured_content["events"]] == [FACTS[2][1]]
            assert r.structured_content["next_cursor"] is None

            r, text = await call(s, "remember", content="   ", conversation_id=conv)
            assert r.is_error and "invalid arguments" in text and "events[0].content" in text  # the 422's field
            # word for word the error docs/mcp.md quotes
            doc = " ".join((ROOT / "docs" / "mcp.md").read_text().split())
            quoted = ("remember failed: invalid arguments (events[0].content: must not be blank "
                      "(and must not contain NUL characters))")
            assert quoted in doc and quoted in text, text

    anyio.run(main)


@pytest.mark.slow
def test_http_requires_a_key_and_acts_for_its_tenant(live_mcp: Live, tenant, make_tenant) -> None:
    _, key = tenant
    _, other = make_tenant()
    _, read_only = make_tenant(scopes=("read",))
    conv = f"mcp-{uuid.uuid4().hex[:8]}"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer pal_nothere_xxxxxxxx"}, {"Authorization": "Basic abc"}):
        r = httpx.post(f"{live_mcp.url}/mcp", json=init, headers={**accept, **headers}, timeout=30)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", r.text
        assert r.json()["error"] == "unauthorized" and r.json()["fields"] == [] and "API key" in r.json()["detail"]
    r = httpx.post(f"{live_mcp.url}/mcp", json=init, headers={**accept, "Authorization": f"Bearer {key}"}, timeout=30)
    assert r.status_code == 200 and r.json()["result"]["serverInfo"]["name"] == "palimpsest"

    async def main() -> None:
        async with http_session(live_mcp, key) as s:
            await remember_facts(s, conv)
        async with http_session(live_mcp, other) as s:  # another tenant: nothing of it
            r, _ = await call(s, "timeline", conversation_id=conv)
            assert r.structured_content["events"] == []
            r, _ = await call(s, "recall", query="golden retriever puppy Biscuit")
            assert all(i["conversation_id"] != conv for i in r.structured_content["items"])
        async with http_session(live_mcp, read_only) as s:
            r, _ = await call(s, "timeline", conversation_id=conv)  # reading is allowed...
            assert r.structured_content["events"] == []
            r, text = await call(s, "remember", content="x", conversation_id=conv)  # ...writing is not
            assert r.is_error and "scope" in text

    anyio.run(main)


@pytest.mark.slow
def test_http_forget_only_for_admin_keys(live_mcp: Live, tenant, engine) -> None:
    from app.storage import tenants

    tid, key = tenant  # read + write: an agent's key
    with engine.begin() as conn:  # and an admin key of the same tenant
        admin_key = tenants.create_key(conn, tid, scopes=("read", "write", "admin"))
    conv = f"mcp-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with http_session(live_mcp, key) as s:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS  # forget is not offered
            await remember_facts(s, conv)
            r, text = await call(s, "forget", conversation_id=conv)
            assert r.is_error and "forget" in text.lower()  # unknown tool: nothing deleted
            r, _ = await call(s, "timeline", conversation_id=conv)
            assert len(r.structured_content["events"]) == 3
        async with http_session(live_mcp, admin_key) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == ADMIN_TOOLS and tools["forget"].annotations.destructive_hint is True
            r, text = await call(s, "forget", conversation_id=conv, dry_run=True)
            assert not r.is_error, text
            assert r.structured_content["detail"]["dry_run"] is True
            assert r.structured_content["detail"]["counts"]["events"] == 3
            r, text = await call(s, "forget", conversation_id=conv)
            assert not r.is_error, text
            assert r.structured_content["detail"].get("deleted_events") == 3
            assert r.structured_content["detail"]["audit_id"] is not None
            after, _ = await call(s, "timeline", conversation_id=conv)
            assert after.structured_content["events"] == []

    anyio.run(main)


@pytest.mark.slow
def test_http_with_the_sdk_high_level_client(live_mcp: Live, tenant) -> None:
    """`mcp.Client` (default mode: it probes for the newest protocol and falls back to the
    initialize handshake) over the same endpoint, with the key on its HTTP client."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    _, key = tenant
    conv = f"mcp-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as hc:
            async with Client(streamable_http_client(f"{live_mcp.url}/mcp", http_client=hc)) as c:
                assert {t.name for t in (await c.list_tools()).tools} == TOOLS
                r = await c.call_tool("remember", {"content": "The spare key is under the blue pot.",
                                                   "conversation_id": conv, "speaker": "Ana"})
                assert not r.is_error and r.structured_content["status"] == "created"
                r = await c.call_tool("timeline", {"conversation_id": conv})
                assert [e["content"] for e in r.structured_content["events"]] == ["The spare key is under the blue pot."]

    anyio.run(main)


def test_forget_says_clearly_when_the_api_cannot_delete() -> None:
    """Against a server without DELETE /v1/conversations/{id} (a real local HTTP server answering
    405, or FastAPI's bare 404 for an unknown route), forget reports that nothing was deleted."""
    from mcp import Client

    from app.api.mcp_tools import build_server
    from palimpsest.client import AsyncPalimpsest
    from tests.integration.test_sdk_retries import Scripted

    async def forget_against(script) -> str:
        with Scripted(script) as srv:

            @asynccontextmanager
            async def client_for(_ctx):
                async with AsyncPalimpsest(srv.url, "pal_a_b", max_retries=0) as pal:
                    yield pal

            async with Client(build_server(client_for, forget=True)) as c:
                r = await c.call_tool("forget", {"conversation_id": "c1"})
            assert r.is_error and [s[1:3] for s in srv.seen] == [("DELETE", "/v1/conversations/c1")]
            return "".join(getattr(x, "text", "") for x in r.content)

    async def main() -> None:
        for script in ([(405, {}, {"detail": "Method Not Allowed"})], [(404, {}, {"detail": "Not Found"})]):
            text = await forget_against(script)
            assert "forget is not available" in text and "nothing was deleted" in text
        text = await forget_against([(403, {}, {"error": "forbidden", "detail": "this API key lacks the 'write' scope"})])
        assert "lacks the scope" in text

    anyio.run(main)


# ============================================================ stdio


@pytest.mark.slow
def test_stdio_server_over_the_live_api(live_mcp: Live, tenant) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    _, key = tenant
    conv = f"mcp-stdio-{uuid.uuid4().hex[:8]}"
    if _cli_has_mcp():  # `palimpsest mcp` (what the console script runs), as an agent host would start it
        command, args = sys.executable, ["-c", "from app.cli import main; main()", "mcp"]
    else:
        command, args = sys.executable, ["-m", "app.api.mcp"]
    params = StdioServerParameters(command=command, args=args, cwd=str(ROOT),
                                   env={"PALIMPSEST_URL": live_mcp.url, "PALIMPSEST_API_KEY": key})

    async def main() -> None:
        with anyio.fail_after(240):
            await session_work()

    async def session_work() -> None:
        async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            stored = await remember_facts(s, conv)
            await anyio.to_thread.run_sync(wait_indexed, live_mcp, key, conv)
            r, text = await call(s, "recall", query="Where is the wedding?", conversation_id=conv, top_k=1)
            assert not r.is_error, text
            assert r.structured_content["items"][0]["id"] == stored[1]["id"]
            r, _ = await call(s, "timeline", conversation_id=conv)
            assert [e["speaker"] for e in r.structured_content["events"]] == ["Maya", "Leo", "Maya"]

    anyio.run(main)


def test_stdio_without_a_key_says_so() -> None:
    env = {"PATH": "/usr/bin:/bin", "PALIMPSEST_URL": "http://127.0.0.1:9"}
    p = subprocess.run([sys.executable, "-m", "app.api.mcp"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "PALIMPSEST_API_KEY" in p.stderr and p.stdout == ""


def test_mount_is_idempotent_and_survives_two_lifespans() -> None:
    """mount_mcp twice adds one route; each lifespan gets a fresh session manager (the SDK's
    manager runs only once), so the app can be started, stopped and started again (as tests do)."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from app.api.mcp import MCP_PATH, mount_mcp

    app = FastAPI()
    mount_mcp(app)
    mount_mcp(app)
    assert [getattr(r, "path", None) for r in app.routes].count(MCP_PATH) == 1
    managers = []
    for _ in range(2):
        with TestClient(app) as c:
            managers.append(app.state.mcp.manager)
            assert c.post(MCP_PATH, json={}).status_code == 401  # no key: refused before MCP
    assert managers[0] is not None and managers[1] is not None and managers[0] is not managers[1]
    assert app.state.mcp.manager is None
