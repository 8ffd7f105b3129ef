"""Erasure audit: who erased what, when, with counts (never the erased content). Owner: erasure work (#18 item 1).

One row per erasure (a conversation, or a speaker in one conversation or in all of them): the key
that asked (id, prefix and name, kept even if the key is later revoked), the time, the scope, and
how many rows went per table. The erased words never reach this table: no content, no event ids.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erasure_audit",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.BigInteger, sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("key_id", sa.BigInteger, sa.ForeignKey("api_keys.id", ondelete="SET NULL"), nullable=True),
        sa.Column("key_prefix", sa.String(32), nullable=False),
        sa.Column("key_name", sa.String(200), nullable=False, server_default=""),
        sa.Column("request_id", sa.String(128), nullable=True),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("conversation_id", sa.String(256), nullable=True),
        sa.Column("speaker", sa.String(256), nullable=True),
        sa.Column("all_conversations", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("conversations", sa.Integer, nullable=False, server_default="0"),
        sa.Column("counts", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
    )
    op.create_index("ix_erasure_audit_tenant", "erasure_audit", ["tenant_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_erasure_audit_tenant", table_name="erasure_audit")
    op.drop_table("erasure_audit")
