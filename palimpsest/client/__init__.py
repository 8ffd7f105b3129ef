"""The Python client of Palimpsest's HTTP API: `Palimpsest` (sync) and `AsyncPalimpsest` (async).

    from palimpsest.client import Palimpsest

    with Palimpsest("http://127.0.0.1:8000", api_key="pal_...") as pal:
        pal.write_events([{"conversation_id": "c1", "speaker": "Ana", "content": "We moved to Denver."}])
        pal.wait_until_indexed("c1", timeout=60)
        for item in pal.query("Where does Ana live?", conversation_id="c1").items:
            print(item.score, item.speaker, item.content)

See docs/sdk.md.
"""
from palimpsest.client._async import AsyncPalimpsest
from palimpsest.client._core import (
    NO_RETRY,
    RetryPolicy,
    __version__,
    derive_event_id,
    parse_retry_after,
)
from palimpsest.client._sync import Palimpsest
from palimpsest.client.errors import (
    APIConnectionError,
    AuthError,
    IndexingTimeout,
    Conflict,
    NotFound,
    PalimpsestError,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    ValidationError,
)
from palimpsest.client.models import (
    ConversationPage,
    ConversationStatus,
    ConversationSummary,
    DeleteResult,
    Event,
    EventIn,
    EventPage,
    EventResult,
    FieldError,
    PipelineOptions,
    QueryItem,
    AnswerResult,
    QueryResult,
    SignalEvidence,
    TimeRange,
    WriteResult,
)

__all__ = [
    "NO_RETRY",
    "APIConnectionError",
    "AsyncPalimpsest",
    "AuthError",
    "ConversationPage",
    "ConversationStatus",
    "ConversationSummary",
    "DeleteResult",
    "Event",
    "EventIn",
    "EventPage",
    "EventResult",
    "FieldError",
    "IndexingTimeout",
    "Conflict",
    "NotFound",
    "Palimpsest",
    "PalimpsestError",
    "PermissionDenied",
    "PipelineOptions",
    "QueryItem",
    "AnswerResult",
    "QueryResult",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailable",
    "SignalEvidence",
    "TimeRange",
    "ValidationError",
    "WriteResult",
    "__version__",
    "derive_event_id",
    "parse_retry_after",
]
