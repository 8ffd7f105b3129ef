"""Request and response shapes of erasure (`DELETE /v1/conversations/{id}`, `DELETE /v1/speakers/{name}`),
its audit log (`GET /v1/audit/erasures`), the language setting and `/v1/status`."""
from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.api.paging import PageInfo
from app.api.schemas import NO_NUL
from app.domain.language import TAG_PATTERN

_COUNTS = ("Rows per table that go (a dry run: would go), e.g. {\"events\": 12, \"embeddings\": 12, "
           "\"episodes\": 2}. For a speaker, the conversation-level rows of the conversations they spoke in "
           "are dropped and rebuilt by the workers from the remaining events.")


class ErasureOut(BaseModel):
    dry_run: bool = Field(description="True: nothing was deleted; `counts` says what would be.")
    action: str = Field(description="conversation or speaker", examples=["speaker"])
    conversation_id: str | None = Field(description="The conversation erased, or the one a speaker was erased in; "
                                        "null for a speaker erased in all conversations.")
    speaker: str | None = None
    all_conversations: bool = False
    deleted_events: int = Field(description="Events deleted (a dry run: that would be).")
    conversations: list[str] = Field(description="The conversations touched.")
    counts: dict[str, int] = Field(description=_COUNTS)
    audit_id: int | None = Field(description="The audit log's row for this erasure (null for a dry run).")


class AuditEntry(BaseModel):
    id: int
    at: datetime
    key_id: int | None = Field(description="The API key that erased (null once that key is deleted).")
    key_prefix: str = Field(description="That key's public prefix (`pal_<prefix>_...`).")
    key_name: str
    request_id: str | None = Field(description="The request's X-Request-ID, to find it in the logs.")
    action: str
    conversation_id: str | None
    speaker: str | None
    all_conversations: bool
    conversations: int = Field(description="How many conversations were touched.")
    counts: dict[str, int] = Field(description="Rows deleted per table. Never the erased content.")


class AuditPage(PageInfo):
    entries: list[AuditEntry] = Field(description="Newest first.")


class LanguageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    language: str | None = Field(
        pattern=TAG_PATTERN, max_length=35, examples=["de"],
        description="A BCP 47 tag: `en` keeps the English rules and stemming; any other language uses the "
                    "`simple` text search and skips the English-only rule layers. Null: back to `en` for the "
                    "tenant; with `conversation_id`, the conversation follows its tenant's language again.")
    conversation_id: str | None = Field(default=None, min_length=1, max_length=256, pattern=NO_NUL,
                                        description="Set this conversation's own language instead of the tenant's.")


class LanguageOut(BaseModel):
    language: str = Field(description="The language now in force (for the conversation, when one was named).")
    text_search: str = Field(description="PostgreSQL's text-search configuration: english or simple.")
    conversation_id: str | None
    rebuilt_conversations: list[str] = Field(description="Conversations re-indexed whose layers are rebuilt.")


class LayerState(BaseModel):
    state: str = Field(description="on, or skipped", examples=["skipped"])
    reason: str | None = None


class ConversationLanguage(BaseModel):
    language: str
    text_search: str
    skipped_layers: list[str]


class StatusOut(BaseModel):
    tenant: str
    scopes: list[str] = Field(description="The scopes of the API key that asked.")
    language: str = Field(description="The tenant's language (BCP 47).")
    text_search: str = Field(description="Its full-text configuration: english (stemming, stop words) or simple.")
    english_rules: bool = Field(description="Whether the English rule layers run for the tenant's language.")
    embedding_model: str = Field(description="The embedder behind dense search (see the README on languages).")
    layers: dict[str, LayerState] = Field(description="Per background layer, for the tenant's language.")
    conversations: dict[str, ConversationLanguage] = Field(
        description="Conversations with their own language (at most 1,000).")
