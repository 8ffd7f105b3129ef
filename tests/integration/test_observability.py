"""Prometheus metrics and request ids, in-process."""
from __future__ import annotations

import re

from tests.support import auth


def test_metrics_expose_latency_lag_and_gate(client, tenant):
    _, key = tenant
    client.post("/v1/events", headers=auth(key), json={"events": [
        {"conversation_id": "m", "speaker": "a", "content": "metrics please"}]})
    client.post("/v1/query", headers=auth(key), json={"query": "metrics"})
    body = client.get("/metrics").text
    assert re.search(r'palimpsest_http_request_duration_seconds_count\{method="POST",route="/v1/query",status="200"\} [1-9]', body)
    assert re.search(r'palimpsest_indexing_pending\{layer="embed"\} [1-9]', body)  # no worker runs here
    assert re.search(r'palimpsest_indexing_lag_seconds\{layer="embed"\} \d', body)
    assert re.search(r'palimpsest_gate_events\{status="unscored"\} [1-9]', body)
    assert 'palimpsest_queue_depth{queue="palimpsest"}' in body
    assert "palimpsest_model_inference_seconds_count" in body


def test_request_id_is_echoed_or_made(client):
    r = client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert r.headers["x-request-id"] == "abc-123"
    made = client.get("/healthz").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
