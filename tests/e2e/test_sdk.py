"""The Python SDK (`palimpsest.client`) against the LIVE service (uvicorn + a Celery worker on the
test database and Redis, started once per session and shared with the other e2e tests:
tests/support/stack.py): writes with derived idempotent ids, reads, auto-paging, status,
wait_until_indexed, query, typed errors, the async client.

Its retries against a scripted local server: tests/integration/test_sdk_retries.py; parsing
Retry-After and the event-id scheme: tests/unit/test_sdk.py.
"""
from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from palimpsest.client import (
    AsyncPalimpsest,
    AuthError,
    NotFound,
    Palimpsest,
    PermissionDenied,
    ServerError,
    ValidationError,
    derive_event_id,
)
# the live service: one API + worker for the session (tests/support/stack.py); test_mcp.py imports
# `Live` and `live_service` from here
from tests.support.stack import Live, live, live_service  # noqa: F401

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
        # an explicit event_id is used as given; idempotent_ids=False sends none, and the server
        # derives the same id from the same fields
        e = pal.add_event(conv, "Ben", "mine", event_id="client-1")
        assert e.event_id == "client-1"
    with Palimpsest(live.url, key, idempotent_ids=False) as raw:
        f = raw.add_event(conv, "Ben", "no id", occurred_at=T0)
        assert f.event_id == derive_event_id(conv, "Ben", T0, "no id") and f.status == "created"


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
        with pytest.raises(NotFound):  # nothing of the refused batch was written: no such conversation
            pal.status(conv)
        with pytest.raises(ValidationError) as e:
            pal.list_events(conv, cursor="not-a-cursor")
        assert e.value.fields == ["cursor"]
        with pytest.raises(ValidationError) as e:  # caught before sending: unknown field
            pal.write_events([{"conversation_id": conv, "speaker": "A", "content": "x", "mood": "happy"}])
        assert e.value.status_code is None and e.value.fields == ["events[0].mood"]
        mine = pal.add_event(conv, "Ana", "private")
        assert pal.status(conv).events == 1  # its first event gives it a status
    _, other = make_tenant()
    with Palimpsest(live.url, other) as pal2:  # another tenant sees none of it
        with pytest.raises(NotFound):
            pal2.get_event(mine.id)
        with pytest.raises(NotFound):
            pal2.status(conv)


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
