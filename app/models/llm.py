"""A client for an OpenAI-compatible chat-completions API (httpx), used by the intent router and /v1/answer.

One request, one reply text; retried on 5xx/429 and transport errors, never on other 4xx (a bad
request will not get better). Callers decide what a failure means for them: the intent router
falls back to its default label, the answer endpoint answers 502.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class LLMConfig:
    base_url: str  # e.g. "http://localhost:8080/v1" (the part before /chat/completions)
    model: str
    api_key: str | None = None
    timeout_s: float = 5.0


class LLMError(RuntimeError):
    """The LLM could not be reached or gave no usable reply."""


def chat(cfg: LLMConfig, messages: Sequence[dict[str, str]], *, json_mode: bool = False, max_retries: int = 1,
         client: httpx.Client | None = None) -> str:
    """The assistant's reply text to `messages` (temperature 0)."""
    headers = {"content-type": "application/json"}
    if cfg.api_key:
        headers["authorization"] = f"Bearer {cfg.api_key}"
    body: dict[str, Any] = {"model": cfg.model, "temperature": 0, "messages": list(messages)}
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    url = cfg.base_url.rstrip("/") + "/chat/completions"
    own = client is None
    c = client or httpx.Client(timeout=cfg.timeout_s)
    last: Exception | None = None
    try:
        for _ in range(max_retries + 1):
            try:
                resp = c.post(url, json=body, headers=headers, timeout=cfg.timeout_s)
                resp.raise_for_status()
                return str(resp.json()["choices"][0]["message"]["content"])
            except httpx.HTTPStatusError as exc:
                last = exc
                if exc.response.status_code < 500 and exc.response.status_code != 429:
                    break
            except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
                last = exc
    finally:
        if own:
            c.close()
    raise LLMError(f"{type(last).__name__}: {str(last)[:200]}") from last
