"""Query filters: a GIN index on events.metadata, for `where` filters across a tenant's conversations.

`POST /v1/query` and the conversation listing take `"where": {"key": value}`: the events whose
metadata contains that object (`metadata @> :where`). `jsonb_path_ops` indexes exactly that
operator (smaller and faster than the default `jsonb_ops`, which also serves key-existence
operators nobody asks for here). The tenant condition is combined with it by a bitmap AND, or
checked on the rows the index finds.

Built CONCURRENTLY, so a deployment keeps writing while it builds (outside a transaction).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS ix_events_metadata")  # an interrupted build is INVALID
        op.execute("CREATE INDEX CONCURRENTLY ix_events_metadata ON events USING gin (metadata jsonb_path_ops)")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS ix_events_metadata")
