"""Incremental layer state: what each conversation-level layer keeps to extend itself (#18 item 4).

One row per (tenant, conversation, layer, layer_version): the layer's folded state (zlib-compressed
JSON, opaque to SQL), how many admitted events it has folded, and the watermark, the time-order
position (occurred_at, events.id) of the last of them. A run whose new events all lie after the
watermark, and whose folded count still matches the log up to it, extends the state with the new
events only; anything else (an event earlier than the watermark, an erased event, a new layer
version) is a full recompute that writes a fresh state. Derived and rebuildable like every layer.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "layer_state",
        sa.Column("tenant_id", sa.BigInteger, sa.ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("conversation_id", sa.String(256), primary_key=True),
        sa.Column("layer", sa.String(32), primary_key=True),
        sa.Column("layer_version", sa.String(32), primary_key=True),
        sa.Column("events", sa.Integer, nullable=False),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_pk", sa.BigInteger, nullable=True),
        sa.Column("state", sa.LargeBinary, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("layer_state")
