"""Table definitions (SQLAlchemy Core/ORM metadata). The schema itself is created by Alembic.

The `events` table is the verbatim substrate: content is stored exactly as received and never
rewritten. Everything else (embeddings, indexing state, later layers) is derived from it and can
be rebuilt.
"""
from __future__ import annotations

from datetime import datetime

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

EMBEDDING_DIM = 384

# Searchable text: speaker + content. 'english' gives stemming and stop words; the column is
# generated so it can never drift from the verbatim content.
TSV_EXPRESSION = "to_tsvector('english'::regconfig, coalesce(speaker, '') || ' ' || content)"


class Base(DeclarativeBase):
    pass


class Tenant(Base):
    __tablename__ = "tenants"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    gate_mode: Mapped[str] = mapped_column(String(16), server_default="off")
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
        Index("ix_events_tsv", "search_tsv", postgresql_using="gin"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(256))
    event_id: Mapped[str | None] = mapped_column(String(256), nullable=True)
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
    search_tsv = mapped_column(TSVECTOR, Computed(TSV_EXPRESSION, persisted=True))


class Embedding(Base):
    """One vector per (event, model): a model change re-embeds side by side, then swaps."""

    __tablename__ = "embeddings"
    __table_args__ = (
        Index(
            "ix_embeddings_hnsw",
            "embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
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
