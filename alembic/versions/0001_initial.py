"""Initial schema: tenants, API keys, verbatim events, embeddings, indexing outbox.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "tenants",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("gate_mode", sa.String(16), nullable=False, server_default="off"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.BigInteger, sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("prefix", sa.String(32), nullable=False, unique=True),
        sa.Column("key_hash", sa.String(128), nullable=False),
        sa.Column("name", sa.String(200), nullable=False, server_default=""),
        sa.Column("scopes", postgresql.ARRAY(sa.String(16)), nullable=False, server_default="{read,write}"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_api_keys_tenant_id", "api_keys", ["tenant_id"])
    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.BigInteger, sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("conversation_id", sa.String(256), nullable=False),
        sa.Column("event_id", sa.String(256), nullable=True),
        sa.Column("speaker", sa.String(256), nullable=False),
        sa.Column("recipient", sa.String(256), nullable=True),
        sa.Column("role", sa.String(64), nullable=True),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ingested_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("metadata", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("gate_novelty", sa.Float, nullable=True),
        sa.Column("gate_salience", sa.Float, nullable=True),
        sa.Column("gate_prediction_error", sa.Float, nullable=True),
        sa.Column("gate_score", sa.Float, nullable=True),
        sa.Column("gate_status", sa.String(16), nullable=True),
        sa.Column(
            "search_tsv",
            postgresql.TSVECTOR,
            sa.Computed("to_tsvector('english'::regconfig, coalesce(speaker, '') || ' ' || content)", persisted=True),
        ),
        sa.UniqueConstraint("tenant_id", "conversation_id", "event_id", name="uq_events_client_id"),
    )
    op.create_index("ix_events_conversation_time", "events", ["tenant_id", "conversation_id", "occurred_at", "id"])
    op.create_index("ix_events_tsv", "events", ["search_tsv"], postgresql_using="gin")
    op.create_table(
        "embeddings",
        sa.Column("event_pk", sa.BigInteger, sa.ForeignKey("events.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model", sa.String(128), primary_key=True),
        sa.Column("tenant_id", sa.BigInteger, nullable=False),
        sa.Column("conversation_id", sa.String(256), nullable=False),
        sa.Column("embedding", Vector(384), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index(
        "ix_embeddings_hnsw",
        "embeddings",
        ["embedding"],
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index("ix_embeddings_scope", "embeddings", ["tenant_id", "conversation_id", "model"])
    op.create_table(
        "indexing_state",
        sa.Column("event_pk", sa.BigInteger, sa.ForeignKey("events.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("layer", sa.String(32), primary_key=True),
        sa.Column("tenant_id", sa.BigInteger, nullable=False),
        sa.Column("conversation_id", sa.String(256), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text, nullable=True),
    )
    op.create_index(
        "ix_indexing_pending", "indexing_state", ["layer", "enqueued_at"], postgresql_where=sa.text("done_at IS NULL")
    )
    op.create_index("ix_indexing_conversation", "indexing_state", ["tenant_id", "conversation_id", "layer"])


def downgrade() -> None:
    op.drop_table("indexing_state")
    op.drop_table("embeddings")
    op.drop_table("events")
    op.drop_table("api_keys")
    op.drop_table("tenants")
