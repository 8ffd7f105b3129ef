"""Incremental layer state: what each conversation-level layer keeps to extend itself. Owner: incremental layers work (#18 item 4).

PLACEHOLDER: a no-op until its owner fills it in (keep the revision ids and chain as they are).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
