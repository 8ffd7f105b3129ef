"""Property-based API testing against the service's own OpenAPI schema (bounded for CI):
no 5xx, and every response conforms to the documented schema, status codes and content types.
"""
from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.api.main import app
from app.models.embedder import get_embedder

# Load the model here, before schemathesis runs the app's start-up: the warm-up thread would
# otherwise import torch while schemathesis compiles code, which CPython 3.11 does not survive.
get_embedder()
app.state.model_state = "ok"
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@pytest.fixture(scope="module")
def api_key(engine):
    from app.storage import tenants

    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, "schemathesis")
        return tenants.create_key(conn, tid, scopes=("read", "write"))


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case, api_key):
    excluded = []
    if case.operation.method.upper() == "GET" and case.operation.path.endswith("/events"):
        # A cursor is an opaque token: a schema-valid string can still be a malformed cursor (422).
        excluded.append(positive_data_acceptance)
    if case.operation.path == "/v1/events" and "\\u0000" in json.dumps(case.body, default=str):
        # NUL inside free-form metadata is refused with a 422 (jsonb cannot store it); JSON Schema
        # cannot express "no NUL at any depth", so this one refusal is not a schema violation.
        excluded.append(positive_data_acceptance)
    case.call_and_validate(headers={"Authorization": f"Bearer {api_key}"}, excluded_checks=excluded)
