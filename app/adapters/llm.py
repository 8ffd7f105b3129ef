"""The one LLM client: an OpenAI-compatible chat-completions API over httpx (`app.ports.LLM`).

Every LLM feature goes through it: the memory-graph extractor, the timeline's assertion extractor,
the intent router's last tier, HyDE expansion and /v1/answer. One request, one reply text; retried
on 5xx/429 and transport errors, never on other 4xx (a bad request will not get better). Every
failure is an `app.ports.LLMError`; callers decide what it means for them: the extractors fall back
to their rules for that chunk or batch (and count it), the intent router to its default label, HyDE
to pseudo-relevance feedback, the answer endpoint answers 502.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.ports import LLMError

QUERY_WAIT_S = 5.0  # the query path (intent router, HyDE) waits at most this long: a person is waiting


@dataclass(frozen=True)
class HttpLLM:
    """A client for one model at one endpoint. Frozen and compared by value, so callers that cache
    per LLM (the intent router) see the same key for the same configuration."""

    base_url: str  # e.g. "http://localhost:8080/v1" (the part before /chat/completions)
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 60.0
    max_retries: int = 1

    def chat(self, messages: Sequence[dict[str, str]], *, json_mode: bool = False,
             timeout_s: float | None = None) -> str:
        """The assistant's reply text to `messages` (temperature 0); `timeout_s` overrides the client's."""
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        body: dict[str, Any] = {"model": self.model, "temperature": 0, "messages": list(messages)}
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        url = self.base_url.rstrip("/") + "/chat/completions"
        timeout = self.timeout_s if timeout_s is None else timeout_s
        last: Exception | None = None
        with httpx.Client(timeout=timeout) as client:
            for _ in range(self.max_retries + 1):
                try:
                    resp = client.post(url, json=body, headers=headers)
                    resp.raise_for_status()
                    return str(resp.json()["choices"][0]["message"]["content"])
                except httpx.HTTPStatusError as exc:
                    last = exc
                    if exc.response.status_code < 500 and exc.response.status_code != 429:
                        break
                except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
                    last = exc
        assert last is not None
        raise LLMError(f"{type(last).__name__}: {str(last)[:200]}", kind=type(last).__name__) from last


def llm_from_settings(settings: Any, *, max_wait_s: float | None = None, max_retries: int = 1) -> HttpLLM | None:
    """The configured LLM (PALIMPSEST_LLM_BASE_URL, _MODEL, _API_KEY, _TIMEOUT_S), or None without a
    base URL. `max_wait_s` caps the timeout: the query path passes `QUERY_WAIT_S`."""
    if not settings.llm_base_url:
        return None
    timeout = settings.llm_timeout_s if max_wait_s is None else min(settings.llm_timeout_s, max_wait_s)
    return HttpLLM(settings.llm_base_url, settings.llm_model, settings.llm_api_key, timeout, max_retries)
