"""The one error shape's models and the error answers each route documents (the handlers that
build the bodies are app/api/errors.py)."""
from __future__ import annotations

from pydantic import BaseModel, Field


class FieldError(BaseModel):
    """One field at fault: where it is in the request, and what is wrong with it in words."""

    path: str = Field(description="The field's path in the request (`events[0].content`; `body` for the body "
                      "as a whole; a query parameter by its name).", examples=["events[0].content"])
    message: str = Field(description="What is wrong, in words.", examples=["must not be blank"])
    type: str | None = Field(default=None, description="A stable code for programs (pydantic's error type, "
                             "`changed_retry`, `utf8_invalid`, ...).", examples=["string_pattern_mismatch"])


class ErrorOut(BaseModel):
    """The one shape of every error answer (app/api/errors.py)."""

    error: str = Field(description="A stable code: invalid_request, unauthorized, forbidden, not_found, conflict, "
                       "payload_too_large, rate_limited, ...", examples=["invalid_request"])
    detail: str = Field(description="What went wrong, in a sentence.",
                        examples=["events[0].content: must not be blank (and must not contain NUL characters)"])
    fields: list[FieldError] = Field(default_factory=list, description="Each field at fault (empty when the "
                                     "error is not about a field).")


def _error(description: str) -> dict:
    return {"model": ErrorOut, "description": description}


# Documented on every authenticated route, so clients (and schemathesis) know every answer.
AUTH_ERRORS: dict[int | str, dict] = {
    400: _error("Unparseable request body"),
    401: _error("Missing, malformed or revoked API key"),
    403: _error("The API key lacks the scope"),
    413: _error("Request body too large"),
    429: _error("Rate limit exceeded; see Retry-After"),
    503: _error("A dependency is down; see Retry-After"),
}
ROUTE_ERRORS: dict[int | str, dict] = {**AUTH_ERRORS, 404: _error("Not found")}
ANSWER_ERRORS: dict[int | str, dict] = {**ROUTE_ERRORS, 502: _error("The LLM failed or gave no usable answer"),
                                        501: _error("No LLM is configured on this server (PALIMPSEST_LLM_BASE_URL); "
                                                    "not worth retrying")}
