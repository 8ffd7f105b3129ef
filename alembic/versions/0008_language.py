"""Language per tenant/conversation: text-search configuration per event. Owner: language work (#18 item 5).

- `tenants.language` (a BCP 47 tag, default `en`) and `tenants.search_config` (the regconfig it maps
  to: `english` for English, `simple` for every other language; `app.domain.language`);
- `conversation_settings`: a conversation's own language, over its tenant's;
- `events.search_config`: the configuration each event is indexed with, set on insert by a trigger
  from the conversation's setting, else the tenant's; `search_tsv` is generated from it. For
  `english` rows the expression gives exactly the tsvector of migration 0001
  (`to_tsvector('english', coalesce(speaker, '') || ' ' || content)`), so English tenants index
  and rank as before.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TSV = "to_tsvector(search_config, coalesce(speaker, '') || ' ' || content)"
OLD_TSV = "to_tsvector('english'::regconfig, coalesce(speaker, '') || ' ' || content)"

TRIGGER_FUNCTION = """
CREATE OR REPLACE FUNCTION events_search_config() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_config := coalesce(
        (SELECT s.search_config FROM conversation_settings s
          WHERE s.tenant_id = NEW.tenant_id AND s.conversation_id = NEW.conversation_id),
        (SELECT t.search_config FROM tenants t WHERE t.id = NEW.tenant_id),
        'english'::regconfig);
    RETURN NEW;
END
$$
"""


def _replace_tsv(expression: str) -> None:
    op.drop_index("ix_events_tsv", table_name="events")
    op.drop_column("events", "search_tsv")
    op.add_column("events", sa.Column("search_tsv", postgresql.TSVECTOR, sa.Computed(expression, persisted=True)))
    op.create_index("ix_events_tsv", "events", ["search_tsv"], postgresql_using="gin")


def upgrade() -> None:
    op.add_column("tenants", sa.Column("language", sa.String(35), nullable=False, server_default="en"))
    op.add_column("tenants", sa.Column("search_config", postgresql.REGCONFIG, nullable=False,
                                       server_default=sa.text("'english'::regconfig")))
    op.create_table(
        "conversation_settings",
        sa.Column("tenant_id", sa.BigInteger, sa.ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("conversation_id", sa.String(256), primary_key=True),
        sa.Column("language", sa.String(35), nullable=False),
        sa.Column("search_config", postgresql.REGCONFIG, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.add_column("events", sa.Column("search_config", postgresql.REGCONFIG, nullable=False,
                                      server_default=sa.text("'english'::regconfig")))
    _replace_tsv(TSV)
    op.execute(TRIGGER_FUNCTION)
    op.execute("CREATE TRIGGER events_search_config BEFORE INSERT ON events "
               "FOR EACH ROW EXECUTE FUNCTION events_search_config()")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS events_search_config ON events")
    op.execute("DROP FUNCTION IF EXISTS events_search_config()")
    _replace_tsv(OLD_TSV)
    op.drop_column("events", "search_config")
    op.drop_table("conversation_settings")
    op.drop_column("tenants", "search_config")
    op.drop_column("tenants", "language")
