"""Event corrections: a new version links the one it supersedes; nothing is overwritten. Owner: ingest work (#18 item 2, #20 item 3).

PLACEHOLDER: a no-op until its owner fills it in (keep the revision ids and chain as they are).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
