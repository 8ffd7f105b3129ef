"""The service's public HTTP API as the benchmarks use it: a pooled, thread-safe client with retries
(post events, conversation status, erase, list conversations, the whole service's pending work, query)."""
from __future__ import annotations

import time
from typing import Any

import httpx


class ServiceError(RuntimeError):
    pass


class Client:
    """A pooled, thread-safe httpx client for the service's API."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 120.0, pool: int = 8):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout,
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
        )

    def close(self) -> None:
        self.http.close()

    def _request(self, method: str, path: str, retries: int = 3, **kw) -> httpx.Response:
        delay = 0.5
        for attempt in range(retries + 1):
            try:
                resp = self.http.request(method, path, **kw)
            except httpx.TransportError as exc:
                if attempt == retries:
                    raise ServiceError(f"{method} {path}: {exc!r}") from exc
            else:
                if resp.status_code < 500 and resp.status_code != 429:
                    return resp
                if attempt == retries:
                    return resp
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                r = self.http.get("/readyz", timeout=5.0)
                if r.status_code == 200:
                    return
                last = f"HTTP {r.status_code}"
            except httpx.HTTPError as exc:
                last = repr(exc)
            time.sleep(0.5)
        raise ServiceError(f"service not ready after {timeout}s ({last})")

    def post_events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        r = self._request("POST", "/v1/events", json={"events": events})
        if r.status_code >= 300:
            raise ServiceError(f"POST /v1/events: HTTP {r.status_code}: {r.text[:500]}")
        return r.json()["results"]

    def status(self, conversation_id: str) -> dict[str, Any]:
        """Its event count and pending work per layer; a conversation the service holds no event of
        (404: none posted, or all erased) has none of either."""
        r = self._request("GET", f"/v1/conversations/{conversation_id}/status")
        if r.status_code == 404:
            return {"conversation_id": conversation_id, "events": 0, "pending": {}}
        if r.status_code >= 300:
            raise ServiceError(f"GET status of {conversation_id}: HTTP {r.status_code}: {r.text[:300]}")
        return r.json()

    def delete_conversation(self, conversation_id: str) -> int:
        """Forget a conversation (for a fresh ingest); 0 when the service did not have it."""
        r = self._request("DELETE", f"/v1/conversations/{conversation_id}")
        if r.status_code == 404:
            return 0
        if r.status_code >= 300:
            raise ServiceError(f"DELETE conversation {conversation_id}: HTTP {r.status_code}: {r.text[:300]}")
        return int(r.json().get("deleted_events", 0))

    def conversation_ids(self) -> list[str]:
        """Every conversation the key's tenant holds (the data set's and any other)."""
        ids: list[str] = []
        params: dict[str, Any] = {"limit": 200}
        while True:
            r = self._request("GET", "/v1/conversations", params=params)
            if r.status_code >= 300:
                raise ServiceError(f"GET /v1/conversations: HTTP {r.status_code}: {r.text[:300]}")
            page = r.json()
            ids += [c["conversation_id"] for c in page["conversations"]]
            if not page.get("next_cursor"):
                return ids
            params["cursor"] = page["next_cursor"]

    def service_pending(self) -> int | None:
        """Events waiting for a layer in the whole service, every conversation of every tenant
        (`/metrics`, palimpsest_indexing_pending); None when the service does not say."""
        from prometheus_client.parser import text_string_to_metric_families

        try:
            r = self._request("GET", "/metrics", retries=1)
        except ServiceError:
            return None
        fams = [f for f in text_string_to_metric_families(r.text) if f.name == "palimpsest_indexing_pending"] \
            if r.status_code == 200 else []
        return int(sum(s.value for f in fams for s in f.samples)) if fams else None

    def query(self, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """The response and the client-side latency in ms."""
        t0 = time.perf_counter()
        r = self._request("POST", "/v1/query", json=body)
        ms = (time.perf_counter() - t0) * 1000.0
        if r.status_code >= 300:
            raise ServiceError(f"POST /v1/query: HTTP {r.status_code}: {r.text[:500]}")
        return r.json(), ms
