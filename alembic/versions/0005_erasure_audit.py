"""Erasure audit: who erased what, when, with counts (never the erased content). Owner: erasure work (#18 item 1).

PLACEHOLDER: a no-op until its owner fills it in (keep the revision ids and chain as they are).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
