"""Table definitions (SQLAlchemy Core/ORM metadata). The schema itself is created by Alembic.

The `events` table is the verbatim substrate: content is stored exactly as received and never
rewritten. Everything else (embeddings, indexing state, later layers) is derived from it and can
be rebuilt.
"""
from __future__ import annotations

from datetime import date, datetime

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Computed,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, REGCONFIG, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

EMBEDDING_DIM = 384
VERSION_WIDTH = 255  # characters of a layer's version ("graph/4+llm_assertions/2+assertions/10+...": migration 0014)

# Searchable text: speaker + content, in the event's text-search configuration (`search_config`,
# set on insert from its conversation's or tenant's language: migration 0008). 'english' (the
# default) gives stemming and stop words, exactly the expression of migration 0001; every other
# language 'simple'. The column is generated so it can never drift from the verbatim content.
# The words said, not who said them (migration 0012): a question naming Daniel must not find every
# turn of Daniel's by the name alone; the speaker is a field of its own and a feature of the ranker.
TSV_EXPRESSION = "to_tsvector(search_config, content)"


class Base(DeclarativeBase):
    pass


class Tenant(Base):
    __tablename__ = "tenants"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    gate_mode: Mapped[str] = mapped_column(String(16), server_default="off")
    # The tenant's language (BCP 47) and the text-search configuration it maps to (migration 0008)
    language: Mapped[str] = mapped_column(String(35), server_default="en")
    search_config: Mapped[str] = mapped_column(REGCONFIG, server_default=text("'english'::regconfig"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    # The public prefix finds the row; the hash of the whole key proves possession.
    prefix: Mapped[str] = mapped_column(String(32), unique=True)
    key_hash: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(200), server_default="")
    scopes: Mapped[list[str]] = mapped_column(ARRAY(String(16)), server_default="{read,write}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (
        # NULL event_ids never conflict, so events without a client id are always created.
        UniqueConstraint("tenant_id", "conversation_id", "event_id", name="uq_events_client_id"),
        Index("ix_events_conversation_time", "tenant_id", "conversation_id", "occurred_at", "id"),
        # the newest event of a whole tenant (a tenant-wide query's reference time): migration 0004
        Index("ix_events_tenant_time", "tenant_id", "occurred_at"),
        Index("ix_events_tsv", "search_tsv", postgresql_using="gin"),
        # `where` metadata filters (`metadata @> :where`): migration 0007
        Index("ix_events_metadata", "metadata", postgresql_using="gin", postgresql_ops={"metadata": "jsonb_path_ops"}),
        # one version supersedes a given event at most (corrections form a chain): migration 0006
        Index("uq_events_supersedes", "supersedes_id", unique=True, postgresql_where=text("supersedes_id IS NOT NULL")),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    event_id: Mapped[str | None] = mapped_column(String(256), nullable=True)
    # A correction: the event this version replaces (the old row is kept verbatim): migration 0006
    supersedes_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("events.id", ondelete="SET NULL", name="fk_events_supersedes"), nullable=True
    )
    speaker: Mapped[str] = mapped_column(String(256))
    recipient: Mapped[str | None] = mapped_column(String(256), nullable=True)
    role: Mapped[str | None] = mapped_column(String(64), nullable=True)
    content: Mapped[str] = mapped_column(Text)
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ingested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    metadata_: Mapped[dict] = mapped_column("metadata", JSONB, server_default=text("'{}'::jsonb"))
    # Encoding-gate signal tags: NULL until the gate has scored the event.
    gate_novelty: Mapped[float | None] = mapped_column(Float, nullable=True)
    gate_salience: Mapped[float | None] = mapped_column(Float, nullable=True)
    gate_prediction_error: Mapped[float | None] = mapped_column(Float, nullable=True)
    gate_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    gate_status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # set by the events_search_config trigger on insert (migration 0008); never by the writer
    search_config: Mapped[str] = mapped_column(REGCONFIG, server_default=text("'english'::regconfig"))
    search_tsv = mapped_column(TSVECTOR, Computed(TSV_EXPRESSION, persisted=True))


class Embedding(Base):
    """One vector per (event, model): a model change re-embeds side by side, then swaps."""

    __tablename__ = "embeddings"
    __table_args__ = (
        Index(
            "ix_embeddings_hnsw",
            "embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 128},  # migration 0003
            postgresql_ops={"embedding": "vector_cosine_ops"},
        ),
        Index("ix_embeddings_scope", "tenant_id", "conversation_id", "model"),
    )

    event_pk: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), primary_key=True)
    model: Mapped[str] = mapped_column(String(128), primary_key=True)
    # Denormalised scope so filtered vector search needs no join.
    tenant_id: Mapped[int] = mapped_column(BigInteger)
    conversation_id: Mapped[str] = mapped_column(String(256))
    embedding = mapped_column(Vector(EMBEDDING_DIM))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class IndexingState(Base):
    """The outbox: one row per (event, layer) that still needs work, or has had it done.

    A row is written in the same transaction as its event, so no committed event is ever
    forgotten: the beat sweeper re-enqueues rows that stay pending too long.
    """

    __tablename__ = "indexing_state"
    __table_args__ = (
        Index("ix_indexing_pending", "layer", "enqueued_at", postgresql_where=text("done_at IS NULL")),
        Index("ix_indexing_conversation", "tenant_id", "conversation_id", "layer"),
    )

    event_pk: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), primary_key=True)
    layer: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(BigInteger)
    conversation_id: Mapped[str] = mapped_column(String(256))
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


# ---------------------------------------------------------------- ingestion layers (migration 0002)
# Everything below is derived from `events` and rebuildable from it (the SQL: app/storage/signals.py,
# episodes.py, profiles.py, graph.py, layer_runs.py).

SEARCH_EXTRA_TSV_EXPRESSION = "to_tsvector('english'::regconfig, coalesce(search_extra, ''))"


class EventSignals(Base):
    """One row per event: the per-event outputs of several layers, each group with its version."""

    __tablename__ = "event_signals"
    __table_args__ = (
        Index("ix_event_signals_scope", "tenant_id", "conversation_id"),
        Index("ix_event_signals_search_extra", "search_extra_tsv", postgresql_using="gin"),
        Index("ix_event_signals_findable", "findable_tsv", postgresql_using="gin"),
    )

    event_pk: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    surprise_version: Mapped[str | None] = mapped_column(String(VERSION_WIDTH), nullable=True)
    surprise: Mapped[float | None] = mapped_column(Float, nullable=True)
    surprise_facts: Mapped[int | None] = mapped_column(Integer, nullable=True)
    surprise_new_facts: Mapped[int | None] = mapped_column(Integer, nullable=True)
    surprise_contradiction: Mapped[bool | None] = mapped_column(nullable=True)
    salience: Mapped[float | None] = mapped_column(Float, nullable=True)
    importance: Mapped[float | None] = mapped_column(Float, nullable=True)
    consolidation_version: Mapped[str | None] = mapped_column(String(VERSION_WIDTH), nullable=True)
    episode_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    superseded_by_event_pk: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="SET NULL"), nullable=True
    )
    graph_version: Mapped[str | None] = mapped_column(String(VERSION_WIDTH), nullable=True)
    entities: Mapped[list[str] | None] = mapped_column(ARRAY(Text), nullable=True)
    resolved_dates = mapped_column(ARRAY(Date), nullable=True)
    time_mentions: Mapped[list | None] = mapped_column(JSONB, nullable=True)
    search_extra: Mapped[str | None] = mapped_column(Text, nullable=True)
    search_extra_tsv = mapped_column(TSVECTOR, Computed(SEARCH_EXTRA_TSV_EXPRESSION, persisted=True))
    # What makes the turn findable beside its own words (migration 0012, `app.storage.findable`): the
    # turn it answers and its session's date; written with the event's vector, in its search_config.
    findable: Mapped[str | None] = mapped_column(Text, nullable=True)
    findable_tsv = mapped_column(TSVECTOR, nullable=True)
    heat: Mapped[float | None] = mapped_column(Float, nullable=True)
    heat_stage: Mapped[str | None] = mapped_column(String(16), nullable=True)
    access_count: Mapped[int] = mapped_column(Integer, server_default="0")
    last_access_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heat_record: Mapped[dict | None] = mapped_column(JSONB, nullable=True)
    heat_updated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class EpisodeRow(Base):
    __tablename__ = "episodes"
    __table_args__ = (UniqueConstraint("tenant_id", "conversation_id", "layer_version", "idx", name="uq_episodes_slice"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH))
    idx: Mapped[int] = mapped_column(Integer)
    start_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    end_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    speakers: Mapped[list[str]] = mapped_column(ARRAY(Text))
    boundary: Mapped[str] = mapped_column(String(16))
    summary: Mapped[str] = mapped_column(Text)
    event_pks: Mapped[list[int]] = mapped_column(ARRAY(BigInteger))
    summary_event_pks: Mapped[list[int]] = mapped_column(ARRAY(BigInteger))


class AssertionRow(Base):
    __tablename__ = "assertions"
    __table_args__ = (
        UniqueConstraint("tenant_id", "conversation_id", "layer_version", "key", name="uq_assertions_slice"),
        Index("ix_assertions_event", "event_pk"),
        Index("ix_assertions_entity", "tenant_id", "conversation_id", "entity", "attribute"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH))
    key: Mapped[str] = mapped_column(Text)
    event_pk: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    entity: Mapped[str] = mapped_column(Text)
    attribute: Mapped[str] = mapped_column(Text)
    value: Mapped[str] = mapped_column(Text)
    value_key: Mapped[str] = mapped_column(Text)
    surface: Mapped[str] = mapped_column(Text, server_default="")
    asserted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    negated: Mapped[bool] = mapped_column(server_default=text("false"))
    superseded_by_key: Mapped[str | None] = mapped_column(Text, nullable=True)
    valid_from: Mapped[date | None] = mapped_column(Date, nullable=True)  # the day a dated claim takes effect


class ContradictionRow(Base):
    __tablename__ = "contradictions"
    __table_args__ = (
        UniqueConstraint("tenant_id", "conversation_id", "layer_version", "key", name="uq_contradictions_slice"),
        Index("ix_contradictions_earlier", "earlier_event_pk"),
        Index("ix_contradictions_later", "later_event_pk"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH))
    key: Mapped[str] = mapped_column(Text)
    entity: Mapped[str] = mapped_column(Text)
    attribute: Mapped[str] = mapped_column(Text)
    earlier_event_pk: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    later_event_pk: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    earlier_value: Mapped[str] = mapped_column(Text)
    later_value: Mapped[str] = mapped_column(Text)
    earlier_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    later_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    kind: Mapped[str] = mapped_column(String(16))


class SpeakerProfileRow(Base):
    __tablename__ = "speaker_profiles"

    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    speaker: Mapped[str] = mapped_column(String(256), primary_key=True)
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH), primary_key=True)
    message_count: Mapped[int] = mapped_column(Integer)
    profile: Mapped[dict] = mapped_column(JSONB)
    style = mapped_column(Vector(256))


class GraphNode(Base):
    __tablename__ = "graph_nodes"
    __table_args__ = (Index("ix_graph_nodes_names", "names", postgresql_using="gin"),)

    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH), primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    label: Mapped[str] = mapped_column(Text)
    names: Mapped[list[str] | None] = mapped_column(ARRAY(Text), nullable=True)
    event_pk: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), nullable=True)
    data: Mapped[dict] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))


class GraphEdge(Base):
    __tablename__ = "graph_edges"
    __table_args__ = (
        Index("ix_graph_edges_src", "tenant_id", "conversation_id", "layer_version", "src"),
        Index("ix_graph_edges_dst", "tenant_id", "conversation_id", "layer_version", "dst"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH))
    src: Mapped[str] = mapped_column(Text)
    dst: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(String(24))
    weight: Mapped[float] = mapped_column(Float, server_default="1")
    meta: Mapped[dict] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    src_event_pk: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), nullable=True)
    dst_event_pk: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), nullable=True)


class ConversationSetting(Base):
    """A conversation's own language, over its tenant's (migration 0008)."""

    __tablename__ = "conversation_settings"

    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    language: Mapped[str] = mapped_column(String(35))
    search_config: Mapped[str] = mapped_column(REGCONFIG)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ErasureAudit(Base):
    """One row per erasure: who (the key), when, what (the scope) and how many rows per table;
    never the erased content (migration 0005)."""

    __tablename__ = "erasure_audit"
    __table_args__ = (Index("ix_erasure_audit_tenant", "tenant_id", "id"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), nullable=True)
    key_prefix: Mapped[str] = mapped_column(String(32))
    key_name: Mapped[str] = mapped_column(String(200), server_default="")
    request_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    action: Mapped[str] = mapped_column(String(16))
    conversation_id: Mapped[str | None] = mapped_column(String(256), nullable=True)
    speaker: Mapped[str | None] = mapped_column(String(256), nullable=True)
    all_conversations: Mapped[bool] = mapped_column(server_default=text("false"))
    conversations: Mapped[int] = mapped_column(Integer, server_default="0")
    counts: Mapped[dict] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))


class LayerRun(Base):
    """The last run of a conversation-level layer per version: when, over how many events, stats."""

    __tablename__ = "layer_runs"

    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    layer: Mapped[str] = mapped_column(String(32), primary_key=True)
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH), primary_key=True)
    computed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    events: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float, server_default="0")
    stats: Mapped[dict] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))


class LayerState(Base):
    """What a conversation-level layer keeps to extend itself with a new batch (migration 0009):
    its folded state and the watermark (occurred_at, events.id) of the last admitted event folded."""

    __tablename__ = "layer_state"

    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    layer: Mapped[str] = mapped_column(String(32), primary_key=True)
    layer_version: Mapped[str] = mapped_column(String(VERSION_WIDTH), primary_key=True)
    events: Mapped[int] = mapped_column(Integer)
    last_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_pk: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    state: Mapped[bytes] = mapped_column(LargeBinary)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


def schema_index(name: str) -> Index:
    """An index the models declare, by name (to drop and rebuild it exactly as declared)."""
    return next(ix for table in Base.metadata.tables.values() for ix in table.indexes if ix.name == name)
