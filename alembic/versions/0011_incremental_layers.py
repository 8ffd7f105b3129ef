"""Incremental consolidation (#18 item 4) and dated claims (#19): `assertions.valid_from`.

The consolidation layer's state (the episode fold's counters and open tail, the live timeline, the
latest plans) is a row of `layer_state` (migration 0009), like the surprise and engrams states; its
version moves to consolidation/2, so a deployment rebuilds the layer once (no state at the new
version: the first run is a full one) and extends it from then on.

A claim whose words name the day it takes effect ("I start at the clinic on May 6") keeps that day
in the new nullable `assertions.valid_from` (NULL: the claim holds from the day it was said). A
nullable column without a default is a catalogue change in PostgreSQL (no table rewrite); the
layer's new version fills it on the rebuild.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("assertions", sa.Column("valid_from", sa.Date, nullable=True))


def downgrade() -> None:
    op.drop_column("assertions", "valid_from")
