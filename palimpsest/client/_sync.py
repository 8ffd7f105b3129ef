"""The synchronous client."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

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


class Palimpsest:
    """A client for one Palimpsest server and one API key.

        with Palimpsest("http://127.0.0.1:8000", api_key="pal_...") as pal:
            pal.add_event("c1", "Ana", "We moved to Denver last spring.")
            pal.wait_until_indexed("c1")
            print(pal.query("Where does Ana live?", conversation_id="c1").context)

    `base_url` and `api_key` default to the environment variables PALIMPSEST_URL and
    PALIMPSEST_API_KEY. Retries follow `retry` (a `RetryPolicy`; `max_retries` is a shortcut).
    With `idempotent_ids` (the default) every event written without an `event_id` gets one
    derived from its content (see `derive_event_id`), so no retry can store it twice.
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
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url, self.api_key = _core.resolve_config(base_url, api_key)
        policy = retry or _core.RetryPolicy()
        if max_retries is not None:
            policy = dataclasses.replace(policy, max_retries=max_retries)
        self.retry = policy
        self.idempotent_ids = idempotent_ids
        self._http = httpx.Client(base_url=self.base_url, headers=_core.default_headers(self.api_key, headers),
                                  timeout=timeout, transport=transport)

    # ------------------------------------------------------------ plumbing

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Palimpsest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def _request(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None,
                 retry: _core.RetryPolicy | None = None) -> httpx.Response:
        policy = retry or self.retry
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, json=json, params=params)
            except _core.RETRYABLE_EXCEPTIONS as exc:
                if attempt >= policy.max_retries:
                    raise errors.APIConnectionError(
                        f"{method} {self.base_url}{path} failed after {attempt + 1} attempt(s): {exc!r}") from exc
                self._sleep(policy.delay(attempt, None))
                attempt += 1
                continue
            if response.is_success:
                return response
            if response.status_code in policy.retry_statuses and attempt < policy.max_retries:
                self._sleep(policy.delay(attempt, response))
                attempt += 1
                continue
            raise _core.error_for(response)

    # ------------------------------------------------------------ events

    def write_events(self, events: Iterable[EventIn | Mapping[str, Any]], *, batch_size: int = _core.MAX_BATCH) -> WriteResult:
        """Write events (verbatim); one result per event, in order: `created` or `duplicate`.

        Up to `batch_size` (at most 1,000) events go in one request, which the server writes in one
        transaction; more are sent as several requests. Events without `event_id` or `occurred_at`
        get them here (see the class doc), so a call repeated after any failure stores nothing twice.
        """
        prepared = _core.prepare_events(events, self.idempotent_ids)
        results: list[EventResult] = []
        for part in _core.chunks(prepared, batch_size):
            if not part:
                break
            r = self._request("POST", "/v1/events", json=_core.events_body(part))
            results.extend(WriteResult.model_validate(r.json()).results)
        return WriteResult(results=results)

    def add_event(self, conversation_id: str, speaker: str, content: str, *, occurred_at: datetime | None = None,
                  event_id: str | None = None, recipient: str | None = None, role: str | None = None,
                  metadata: Mapping[str, Any] | None = None, supersedes: str | None = None) -> EventResult:
        """Write one event; see `write_events`."""
        ev = EventIn(conversation_id=conversation_id, speaker=speaker, content=content, occurred_at=occurred_at,
                     event_id=event_id, recipient=recipient, role=role,
                     metadata=dict(metadata) if metadata is not None else None, supersedes=supersedes)
        return self.write_events([ev]).results[0]

    def correct_event(self, conversation_id: str, supersedes: str, speaker: str, content: str, *,
                      occurred_at: datetime | None = None, event_id: str | None = None, recipient: str | None = None,
                      role: str | None = None, metadata: Mapping[str, Any] | None = None) -> EventResult:
        """Correct an event: write a new version that supersedes the one with `event_id` `supersedes`
        in the conversation. The old version is kept verbatim and linked (`Event.superseded_by`);
        queries use the newest version. Without `occurred_at` the new version takes the old one's
        time. An event is corrected once: correct the newest version. A `supersedes` naming an
        event corrected already, or no event at all, is a `Conflict` (409)."""
        return self.add_event(conversation_id, speaker, content, occurred_at=occurred_at, event_id=event_id,
                              recipient=recipient, role=role, metadata=metadata, supersedes=supersedes)

    def get_event(self, id: int) -> Event:
        """One event exactly as stored (`id` is the server's numeric id)."""
        return Event.model_validate(self._request("GET", f"/v1/events/{int(id)}").json())

    def list_events(self, conversation_id: str, *, limit: int = 100, cursor: str | None = None) -> EventPage:
        """One page of a conversation's events in time order; pass `next_cursor` on for the next."""
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        r = self._request("GET", f"/v1/conversations/{_core.quote_segment(conversation_id)}/events", params=params)
        return EventPage.model_validate(r.json())

    def iter_events(self, conversation_id: str, *, page_size: int = 100) -> Iterator[Event]:
        """Every event of a conversation in time order, fetching page after page as it goes."""
        cursor: str | None = None
        while True:
            page = self.list_events(conversation_id, limit=page_size, cursor=cursor)
            yield from page.events
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def list_conversations(self, *, where: Mapping[str, Any] | None = None, speakers: list[str] | None = None,
                           time_range: TimeRange | Mapping[str, Any] | None = None, text: str | None = None,
                           prefix: str | None = None, limit: int = 200, cursor: str | None = None) -> ConversationPage:
        """One page of the tenant's conversations, most recently active first: those with an event
        whose metadata contains `where`, said by one of `speakers`, inside `time_range`, saying the
        words of `text` (full text), with an id starting with `prefix`. Pass `next_cursor` on, with
        the same filters, for the next page."""
        body = _core.conversations_body(where, speakers, time_range, text, prefix, limit, cursor)
        return ConversationPage.model_validate(self._request("POST", "/v1/conversations/search", json=body).json())

    def iter_conversations(self, *, page_size: int = 200, **filters: Any) -> Iterator[ConversationSummary]:
        """Every conversation `list_conversations(**filters)` finds, page after page."""
        cursor: str | None = None
        while True:
            page = self.list_conversations(limit=page_size, cursor=cursor, **filters)
            yield from page.conversations
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def delete_conversation(self, conversation_id: str, *, dry_run: bool = False) -> DeleteResult:
        """Forget a conversation (`DELETE /v1/conversations/{id}`, `admin` key): its events and what was
        derived from them. `dry_run`: only the counts per table that would go."""
        r = self._request("DELETE", f"/v1/conversations/{_core.quote_segment(conversation_id)}",
                          params=_core.erasure_params(dry_run) or None)
        body = r.json() if r.content else {}
        return DeleteResult.model_validate({"conversation_id": conversation_id, **(body if isinstance(body, dict) else {})})

    def forget_speaker(self, speaker: str, *, conversation_id: str | None = None, all_conversations: bool = False,
                       dry_run: bool = False) -> DeleteResult:
        """Forget what `speaker` said in one conversation, or in all with `all_conversations=True`
        (`DELETE /v1/speakers/{name}`, `admin` key). `dry_run`: only the counts."""
        params = _core.erasure_params(dry_run, conversation_id, all_conversations)
        r = self._request("DELETE", f"/v1/speakers/{_core.quote_segment(speaker)}", params=params)
        return DeleteResult.model_validate(r.json())

    def set_language(self, language: str | None, *, conversation_id: str | None = None) -> dict[str, Any]:
        """`PUT /v1/settings/language`: the tenant's language (`admin` key) or one conversation's."""
        body: dict[str, Any] = {"language": language}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        return (self._request("PUT", "/v1/settings/language", json=body)).json()

    def service_status(self) -> dict[str, Any]:
        """`GET /v1/status`: the tenant, the key's scopes, the language and which layers run for it."""
        return (self._request("GET", "/v1/status")).json()

    # ------------------------------------------------------------ status and query

    def status(self, conversation_id: str) -> ConversationStatus:
        """Event count and, per background layer, how many events still wait for it; `NotFound` when
        the tenant has no event in the conversation."""
        r = self._request("GET", f"/v1/conversations/{_core.quote_segment(conversation_id)}/status")
        return ConversationStatus.model_validate(r.json())

    def wait_until_indexed(self, conversation_id: str, timeout: float = 60.0, *, poll_interval: float = 0.25,
                           layers: Iterable[str] | None = None) -> ConversationStatus:
        """Poll `status` until no layer (or none of `layers`) has work pending; raise `IndexingTimeout`."""
        wanted = set(layers) if layers is not None else None
        deadline = _core.Deadline(timeout)
        interval = poll_interval
        while True:
            st = self.status(conversation_id)
            if all(n == 0 for layer, n in st.pending.items() if wanted is None or layer in wanted):
                return st
            left = deadline.left()
            if left <= 0:
                raise errors.IndexingTimeout(
                    f"conversation {conversation_id!r} not indexed within {timeout}s: pending {st.pending}", status=st)
            self._sleep(min(interval, left))
            interval = min(interval * 1.5, 2.0)

    def query(self, query: str, *, conversation_id: str | None = None, top_k: int | None = None,
              token_budget: int | None = None, speakers: list[str] | None = None,
              time_range: TimeRange | Mapping[str, Any] | None = None,
              pipeline: PipelineOptions | Mapping[str, Any] | None = None,
              as_of: datetime | None = None, where: Mapping[str, Any] | None = None) -> QueryResult:
        """Evidence for a question: ranked `items` (each signal's rank and score) and a dated,
        time-ordered `context` inside `token_budget`. Without `conversation_id` every conversation
        of the tenant is searched; `where` keeps to events whose metadata contains it
        (`{"user": "u-42"}`), `speakers` and `time_range` narrow further."""
        body = _core.query_body(query, conversation_id, top_k, token_budget, speakers, time_range, pipeline, as_of,
                                where)
        return QueryResult.model_validate(self._request("POST", "/v1/query", json=body).json())

    def answer(self, query: str, *, conversation_id: str | None = None, top_k: int | None = None,
               token_budget: int | None = None, speakers: list[str] | None = None,
               time_range: TimeRange | Mapping[str, Any] | None = None,
               pipeline: PipelineOptions | Mapping[str, Any] | None = None, compress: bool = False,
               as_of: datetime | None = None, where: Mapping[str, Any] | None = None) -> AnswerResult:
        """The server's LLM answers from the query's context (501 `ServerError` when it has none; not retried)."""
        body = _core.query_body(query, conversation_id, top_k, token_budget, speakers, time_range, pipeline, as_of,
                                where)
        return AnswerResult.model_validate((self._request("POST", "/v1/answer", json=body | {"compress": compress})).json())

    # ------------------------------------------------------------ health

    def health(self) -> dict[str, Any]:
        """`GET /healthz`: the process is up."""
        return self._request("GET", "/healthz").json()

    def ready(self) -> dict[str, Any]:
        """`GET /readyz` once, no retries: `{"status": "ready"|"not ready", "checks": {...}}`."""
        r = self._http.get("/readyz")
        if r.status_code not in (200, 503):
            raise _core.error_for(r)
        return r.json()
