"""Layer trust: whatever the facts/dates/entities work needs in the schema (may stay empty). Owner: #19 work.

PLACEHOLDER: a no-op until its owner fills it in (keep the revision ids and chain as they are).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
