"""Every error answer has one shape, `{"error", "detail", "fields": [{"path", "message"}]}`, in words a
person reads: checked on real HTTP requests to the API (uvicorn on a socket), the way a client meets them."""
from __future__ import annotations

import json

import httpx
import pytest

from tests.support import auth
from tests.support.live import serve


@pytest.fixture(scope="module")
def api() -> str:
    with serve() as base:
        yield base


def shaped(r: httpx.Response, status: int, error: str) -> dict:
    """The answer has the status, the one shape, and no regex or pydantic jargon in what a person reads."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"error", "detail", "fields"}, body
    assert body["error"] == error
    assert isinstance(body["detail"], str) and body["detail"], body
    for f in body["fields"]:
        assert isinstance(f["path"], str) and f["path"] and isinstance(f["message"], str) and f["message"], f
    text = body["detail"] + " ".join(f["message"] for f in body["fields"])
    for jargon in ("^[", "\\x00]*", "[^", "loc", "JSON decode error"):
        assert jargon not in text, (jargon, body)
    return body


def one_event(**over) -> dict:
    ev = {"conversation_id": "errors", "speaker": "Ana", "content": "We moved to Denver.",
          "occurred_at": "2024-03-02T10:00:00Z"}
    return {"events": [{**ev, **over}]}


def test_blank_content_is_named_in_words(api, tenant):
    _, key = tenant
    r = httpx.post(f"{api}/v1/events", json=one_event(content="   "), headers=auth(key))
    body = shaped(r, 422, "invalid_request")
    assert body["fields"][0]["path"] == "events[0].content"
    assert "must not be blank" in body["fields"][0]["message"]
    assert body["detail"].startswith("events[0].content: must not be blank")


def test_missing_and_unknown_fields(api, tenant):
    _, key = tenant
    r = httpx.post(f"{api}/v1/events", headers=auth(key),
                   json={"events": [{"conversation_id": "errors", "content": "hi", "colour": "red"}]})
    body = shaped(r, 422, "invalid_request")
    got = {f["path"]: f["message"] for f in body["fields"]}
    assert got["events[0].speaker"] == "is required"
    assert got["events[0].colour"] == "is not a field of this request"


def test_malformed_json_names_the_body_and_where(api, tenant):
    _, key = tenant
    raw = b'{"events": [\n  {"conversation_id": "c", "speaker": "a",}\n]}'
    r = httpx.post(f"{api}/v1/events", content=raw, headers={**auth(key), "content-type": "application/json"})
    body = shaped(r, 422, "invalid_request")
    assert body["fields"] == [{"path": "body", "type": "json_invalid",
                               "message": body["fields"][0]["message"]}]
    assert "is not valid JSON" in body["detail"] and "line 2, column" in body["detail"], body


def test_invalid_utf8_has_the_same_shape(api, tenant):
    _, key = tenant
    raw = b'{"events":[{"conversation_id":"c","speaker":"a","content":"\xff\xfe bad"}]}'
    r = httpx.post(f"{api}/v1/events", content=raw, headers={**auth(key), "content-type": "application/json"})
    body = shaped(r, 422, "invalid_request")
    assert body["fields"][0]["path"] == "body" and "not valid UTF-8" in body["fields"][0]["message"]
    at = raw.index(b"\xff")
    assert "0xff" in body["detail"] and f"offset {at}" in body["detail"]


def test_auth_scope_and_missing_things(api, make_tenant):
    _, reader = make_tenant(("read",))
    body = shaped(httpx.get(f"{api}/v1/events/1"), 401, "unauthorized")
    assert body["fields"] == [] and "API key" in body["detail"]
    shaped(httpx.get(f"{api}/v1/events/1", headers=auth("pal_nope_nope")), 401, "unauthorized")
    body = shaped(httpx.post(f"{api}/v1/events", json=one_event(), headers=auth(reader)), 403, "forbidden")
    assert "write" in body["detail"]
    body = shaped(httpx.get(f"{api}/v1/events/987654321", headers=auth(reader)), 404, "not_found")
    assert "987654321" in body["detail"]
    shaped(httpx.get(f"{api}/v1/no-such-thing", headers=auth(reader)), 404, "not_found")
    shaped(httpx.delete(f"{api}/v1/query", headers=auth(reader)), 405, "method_not_allowed")


def test_bad_query_parameter_is_a_field(api, tenant):
    _, key = tenant
    r = httpx.get(f"{api}/v1/conversations/errors/events", params={"limit": "many"}, headers=auth(key))
    body = shaped(r, 422, "invalid_request")
    assert body["fields"][0]["path"] == "limit"


def test_changed_retry_is_a_conflict_naming_the_field(api, tenant):
    _, key = tenant
    first = one_event(event_id="e-1")
    assert httpx.post(f"{api}/v1/events", json=first, headers=auth(key)).status_code == 200
    changed = one_event(event_id="e-1", content="We moved to Boston.")
    body = shaped(httpx.post(f"{api}/v1/events", json=changed, headers=auth(key)), 409, "conflict")
    assert any(f["path"].startswith("events[0]") and f["path"].endswith("content") for f in body["fields"]), body


def test_too_large_body(api, tenant):
    from app.settings import get_settings

    _, key = tenant
    limit = get_settings().max_body_bytes
    raw = json.dumps(one_event(content="x" * (limit + 10))).encode()
    r = httpx.post(f"{api}/v1/events", content=raw, headers={**auth(key), "content-type": "application/json"})
    body = shaped(r, 413, "payload_too_large")
    assert body["fields"][0]["path"] == "body" and str(limit) in body["detail"]


def test_openapi_documents_the_one_shape(api):
    spec = httpx.get(f"{api}/openapi.json").json()
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    assert set(schemas["ErrorOut"]["properties"]) == {"error", "detail", "fields"}
    assert {"path", "message"} <= set(schemas["FieldError"]["properties"])
    ref = "#/components/schemas/ErrorOut"
    for path, item in spec["paths"].items():
        for method, op in item.items():
            errors = {code: resp for code, resp in op["responses"].items() if str(code).startswith("4")}
            assert "4XX" in errors, (method, path)
            for code, resp in errors.items():
                assert resp["content"]["application/json"]["schema"]["$ref"] == ref, (method, path, code)


def test_a_body_sent_as_a_form_says_to_send_json(api, tenant):
    """curl's `-d` without `-H 'content-type: application/json'` sends a form: the answer says so, on `body`."""
    _, key = tenant
    raw = json.dumps(one_event()).encode()
    r = httpx.post(f"{api}/v1/events", content=raw,
                   headers={**auth(key), "content-type": "application/x-www-form-urlencoded"})
    body = shaped(r, 422, "invalid_request")
    assert body["fields"] == [{"path": "body", "type": "content_type", "message": body["fields"][0]["message"]}]
    assert "application/x-www-form-urlencoded" in body["detail"] and "Content-Type: application/json" in body["detail"]
    # the same bytes as JSON are written, and a JSON body that is not an object keeps pydantic's words
    assert httpx.post(f"{api}/v1/events", content=raw, headers={**auth(key), "content-type": "application/json"}
                      ).status_code == 200
    r = httpx.post(f"{api}/v1/query", json=[1], headers=auth(key))
    assert shaped(r, 422, "invalid_request")["fields"][0]["type"] != "content_type"


@pytest.mark.parametrize("where, send", [
    ("events[0].occurred_at", lambda api, key: httpx.post(f"{api}/v1/events", json=one_event(occurred_at="yesterday"),
                                                          headers=auth(key))),
    ("as_of", lambda api, key: httpx.post(f"{api}/v1/query", json={"query": "x", "as_of": "last week"},
                                          headers=auth(key))),
    ("time_range.start", lambda api, key: httpx.post(f"{api}/v1/query", headers=auth(key),
                                                     json={"query": "x", "time_range": {"start": "2024-13-45"}})),
])
def test_a_time_that_is_not_one_says_how_to_write_it(api, tenant, where, send):
    _, key = tenant
    body = shaped(send(api, key), 422, "invalid_request")
    assert body["fields"][0]["path"] == where
    assert "ISO 8601" in body["fields"][0]["message"] and "2024-06-02T10:00:00Z" in body["detail"], body


def test_a_language_tag_and_a_cursor_say_what_they_should_be(api, tenant):
    _, key = tenant
    r = httpx.put(f"{api}/v1/settings/language", json={"language": "klingon!!", "conversation_id": "errors"},
                  headers=auth(key))
    body = shaped(r, 422, "invalid_request")
    assert body["fields"][0]["path"] == "language" and "BCP 47" in body["detail"], body
    r = httpx.get(f"{api}/v1/conversations", params={"cursor": "not a cursor"}, headers=auth(key))
    body = shaped(r, 422, "invalid_request")
    assert body["fields"][0]["path"] == "cursor" and "next_cursor" in body["detail"], body
