"""One error shape for every answer that is not a success:

    {"error": "invalid_request", "detail": "events[0].content: must not be blank",
     "fields": [{"path": "events[0].content", "message": "must not be blank", "type": "string_pattern_mismatch"}]}

`error` is a stable code for programs, `detail` a sentence for people, `fields` (empty when no field
is at fault) names each field by its path in the request (`events[0].content`, `body` for the body
as a whole, `limit` for a query parameter) with what is wrong in words. Validation errors, HTTP
errors raised by routes and dependencies, unreadable bodies (malformed JSON, invalid UTF-8), the
body-size guard (app/api/limits.py) and unexpected failures all answer through `error_body`.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.api.error_models import ErrorOut

log = structlog.get_logger(__name__)

CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
         409: "conflict", 413: "payload_too_large", 415: "unsupported_media_type", 422: "invalid_request",
         429: "rate_limited", 500: "internal", 501: "not_configured", 502: "bad_gateway", 503: "unavailable"}
_SOURCES = ("body", "query", "path", "header", "cookie")
_MAX_IN_DETAIL = 5


def error_body(status: int, detail: str, fields: Iterable[dict] = (), error: str | None = None) -> dict[str, Any]:
    return {"error": error or CODES.get(status, "error"), "detail": detail, "fields": list(fields)}


def error_response(status: int, detail: str, fields: Iterable[dict] = (), headers: dict | None = None,
                   error: str | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, detail, fields, error), status_code=status, headers=headers)


def path_of(loc: Iterable[Any]) -> str:
    """A pydantic location as the field's path in the request: ("body", "events", 0, "content") ->
    "events[0].content"; where the value came from (body, query, ...) is left out."""
    parts = list(loc)
    if parts and parts[0] in _SOURCES:
        parts = parts[1:]
    out = ""
    for p in parts:
        p = str(p)
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "body"


def normalise_path(path: str) -> str:
    """A dotted path a route wrote by hand ("events.1.content") in the same form: "events[1].content"."""
    return path_of(path.split(".")) if path else "body"


_TIME_KINDS = {"datetime_type", "datetime_parsing", "datetime_from_date_parsing", "datetime_object_invalid",
               "date_type", "date_parsing", "date_from_datetime_parsing", "date_from_datetime_inexact"}
_OBJECT_KINDS = {"model_attributes_type", "model_type", "dict_type"}


def _not_json_sent(err: dict, content_type: str) -> str | None:
    """The words for a body that is not a JSON object because it was not sent as JSON (curl's `-d`
    without `-H 'content-type: application/json'` sends a form), or None when that is not the cause."""
    if err.get("type") not in _OBJECT_KINDS or path_of(err.get("loc", ())) != "body":
        return None
    media = content_type.split(";")[0].strip().lower()
    if not media or media == "application/json" or media.endswith("+json"):
        return None
    return (f"was sent as {media}: send a JSON object with the header Content-Type: application/json "
            "(curl: -H 'content-type: application/json')")


def _pattern_words(pattern: str) -> str:
    from app.api.schemas import NO_NUL, NOT_BLANK

    if pattern == NOT_BLANK:
        return "must not be blank (and must not contain NUL characters)"
    if pattern == NO_NUL:
        return "must not contain NUL characters (\\x00)"
    from app.api.paging import CURSOR_PATTERN
    from app.domain.language import TAG_PATTERN

    if pattern == TAG_PATTERN:
        return "is not a language tag: a BCP 47 tag such as \"en\", \"de\" or \"pt-BR\""
    if pattern == CURSOR_PATTERN:
        return "is not a cursor: pass back the next_cursor of the previous page unchanged"
    return "does not have the expected form"


def _position(doc: str | bytes | None, pos: int) -> str:
    if not isinstance(doc, (str, bytes)) or pos < 0:
        return f"at character {pos}"
    text = doc if isinstance(doc, str) else doc.decode("utf-8", "replace")
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"at line {line}, column {col} (character {pos})"


def message_of(err: dict, body: Any = None) -> str:
    """A pydantic error in words a person reads."""
    kind, ctx = err.get("type", ""), err.get("ctx") or {}
    if kind == "json_invalid":
        loc = err.get("loc", ())
        pos = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else -1
        return f"is not valid JSON: {ctx.get('error', 'decode error')} {_position(body, pos)}"
    if kind == "string_pattern_mismatch":
        return _pattern_words(str(ctx.get("pattern", "")))
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a field of this request"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind == "string_too_long":
        return f"is longer than the {ctx.get('max_length')} characters allowed"
    if kind in _TIME_KINDS:
        why = f" ({ctx['error']})" if ctx.get("error") else ""
        return f"is not a time: write it in ISO 8601, such as 2024-06-02T10:00:00Z or 2024-06-02{why}"
    msg = str(err.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return msg[:1].lower() + msg[1:] if msg[:2] != msg[:2].upper() else msg


def summary(fields: list[dict], lead: str = "") -> str:
    parts = [f"the request body {f['message']}" if f["path"] == "body" else f"{f['path']}: {f['message']}"
             for f in fields[:_MAX_IN_DETAIL]]
    more = len(fields) - _MAX_IN_DETAIL
    text = "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
    return f"{lead}{text}" if lead else text


def _fields_from(detail: Any) -> list[dict] | None:
    """A route's list of {"field"|"path", "message", "type"?} as `fields`; None when it is not one."""
    if not isinstance(detail, list) or not all(isinstance(d, dict) for d in detail):
        return None
    out = []
    for d in detail:
        entry = {"path": normalise_path(str(d.get("path") or d.get("field") or "")),
                 "message": str(d.get("message") or d.get("msg") or "")}
        if d.get("type"):
            entry["type"] = str(d["type"])
        out.append(entry)
    return out


async def on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    fields = []
    content_type = request.headers.get("content-type", "")
    for e in exc.errors():
        path = "body" if e.get("type") == "json_invalid" else path_of(e.get("loc", ()))  # loc: ("body", offset)
        not_json = _not_json_sent(e, content_type)
        entry = {"path": path, "message": not_json or message_of(e, getattr(exc, "body", None))}
        if not_json:
            entry["type"] = "content_type"
        elif e.get("type"):
            entry["type"] = e["type"]
        fields.append(entry)
    return error_response(422, summary(fields) or "invalid request", fields)


async def on_http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
    status, headers = exc.status_code, getattr(exc, "headers", None)
    cause = exc.__cause__
    if status == 400 and isinstance(cause, UnicodeDecodeError):
        # FastAPI's "There was an error parsing the body": the body is not UTF-8 (JSON must be).
        bad = cause.object[cause.start:cause.start + 1].hex() if isinstance(cause.object, bytes) else "?"
        message = f"is not valid UTF-8: byte 0x{bad} at offset {cause.start} cannot be decoded"
        field = {"path": "body", "message": message, "type": "utf8_invalid"}
        return error_response(422, summary([field]), [field], headers)
    if status == 400 and isinstance(cause, (ValueError, json.JSONDecodeError)):
        field = {"path": "body", "message": f"could not be read: {cause}", "type": "body_invalid"}
        return error_response(400, summary([field]), [field], headers)
    fields = _fields_from(exc.detail)
    if fields is not None:
        lead = {409: "conflict: "}.get(status, "")
        return error_response(status, summary(fields, lead) or CODES.get(status, "error"), fields, headers)
    if isinstance(exc.detail, dict):  # a route's structured detail: its message in words, the rest kept
        body = error_body(status, str(exc.detail.get("message") or exc.detail.get("detail") or CODES.get(status)))
        body.update({k: v for k, v in exc.detail.items() if k not in ("message", "detail", "error", "fields")})
        return JSONResponse(body, status_code=status, headers=headers)
    return error_response(status, str(exc.detail), headers=headers)


async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    rid = request.headers.get("x-request-id", "")
    log.error("unhandled_error", error=repr(exc), path=request.url.path)
    return error_response(500, "internal error; the server log has the details" + (f" (request {rid})" if rid else ""))


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)


# ---------------------------------------------------------------- OpenAPI

_HTTP_VALIDATION = "#/components/schemas/HTTPValidationError"


def document(spec: dict) -> dict:
    """Make the OpenAPI say what the service sends: every 4xx is `ErrorOut`, FastAPI's default 422
    body is replaced, and each operation lists a `4XX` answer of that shape."""
    ours = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(ours.pop("$defs", {}))
    schemas["ErrorOut"] = ours
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    text = json.dumps(spec).replace(f'"{_HTTP_VALIDATION}"', '"#/components/schemas/ErrorOut"')
    spec = json.loads(text)
    error_ref = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}
    for item in spec.get("paths", {}).values():
        for op in item.values():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            responses = op["responses"]
            for code, resp in responses.items():
                if re.fullmatch(r"4\d\d|4XX", str(code)) and isinstance(resp, dict):
                    resp.setdefault("content", error_ref["content"])
            responses.setdefault("4XX", {"description": "Any other client error, in the same shape: `error` "
                                         "(a code), `detail` (in words), `fields` (each field at fault)",
                                         **error_ref})
    return spec
