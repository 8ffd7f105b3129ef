"""Request and response models of HTTP API v1. Unknown fields are rejected (422 naming the field)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from app.api.paging import CURSOR_MAX_CHARS, CURSOR_PATTERN
from app.domain.event import Event, StoredEvent
from app.domain.recipe import options_model
from app.settings import get_settings

_S = get_settings()


def _iso_only(value: Any) -> Any:
    # A number is not a timestamp here: lax parsing would read 0 as 1970-01-01.
    if value is not None and not isinstance(value, (str, datetime)):
        raise ValueError("must be an ISO 8601 date-time string")
    return value


Timestamp = Annotated[datetime, BeforeValidator(_iso_only)]
def _number_only(value: Any) -> Any:
    # JSON Schema integers include 2.0, but never "2" or true.
    if isinstance(value, (str, bool)):
        raise ValueError("must be a number")
    return value


Count = Annotated[int, BeforeValidator(_number_only)]
# PostgreSQL text cannot hold NUL; saying so in the schema lets clients know before they send.
NO_NUL = r"^[^\x00]*$"
NOT_BLANK = r"^[^\x00]*\S[^\x00]*$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    # A timestamp without an offset is taken as UTC rather than the server's local zone.
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _depth(value: Any, limit: int = 1000) -> int:
    """Nesting depth of a JSON value, iteratively (a recursive walk could itself overflow)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if d > limit:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((c, d + 1) for c in children)
    return deepest


# This server's limits on the fields of an `Event` (settings `max_*`). EventIn adds them to the
# domain's fields, which keep their types, defaults, descriptions and examples.
_ID = {"min_length": 1, "max_length": _S.max_id_length, "pattern": NO_NUL}
EVENT_LIMITS: dict[str, FieldInfo] = {
    "conversation_id": Field(**_ID),
    "event_id": Field(**_ID),
    "supersedes": Field(**_ID),
    "speaker": Field(**_ID),
    "recipient": Field(max_length=_S.max_id_length, pattern=NO_NUL),
    "role": Field(max_length=64, pattern=NO_NUL),
    "content": Field(min_length=1, pattern=NOT_BLANK),
    "metadata": Field(description=f"Any JSON object (at most {_S.max_metadata_bytes // 1024} KiB, "
                      f"{_S.max_metadata_depth} levels deep, no NUL characters in keys or strings)."),
}


def _with_limits(base: type[BaseModel], limits: dict[str, FieldInfo]) -> type[BaseModel]:
    """`base`'s fields, in its order, with `limits` merged into them; unknown fields are refused."""
    fields: dict[str, Any] = {
        name: (f.annotation, FieldInfo.merge_field_infos(f, limits[name]) if name in limits else f)
        for name, f in base.model_fields.items()
    }
    return create_model(f"{base.__name__}Limits", __base__=(Strict, base), __module__=__name__, **fields)


# One event to write: `app.domain.event.Event` within this server's limits. (Comments, not
# docstrings, on these models: a docstring would become their description in the OpenAPI document.)
class EventIn(_with_limits(Event, EVENT_LIMITS)):  # type: ignore[misc]
    @field_validator("occurred_at", mode="before")
    @classmethod
    def _iso(cls, v: Any) -> Any:
        return _iso_only(v)

    @field_validator("content")
    @classmethod
    def _content(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("content must not be blank")
        if len(v.encode("utf-8", "surrogatepass")) > _S.max_content_bytes:
            raise ValueError(f"content is over the {_S.max_content_bytes}-byte limit")
        if "\x00" in v:
            raise ValueError("content must not contain NUL characters (PostgreSQL text cannot store them)")
        return v

    @field_validator("conversation_id", "event_id", "speaker", "recipient", "role", "supersedes")
    @classmethod
    def _no_nul(cls, v: str | None) -> str | None:
        if v is not None and "\x00" in v:
            raise ValueError("must not contain NUL characters")
        return v

    @field_validator("occurred_at")
    @classmethod
    def _time(cls, v: datetime | None) -> datetime | None:
        v = _utc(v)
        if v is not None and not (1 <= v.year <= 9999):
            raise ValueError("occurred_at is out of range")
        return v

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return _within_metadata_limits(v, "metadata")


def _within_metadata_limits(v: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """A JSON object within the metadata limits (depth, bytes, no NUL); `name` is the field's name
    in the error."""
    if v is None:
        return v
    import json

    if _depth(v) > _S.max_metadata_depth:
        raise ValueError(f"{name} is nested deeper than {_S.max_metadata_depth} levels")
    raw = json.dumps(v, ensure_ascii=False)
    if len(raw.encode()) > _S.max_metadata_bytes:
        raise ValueError(f"{name} is over the {_S.max_metadata_bytes}-byte limit")
    if "\\u0000" in raw:
        raise ValueError(f"{name} must not contain NUL characters")
    return v


def check_where(v: dict[str, Any] | None) -> dict[str, Any] | None:
    """A metadata filter (`where`) within the metadata limits: it is matched against stored metadata."""
    return _within_metadata_limits(v, "where")


class EventBatch(Strict):
    events: list[EventIn] = Field(min_length=1, max_length=_S.max_batch_events)

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "events": [
                        {"conversation_id": "conv-1", "event_id": "t1", "speaker": "Ana",
                         "content": "We moved to Denver last spring.", "occurred_at": "2024-03-02T10:00:00Z"},
                        {"conversation_id": "conv-1", "event_id": "t2", "speaker": "Ben",
                         "content": "How do you like the mountains?", "occurred_at": "2024-03-02T10:01:00Z"},
                    ]
                }
            ]
        },
    )


class EventResult(BaseModel):
    id: int
    event_id: str | None = Field(description="The client's id, or the one the server derived when none was given.")
    status: str = Field(description="created, or duplicate (a retry; the existing row is returned)")


class EventBatchResult(BaseModel):
    results: list[EventResult]


# An event exactly as stored (`app.domain.event.StoredEvent`), with the encoding gate's verdict.
class EventOut(StoredEvent):
    gate: dict[str, Any] | None = None


class EventPage(BaseModel):
    events: list[EventOut]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end.")


class ConversationSummary(BaseModel):
    conversation_id: str
    events: int
    first_at: datetime
    last_at: datetime


class ConversationList(BaseModel):
    conversations: list[ConversationSummary]
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` (with the same filters) for the "
                                    "next page; null on the last page.")


class ConversationStatus(BaseModel):
    conversation_id: str
    events: int
    pending: dict[str, int] = Field(description="Per background layer, events still waiting for it.")


class TimeRange(Strict):
    start: Timestamp | None = None
    end: Timestamp | None = None

    @model_validator(mode="after")
    def _order(self) -> "TimeRange":
        self.start, self.end = _utc(self.start), _utc(self.end)
        if self.start and self.end and self.start > self.end:
            raise ValueError("time_range.start is after time_range.end")
        return self


class ConversationSearch(Strict):
    # the filters of GET /v1/conversations, as a JSON body (a `where` object reads better here)
    where: dict[str, Any] | None = Field(
        default=None, examples=[{"user": "u-42"}],
        description="Only conversations with an event whose metadata contains this object (as in /v1/query).")
    speakers: list[Annotated[str, Field(min_length=1, max_length=_S.max_id_length, pattern=NO_NUL)]] | None = Field(
        default=None, max_length=100, description="Only conversations in which one of these speakers said something.")
    time_range: TimeRange | None = Field(default=None, description="Only conversations with an event in this range.")
    text: str | None = Field(default=None, min_length=1, max_length=_S.max_query_chars, pattern=NOT_BLANK,
                             examples=["hiking trip"],
                             description="Only conversations with an event saying these words (full-text search: "
                             "stemmed words, `\"quoted phrases\"`, `-excluded`, `or`).")
    prefix: str | None = Field(default=None, min_length=1, max_length=_S.max_id_length, pattern=NO_NUL,
                               description="Only conversation ids starting with this.")
    limit: Count = Field(default=200, ge=1, le=1000)
    cursor: str | None = Field(default=None, min_length=3, max_length=CURSOR_MAX_CHARS, pattern=CURSOR_PATTERN,
                               description="`next_cursor` of the previous page, with the same filters.")

    @field_validator("where")
    @classmethod
    def _where(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_where(v)


# Every Recipe field, optional (unset = the server's setting), with the recipe's bounds and descriptions;
# types are strict here as elsewhere in the API (a switch is true or false, never 0 or "yes").
PipelineOptions = options_model(
    "PipelineOptions", base=Strict, module=__name__, types_={bool: StrictBool, int: Count, float: StrictFloat},
    doc="Per-request switches and weights for the retrieval stages (unset = the server's setting).",
)


class QueryIn(Strict):
    query: str = Field(min_length=1, max_length=_S.max_query_chars, pattern=NOT_BLANK,
                       examples=["Where does Ana live now?"])
    conversation_id: str | None = Field(default=None, max_length=_S.max_id_length, pattern=NO_NUL, examples=["conv-1"])
    top_k: Count = Field(default=_S.default_top_k, ge=1, le=_S.max_top_k)
    token_budget: Count = Field(default=_S.default_token_budget, ge=1, le=_S.max_token_budget)
    speakers: list[Annotated[str, Field(max_length=_S.max_id_length, pattern=NO_NUL)]] | None = Field(
        default=None, max_length=100)
    time_range: TimeRange | None = None
    where: dict[str, Any] | None = Field(
        default=None, examples=[{"project": "apollo"}],
        description="Only events whose metadata contains this object (PostgreSQL `@>`): each key present with "
        "an equal value; a nested object matches a subset, an array matches when each element is found in the "
        "event's array. Combines with `conversation_id` (omit it to search every conversation of the tenant), "
        f"`speakers` and `time_range`. At most {_S.max_metadata_bytes // 1024} KiB, "
        f"{_S.max_metadata_depth} levels deep.")
    as_of: Timestamp | None = Field(
        default=None, examples=["2023-06-01T12:00:00Z"],
        description="The time the question is asked at: relative dates in it (\"last May\", \"two weeks ago\") "
        "are read from here. Unset: the newest event in the scope (a live conversation's now).")
    pipeline: PipelineOptions | None = None

    @field_validator("as_of")
    @classmethod
    def _as_of(cls, v: datetime | None) -> datetime | None:
        return _utc(v)

    @field_validator("where")
    @classmethod
    def _where(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_where(v)

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("query must not be blank")
        if "\x00" in v:
            raise ValueError("query must not contain NUL characters")
        return v


class SignalEvidence(BaseModel):
    rank: int
    score: float


class QueryItem(BaseModel):
    id: int
    event_id: str | None
    conversation_id: str
    speaker: str
    content: str
    occurred_at: datetime
    score: float = Field(description="Ranking score, higher is better: the learned fusion model's (the default), "
                                      "else weighted reciprocal rank fusion after reweighting.")
    signals: dict[str, SignalEvidence] = Field(description="Per signal that found the item: its rank and raw score.")
    in_context: bool = Field(description="Whether the item is part of `context`.")
    stages: dict[str, Any] = Field(default_factory=dict,
                                   description="How each stage moved the item: fusion rank, the learned model's score and "
                                               "top feature contributions, reweight factors, rerank.")
    supersedes_id: int | None = Field(default=None, description="When this event is a correction: the id of the "
                                      "version it superseded (kept verbatim in the log; retrieval uses the newest).")


class ContextEntry(BaseModel):
    id: int
    event_id: str | None
    reason: str = Field(description="Why it is in the context: direct evidence, next to #id, ranked candidate, ...")


class ContextSummary(BaseModel):
    conversation_id: str
    episode: int
    start: datetime
    end: datetime
    text: str


class QueryOut(BaseModel):
    items: list[QueryItem]
    context: str = Field(description="Time-ordered, dated lines for the answer model, inside token_budget.")
    context_tokens: int
    context_items: list[ContextEntry] = Field(description="Every event in the context, in context order, with why.")
    left_out: int = Field(description="Ranked candidates that did not fit the budget.")
    pipeline: dict[str, Any] = Field(description="The recipe that ran (settings and this request's overrides).")
    intent: dict[str, Any] | None = Field(default=None, description="The routed intent, its weights and time window "
                                          "(`reference_time`: the anchor the window was read from).")
    as_of: datetime | None = Field(default=None, description="The anchor relative dates were read from: the "
                                   "request's `as_of`, else the scope's newest event.")
    relevance: dict[str, float] = Field(
        default_factory=dict, description="What the abstain decision read: the best dense cosine (`dense`), the "
        "cross-encoder probability (`rerank`, when one ran) and, when the abstention model decided, its features "
        "(`coverage`, `coverage_top`, ...), `abstain_score`, `abstain_threshold` and `abstain_covered` (1: every "
        "word of the question is in the first ten items, so it answers).")
    context_summaries: list[ContextSummary] = Field(
        default_factory=list, description="Episode summaries in the context, standing in for direct evidence "
        "that did not fit the budget.")
    abstain: bool = Field(default=False, description="True when the memory likely does not hold the answer: "
                          "the abstention model's score is at or over its threshold (or, without the model, the "
                          "best relevance is under its floor); see `relevance`. The items are still returned.")
    timings_ms: dict[str, float] = Field(
        default_factory=dict, description="Wall time per pipeline stage in milliseconds (also in the "
        "Server-Timing header): where this query's latency went.")


class AnswerIn(QueryIn):
    compress: StrictBool = Field(default=False, description="First ask the LLM to keep only the context lines "
                                 "that bear on the question (PRISM evidence compression), then answer from those.")


class AnswerEvidence(BaseModel):
    id: int
    event_id: str | None
    conversation_id: str
    speaker: str
    content: str
    occurred_at: datetime


class AnswerOut(BaseModel):
    answer: str = Field(examples=["She moved to Lisbon in May 2023."])
    evidence: list[AnswerEvidence] = Field(description="The context events the model cited, in its order.")
    context_items: list[ContextEntry] = Field(description="Every event the model was shown, with why it was chosen.")
    context_tokens: int
    compressed_from: int | None = Field(default=None, description="Lines before compression, when compress was on.")
    abstain: bool = Field(description="The retrieval's abstain flag (see /v1/query).")
    model: str
