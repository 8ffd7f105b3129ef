"""An index on events (tenant_id, occurred_at): the newest event of a whole tenant in one descent.

A tenant-wide query reads "when did this memory last hear something" (the reference time for
relative expressions such as "last May"). The only time index led with the conversation, so
PostgreSQL answered max(occurred_at) for a tenant by reading every entry of the tenant's events:
725 ms at 1M events, 70 ms-ish at 100k, the largest stage of a tenant-scoped query at scale
(bench/results/scale-*.md, docs/scaling.md). Conversation-scoped queries were not affected.

Built CONCURRENTLY, so a deployment keeps writing while it builds (outside a transaction).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS ix_events_tenant_time")  # an interrupted build is INVALID
        op.execute("CREATE INDEX CONCURRENTLY ix_events_tenant_time ON events (tenant_id, occurred_at)")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS ix_events_tenant_time")
