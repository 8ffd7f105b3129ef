"""What the sync and async clients share: configuration, retries, event ids, error mapping.

Nothing here does I/O; `_sync.py` and `_async.py` only differ in how they send and sleep.
"""
from __future__ import annotations

import email.utils
import json
import os
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import httpx
import pydantic

from palimpsest.client import errors
from palimpsest.client.models import (
    EventIn,
    FieldError,
    PipelineOptions,
    QueryIn,
    TimeRange,
    utc,
)

__version__ = "0.1.0"

DEFAULT_URL = "http://127.0.0.1:8000"
ENV_URL = "PALIMPSEST_URL"
ENV_KEY = "PALIMPSEST_API_KEY"
EVENT_ID_PREFIX = "sdk1-"
MAX_BATCH = 1000  # the server's default PALIMPSEST_MAX_BATCH_EVENTS


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before sending a request again.

    Retried: answers with a status in `retry_statuses` (429 and 502/503/504 by default) and
    transport failures (connection refused or reset, timeouts). Every Palimpsest call is safe to
    repeat: writes carry event ids (a repeat is answered `duplicate`), the rest read.

    The wait is the server's `Retry-After` when it sends one (seconds or an HTTP date, at most
    `retry_after_max`), else exponential: `backoff_base * 2**attempt`, at most `backoff_max`,
    less a random part of up to `jitter` of it so that many clients do not retry in step.
    """

    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    jitter: float = 0.25
    retry_after_max: float = 60.0
    retry_statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, 502, 503, 504}))

    def backoff(self, attempt: int) -> float:
        delay = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        return delay * (1 - self.jitter * random.random())

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            after = parse_retry_after(response.headers.get("retry-after"))
            if after is not None:
                return min(after, self.retry_after_max)
        return self.backoff(attempt)


NO_RETRY = RetryPolicy(max_retries=0)

# Failures where the request may not have reached the server, or its answer was lost.
RETRYABLE_EXCEPTIONS: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadTimeout,
    httpx.WriteTimeout,
    httpx.PoolTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None if absent or bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def derive_event_id(conversation_id: str, speaker: str, occurred_at: datetime, content: str) -> str:
    """The event id the client uses when the caller gives none.

    A hash of (conversation_id, speaker, occurred_at in UTC to the microsecond, content): the same
    event sent twice — a retry after a timeout, a re-run of an import — gets the same id, and the
    server answers the second one `duplicate` instead of storing it again. Two events that differ
    in any of the four get different ids. 128 bits of SHA-256, hex, prefixed `sdk1-` (the scheme's
    version; at most 37 characters, well inside the server's 256). The server derives the same id
    for an event posted without one (`app.domain.event.derive_event_id`).
    """
    from app.domain.event import derive_event_id as derive  # one scheme: the server derives the same id

    return derive(conversation_id, speaker, utc(occurred_at), content)


def _field_name(loc: Iterable[Any]) -> str:
    out = ""
    for p in loc:
        p = str(p)
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "body"


def _local_validation_error(exc: pydantic.ValidationError, prefix: str) -> errors.ValidationError:
    errs = [FieldError(field=_field_name([prefix, *e.get("loc", ())]) if prefix else _field_name(e.get("loc", ())),
                       message=e.get("msg", ""), type=e.get("type", "")) for e in exc.errors()]
    summary = "; ".join(f"{e.field}: {e.message}" for e in errs)
    return errors.ValidationError(f"invalid request (checked by the client): {summary}", errors=errs)


def prepare_events(events: Iterable[EventIn | Mapping[str, Any]], idempotent_ids: bool) -> list[EventIn]:
    """Events as models, each with an `occurred_at` and (if `idempotent_ids`) an `event_id`.

    A missing `occurred_at` is set to the client's clock now, once, before the first attempt: the
    retries of this call send the same time and so the same derived id, while a later call with
    the same words is a new event (people do say "ok" twice).
    """
    now = datetime.now(timezone.utc)
    out: list[EventIn] = []
    for i, e in enumerate(events):
        try:
            ev = e.model_copy() if isinstance(e, EventIn) else EventIn.model_validate(dict(e))
        except pydantic.ValidationError as exc:
            raise _local_validation_error(exc, f"events[{i}]") from None
        if ev.occurred_at is None and ev.supersedes is None:  # a correction keeps its old version's time
            ev.occurred_at = now
        if ev.event_id is None and idempotent_ids:
            from app.domain.event import derive_event_id as derive

            ev.event_id = derive(ev.conversation_id, ev.speaker, ev.occurred_at, ev.content)
        out.append(ev)
    return out


def events_body(events: list[EventIn]) -> dict[str, Any]:
    return {"events": [e.model_dump(mode="json", exclude_none=True) for e in events]}


def query_body(query: str, conversation_id: str | None, top_k: int | None, token_budget: int | None,
               speakers: list[str] | None, time_range: TimeRange | Mapping[str, Any] | None,
               pipeline: PipelineOptions | Mapping[str, Any] | None, as_of: datetime | None = None,
               where: Mapping[str, Any] | None = None) -> dict[str, Any]:
    try:
        q = QueryIn(query=query, conversation_id=conversation_id, top_k=top_k, token_budget=token_budget,
                    speakers=speakers, time_range=time_range, as_of=as_of, pipeline=pipeline,  # type: ignore[arg-type]
                    where=dict(where) if where is not None else None)
    except pydantic.ValidationError as exc:
        raise _local_validation_error(exc, "") from None
    return q.model_dump(mode="json", exclude_none=True)


def conversations_body(where: Mapping[str, Any] | None, speakers: list[str] | None,
                       time_range: TimeRange | Mapping[str, Any] | None, text: str | None, prefix: str | None,
                       limit: int, cursor: str | None) -> dict[str, Any]:
    """The body of POST /v1/conversations/search (unset filters left out)."""
    if isinstance(time_range, Mapping):
        try:
            time_range = TimeRange.model_validate(dict(time_range))
        except pydantic.ValidationError as exc:
            raise _local_validation_error(exc, "time_range.") from None
    body: dict[str, Any] = {"where": dict(where) if where is not None else None, "speakers": speakers,
                            "time_range": time_range.model_dump(mode="json", exclude_none=True) if time_range else None,
                            "text": text, "prefix": prefix, "limit": limit, "cursor": cursor}
    return {k: v for k, v in body.items() if v is not None}


def erasure_params(dry_run: bool, conversation_id: str | None = None,
                   all_conversations: bool = False) -> dict[str, Any]:
    """The query parameters of an erasure (`DELETE /v1/conversations/{id}`, `/v1/speakers/{name}`)."""
    params: dict[str, Any] = {"dry_run": "true"} if dry_run else {}
    if conversation_id is not None:
        params["conversation_id"] = conversation_id
    if all_conversations:
        params["all_conversations"] = "true"
    return params


def _detail_text(body: Any) -> str:
    if isinstance(body, dict):
        detail = body.get("detail", body.get("error"))
        if isinstance(detail, str):
            return detail
        if detail is not None:
            return json.dumps(detail, ensure_ascii=False)[:500]
        return json.dumps(body, ensure_ascii=False)[:500]
    return str(body)[:500] if body else ""


def _field_errors(body: Any) -> list[FieldError]:
    fields = body.get("fields") if isinstance(body, dict) else None
    if isinstance(fields, list) and fields:  # the API's error shape: {"error", "detail", "fields": [{"path", ...}]}
        return [FieldError(field=str(f.get("path", "")), message=str(f.get("message", "")), type=str(f.get("type", "")))
                for f in fields if isinstance(f, dict)]
    detail = body.get("detail") if isinstance(body, dict) else None
    if not isinstance(detail, list):
        return []
    out = []
    for d in detail:
        if not isinstance(d, dict):
            continue
        if "field" in d:  # the API's own shape: {"field", "message", "type"}
            out.append(FieldError(field=str(d["field"]), message=str(d.get("message", "")), type=str(d.get("type", ""))))
        else:  # FastAPI's default shape: {"loc", "msg", "type"}
            loc = list(d.get("loc", ()))
            if loc and loc[0] in ("body", "query", "path", "header"):
                loc = loc[1:]
            out.append(FieldError(field=_field_name(loc), message=str(d.get("msg", "")), type=str(d.get("type", ""))))
    return out


def error_for(response: httpx.Response) -> errors.PalimpsestError:
    """The exception for an answer that is not a success."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    status = response.status_code
    kw = {"status_code": status, "body": body, "request_id": response.headers.get("x-request-id")}
    where = f"{response.request.method} {response.request.url.path}"
    text = _detail_text(body)
    if status == 422:
        errs = _field_errors(body)
        summary = "; ".join(f"{e.field}: {e.message}" for e in errs) or text
        return errors.ValidationError(f"422 invalid request ({where}): {summary}", errors=errs, **kw)
    if status == 409:
        errs = _field_errors(body)
        summary = "; ".join(f"{e.field}: {e.message}" for e in errs) or text
        return errors.Conflict(f"409 conflict ({where}): {summary}", errors=errs, **kw)
    cls: type[errors.PalimpsestError]
    if status == 401:
        cls = errors.AuthError
    elif status == 403:
        cls = errors.PermissionDenied
    elif status == 404:
        cls = errors.NotFound
    elif status == 429:
        cls = errors.RateLimited
    elif status == 503:
        cls = errors.ServiceUnavailable
    elif status >= 500:
        cls = errors.ServerError
    else:
        cls = errors.PalimpsestError
    return cls(f"{status} {response.reason_phrase} ({where}): {text}".rstrip(": "), **kw)


def resolve_config(base_url: str | None, api_key: str | None) -> tuple[str, str | None]:
    url = (base_url or os.environ.get(ENV_URL) or DEFAULT_URL).rstrip("/")
    key = api_key if api_key is not None else os.environ.get(ENV_KEY)
    return url, key


def default_headers(api_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    h = {"User-Agent": f"palimpsest-python/{__version__}", "Accept": "application/json"}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    if extra:
        h.update(extra)
    return h


def chunks(items: list[EventIn], size: int) -> list[list[EventIn]]:
    size = max(1, min(size, MAX_BATCH))
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def quote_segment(segment: str) -> str:
    """A conversation id as one URL path segment."""
    return quote(segment, safe="")


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()
