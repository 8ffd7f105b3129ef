"""The asynchronous client (asyncio or trio through anyio, as httpx supports)."""
from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import datetime
from typing import Any

import anyio
import httpx

from palimpsest.client import _core, errors
from palimpsest.client.models import (
    ConversationPage,
    ConversationStatus,
    ConversationSummary,
    DeleteResult,
    Event,
    EventIn,
    EventPage,
    EventResult,
    PipelineOptions,
    AnswerResult,
    QueryResult,
    TimeRange,
    WriteResult,
)


class AsyncPalimpsest:
    """The async twin of `Palimpsest`: the same methods, awaited; `iter_events` is an async iterator.

        async with AsyncPalimpsest("http://127.0.0.1:8000", api_key="pal_...") as pal:
            await pal.add_event("c1", "Ana", "We moved to Denver last spring.")
            async for ev in pal.iter_events("c1"):
                print(ev.occurred_at, ev.speaker, ev.content)

    `transport` may be any httpx async transport, e.g. `httpx.ASGITransport(app)` to talk to an
    application in the same process (the MCP server mounted in the API does this).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = 30.0,
        retry: _core.RetryPolicy | None = None,
        max_retries: int | None = None,
        idempotent_ids: bool = True,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url, self.api_key = _core.resolve_config(base_url, api_key)
        policy = retry or _core.RetryPolicy()
        if max_retries is not None:
            policy = dataclasses.replace(policy, max_retries=max_retries)
        self.retry = policy
        self.idempotent_ids = idempotent_ids
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=_core.default_headers(self.api_key, headers),
                                       timeout=timeout, transport=transport)

    # ------------------------------------------------------------ plumbing

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncPalimpsest:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)

    async def _request(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None,
                       retry: _core.RetryPolicy | None = None) -> httpx.Response:
        policy = retry or self.retry
        attempt = 0
        while True:
            try:
                response = await self._http.request(method, path, json=json, params=params)
            except _core.RETRYABLE_EXCEPTIONS as exc:
                if attempt >= policy.max_retries:
                    raise errors.APIConnectionError(
                        f"{method} {self.base_url}{path} failed after {attempt + 1} attempt(s): {exc!r}") from exc
                await self._sleep(policy.delay(attempt, None))
                attempt += 1
                continue
            if response.is_success:
                return response
            if response.status_code in policy.retry_statuses and attempt < policy.max_retries:
                await self._sleep(policy.delay(attempt, response))
                attempt += 1
                continue
            raise _core.error_for(response)

    # ------------------------------------------------------------ events

    async def write_events(self, events: Iterable[EventIn | Mapping[str, Any]], *,
                           batch_size: int = _core.MAX_BATCH) -> WriteResult:
        """See `Palimpsest.write_events`."""
        prepared = _core.prepare_events(events, self.idempotent_ids)
        results: list[EventResult] = []
        for part in _core.chunks(prepared, batch_size):
            if not part:
                break
            r = await self._request("POST", "/v1/events", json=_core.events_body(part))
            results.extend(WriteResult.model_validate(r.json()).results)
        return WriteResult(results=results)

    async def add_event(self, conversation_id: str, speaker: str, content: str, *, occurred_at: datetime | None = None,
                        event_id: str | None = None, recipient: str | None = None, role: str | None = None,
                        metadata: Mapping[str, Any] | None = None, supersedes: str | None = None) -> EventResult:
        """Write one event; see `Palimpsest.write_events`."""
        ev = EventIn(conversation_id=conversation_id, speaker=speaker, content=content, occurred_at=occurred_at,
                     event_id=event_id, recipient=recipient, role=role,
                     metadata=dict(metadata) if metadata is not None else None, supersedes=supersedes)
        return (await self.write_events([ev])).results[0]

    async def correct_event(self, conversation_id: str, supersedes: str, speaker: str, content: str, *,
                      occurred_at: datetime | None = None, event_id: str | None = None, recipient: str | None = None,
                      role: str | None = None, metadata: Mapping[str, Any] | None = None) -> EventResult:
        """Correct an event: write a new version that supersedes the one with `event_id` `supersedes`
        in the conversation. The old version is kept verbatim and linked (`Event.superseded_by`);
        queries use the newest version. Without `occurred_at` the new version takes the old one's
        time. An event is corrected once: correct the newest version. A `supersedes` naming an
        event corrected already, or no event at all, is a `Conflict` (409)."""
        return await self.add_event(conversation_id, speaker, content, occurred_at=occurred_at, event_id=event_id,
                              recipient=recipient, role=role, metadata=metadata, supersedes=supersedes)

    async def get_event(self, id: int) -> Event:
        return Event.model_validate((await self._request("GET", f"/v1/events/{int(id)}")).json())

    async def list_events(self, conversation_id: str, *, limit: int = 100, cursor: str | None = None) -> EventPage:
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        r = await self._request("GET", f"/v1/conversations/{_core.quote_segment(conversation_id)}/events", params=params)
        return EventPage.model_validate(r.json())

    async def iter_events(self, conversation_id: str, *, page_size: int = 100) -> AsyncIterator[Event]:
        """Every event of a conversation in time order, page after page."""
        cursor: str | None = None
        while True:
            page = await self.list_events(conversation_id, limit=page_size, cursor=cursor)
            for ev in page.events:
                yield ev
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def list_conversations(self, *, where: Mapping[str, Any] | None = None, speakers: list[str] | None = None,
                                 time_range: TimeRange | Mapping[str, Any] | None = None, text: str | None = None,
                                 prefix: str | None = None, limit: int = 200,
                                 cursor: str | None = None) -> ConversationPage:
        """As `Palimpsest.list_conversations`."""
        body = _core.conversations_body(where, speakers, time_range, text, prefix, limit, cursor)
        r = await self._request("POST", "/v1/conversations/search", json=body)
        return ConversationPage.model_validate(r.json())

    async def iter_conversations(self, *, page_size: int = 200, **filters: Any) -> AsyncIterator[ConversationSummary]:
        """Every conversation `list_conversations(**filters)` finds, page after page."""
        cursor: str | None = None
        while True:
            page = await self.list_conversations(limit=page_size, cursor=cursor, **filters)
            for c in page.conversations:
                yield c
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def delete_conversation(self, conversation_id: str, *, dry_run: bool = False) -> DeleteResult:
        """Forget a conversation (`DELETE /v1/conversations/{id}`, `admin` key): its events and what was
        derived from them. `dry_run`: only the counts per table that would go."""
        r = await self._request("DELETE", f"/v1/conversations/{_core.quote_segment(conversation_id)}",
                          params=_core.erasure_params(dry_run) or None)
        body = r.json() if r.content else {}
        return DeleteResult.model_validate({"conversation_id": conversation_id, **(body if isinstance(body, dict) else {})})

    async def forget_speaker(self, speaker: str, *, conversation_id: str | None = None, all_conversations: bool = False,
                       dry_run: bool = False) -> DeleteResult:
        """Forget what `speaker` said in one conversation, or in all with `all_conversations=True`
        (`DELETE /v1/speakers/{name}`, `admin` key). `dry_run`: only the counts."""
        params = _core.erasure_params(dry_run, conversation_id, all_conversations)
        r = await self._request("DELETE", f"/v1/speakers/{_core.quote_segment(speaker)}", params=params)
        return DeleteResult.model_validate(r.json())

    async def set_language(self, language: str | None, *, conversation_id: str | None = None) -> dict[str, Any]:
        """`PUT /v1/settings/language`: the tenant's language (`admin` key) or one conversation's."""
        body: dict[str, Any] = {"language": language}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        return (await self._request("PUT", "/v1/settings/language", json=body)).json()

    async def service_status(self) -> dict[str, Any]:
        """`GET /v1/status`: the tenant, the key's scopes, the language and which layers run for it."""
        return (await self._request("GET", "/v1/status")).json()

    # ------------------------------------------------------------ status and query

    async def status(self, conversation_id: str) -> ConversationStatus:
        r = await self._request("GET", f"/v1/conversations/{_core.quote_segment(conversation_id)}/status")
        return ConversationStatus.model_validate(r.json())

    async def wait_until_indexed(self, conversation_id: str, timeout: float = 60.0, *, poll_interval: float = 0.25,
                                 layers: Iterable[str] | None = None) -> ConversationStatus:
        wanted = set(layers) if layers is not None else None
        deadline = _core.Deadline(timeout)
        interval = poll_interval
        while True:
            st = await self.status(conversation_id)
            if all(n == 0 for layer, n in st.pending.items() if wanted is None or layer in wanted):
                return st
            left = deadline.left()
            if left <= 0:
                raise errors.IndexingTimeout(
                    f"conversation {conversation_id!r} not indexed within {timeout}s: pending {st.pending}", status=st)
            await self._sleep(min(interval, left))
            interval = min(interval * 1.5, 2.0)

    async def query(self, query: str, *, conversation_id: str | None = None, top_k: int | None = None,
                    token_budget: int | None = None, speakers: list[str] | None = None,
                    time_range: TimeRange | Mapping[str, Any] | None = None,
                    pipeline: PipelineOptions | Mapping[str, Any] | None = None,
                    as_of: datetime | None = None, where: Mapping[str, Any] | None = None) -> QueryResult:
        """As `Palimpsest.query`."""
        body = _core.query_body(query, conversation_id, top_k, token_budget, speakers, time_range, pipeline, as_of,
                                where)
        return QueryResult.model_validate((await self._request("POST", "/v1/query", json=body)).json())

    async def answer(self, query: str, *, conversation_id: str | None = None, top_k: int | None = None,
               token_budget: int | None = None, speakers: list[str] | None = None,
               time_range: TimeRange | Mapping[str, Any] | None = None,
               pipeline: PipelineOptions | Mapping[str, Any] | None = None, compress: bool = False,
               as_of: datetime | None = None, where: Mapping[str, Any] | None = None) -> AnswerResult:
        """The server's LLM answers from the query's context (501 `ServerError` when it has none; not retried)."""
        body = _core.query_body(query, conversation_id, top_k, token_budget, speakers, time_range, pipeline, as_of,
                                where)
        return AnswerResult.model_validate((await self._request("POST", "/v1/answer", json=body | {"compress": compress})).json())

    # ------------------------------------------------------------ health

    async def health(self) -> dict[str, Any]:
        return (await self._request("GET", "/healthz")).json()

    async def ready(self) -> dict[str, Any]:
        r = await self._http.get("/readyz")
        if r.status_code not in (200, 503):
            raise _core.error_for(r)
        return r.json()
