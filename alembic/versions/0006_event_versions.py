"""Event corrections: a new version links the one it supersedes; nothing is overwritten. Owner: ingest work (#18 item 2, #20 item 3).

`events.supersedes_id` is set on the new version only (the old row is never touched); at most one
version supersedes a given event (a unique partial index), so a conversation's versions of an event
form one chain and its newest version is well defined. Erasing an old version unlinks the newer one.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("events", sa.Column("supersedes_id", sa.BigInteger(), nullable=True))
    op.create_foreign_key("fk_events_supersedes", "events", "events", ["supersedes_id"], ["id"], ondelete="SET NULL")
    op.create_index("uq_events_supersedes", "events", ["supersedes_id"], unique=True,
                    postgresql_where=sa.text("supersedes_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("uq_events_supersedes", table_name="events")
    op.drop_constraint("fk_events_supersedes", "events", type_="foreignkey")
    op.drop_column("events", "supersedes_id")
