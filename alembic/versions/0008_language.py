"""Language per tenant/conversation: text-search configuration per event. Owner: language work (#18 item 5).

PLACEHOLDER: a no-op until its owner fills it in (keep the revision ids and chain as they are).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
