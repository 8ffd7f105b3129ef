"""Ingestion layers: per-event signals, episodes, assertions and contradictions, speaker profiles,
the memory graph, and a record of each layer run.

Every row is derived from the verbatim `events` log and can be rebuilt from it. Rows that come
from one event reference it with ON DELETE CASCADE; conversation-level rows (episodes, profiles,
graph entities and facets, run records) carry (tenant_id, conversation_id) and are deleted
explicitly with their conversation. Conversation-level rows carry the layer's version, so a
rebuild with a new version can run beside the old rows and be swapped in.

Also: `tenants.gate_mode` defaults to 'default' from now on (= follow PALIMPSEST_GATE_MODE_DEFAULT);
existing tenants keep their explicit value.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""
import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SEARCH_EXTRA_TSV = "to_tsvector('english'::regconfig, coalesce(search_extra, ''))"


def _scope() -> list[sa.Column]:
    return [
        sa.Column("tenant_id", sa.BigInteger, sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("conversation_id", sa.String(256), nullable=False),
    ]


def _event_fk(name: str, nullable: bool = False, ondelete: str = "CASCADE") -> sa.Column:
    return sa.Column(name, sa.BigInteger, sa.ForeignKey("events.id", ondelete=ondelete), nullable=nullable)


def upgrade() -> None:
    op.alter_column("tenants", "gate_mode", server_default="default")

    op.create_table(
        "event_signals",
        sa.Column("event_pk", sa.BigInteger, sa.ForeignKey("events.id", ondelete="CASCADE"), primary_key=True),
        *_scope(),
        # surprise (L5)
        sa.Column("surprise_version", sa.String(32), nullable=True),
        sa.Column("surprise", sa.Float, nullable=True),
        sa.Column("surprise_facts", sa.Integer, nullable=True),
        sa.Column("surprise_new_facts", sa.Integer, nullable=True),
        sa.Column("surprise_contradiction", sa.Boolean, nullable=True),
        sa.Column("salience", sa.Float, nullable=True),
        sa.Column("importance", sa.Float, nullable=True),
        # consolidation (L4)
        sa.Column("consolidation_version", sa.String(32), nullable=True),
        sa.Column("episode_index", sa.Integer, nullable=True),
        _event_fk("superseded_by_event_pk", nullable=True, ondelete="SET NULL"),
        # memory graph
        sa.Column("graph_version", sa.String(32), nullable=True),
        sa.Column("entities", postgresql.ARRAY(sa.Text), nullable=True),
        sa.Column("resolved_dates", postgresql.ARRAY(sa.Date), nullable=True),
        sa.Column("time_mentions", postgresql.JSONB, nullable=True),
        sa.Column("search_extra", sa.Text, nullable=True),
        sa.Column("search_extra_tsv", postgresql.TSVECTOR, sa.Computed(SEARCH_EXTRA_TSV, persisted=True)),
        # heat
        sa.Column("heat", sa.Float, nullable=True),
        sa.Column("heat_stage", sa.String(16), nullable=True),
        sa.Column("access_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_access_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heat_record", postgresql.JSONB, nullable=True),
        sa.Column("heat_updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("ix_event_signals_scope", "event_signals", ["tenant_id", "conversation_id"])
    op.create_index("ix_event_signals_search_extra", "event_signals", ["search_extra_tsv"], postgresql_using="gin")
    op.create_index("ix_event_signals_superseded_by", "event_signals", ["superseded_by_event_pk"],
                    postgresql_where=sa.text("superseded_by_event_pk IS NOT NULL"))
    op.create_index("ix_event_signals_accessed", "event_signals", ["last_access_at"],
                    postgresql_where=sa.text("last_access_at IS NOT NULL"))

    op.create_table(
        "episodes",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        *_scope(),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("end_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("speakers", postgresql.ARRAY(sa.Text), nullable=False),
        sa.Column("boundary", sa.String(16), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("event_pks", postgresql.ARRAY(sa.BigInteger), nullable=False),
        sa.Column("summary_event_pks", postgresql.ARRAY(sa.BigInteger), nullable=False),
        sa.UniqueConstraint("tenant_id", "conversation_id", "layer_version", "idx", name="uq_episodes_slice"),
    )

    op.create_table(
        "assertions",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        *_scope(),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        _event_fk("event_pk"),
        sa.Column("entity", sa.Text, nullable=False),
        sa.Column("attribute", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("value_key", sa.Text, nullable=False),
        sa.Column("surface", sa.Text, nullable=False, server_default=""),
        sa.Column("asserted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("negated", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("superseded_by_key", sa.Text, nullable=True),
        sa.UniqueConstraint("tenant_id", "conversation_id", "layer_version", "key", name="uq_assertions_slice"),
    )
    op.create_index("ix_assertions_event", "assertions", ["event_pk"])
    op.create_index("ix_assertions_entity", "assertions", ["tenant_id", "conversation_id", "entity", "attribute"])

    op.create_table(
        "contradictions",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        *_scope(),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("entity", sa.Text, nullable=False),
        sa.Column("attribute", sa.Text, nullable=False),
        _event_fk("earlier_event_pk"),
        _event_fk("later_event_pk"),
        sa.Column("earlier_value", sa.Text, nullable=False),
        sa.Column("later_value", sa.Text, nullable=False),
        sa.Column("earlier_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("later_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.UniqueConstraint("tenant_id", "conversation_id", "layer_version", "key", name="uq_contradictions_slice"),
    )
    op.create_index("ix_contradictions_earlier", "contradictions", ["earlier_event_pk"])
    op.create_index("ix_contradictions_later", "contradictions", ["later_event_pk"])

    op.create_table(
        "speaker_profiles",
        *_scope(),
        sa.Column("speaker", sa.String(256), nullable=False),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("message_count", sa.Integer, nullable=False),
        sa.Column("profile", postgresql.JSONB, nullable=False),
        sa.Column("style", Vector(256), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "conversation_id", "speaker", "layer_version"),
    )

    op.create_table(
        "graph_nodes",
        *_scope(),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),  # entity | facet | facet_point | episode
        sa.Column("label", sa.Text, nullable=False),
        # normalised names (entity name and aliases): the index a query's names are looked up in
        sa.Column("names", postgresql.ARRAY(sa.Text), nullable=True),
        _event_fk("event_pk", nullable=True),
        sa.Column("data", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.PrimaryKeyConstraint("tenant_id", "conversation_id", "layer_version", "key"),
    )
    op.create_index("ix_graph_nodes_event", "graph_nodes", ["event_pk"], postgresql_where=sa.text("event_pk IS NOT NULL"))
    op.create_index("ix_graph_nodes_names", "graph_nodes", ["names"], postgresql_using="gin")

    op.create_table(
        "graph_edges",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        *_scope(),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("src", sa.Text, nullable=False),
        sa.Column("dst", sa.Text, nullable=False),
        sa.Column("type", sa.String(24), nullable=False),
        sa.Column("weight", sa.Float, nullable=False, server_default="1"),
        sa.Column("meta", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        # the events whose facts the edge joins: an edge goes with either of them
        _event_fk("src_event_pk", nullable=True),
        _event_fk("dst_event_pk", nullable=True),
    )
    op.create_index("ix_graph_edges_src", "graph_edges", ["tenant_id", "conversation_id", "layer_version", "src"])
    op.create_index("ix_graph_edges_dst", "graph_edges", ["tenant_id", "conversation_id", "layer_version", "dst"])
    op.create_index("ix_graph_edges_src_event", "graph_edges", ["src_event_pk"],
                    postgresql_where=sa.text("src_event_pk IS NOT NULL"))
    op.create_index("ix_graph_edges_dst_event", "graph_edges", ["dst_event_pk"],
                    postgresql_where=sa.text("dst_event_pk IS NOT NULL"))

    op.create_table(
        "layer_runs",
        *_scope(),
        sa.Column("layer", sa.String(32), nullable=False),
        sa.Column("layer_version", sa.String(32), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("events", sa.Integer, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False, server_default="0"),
        sa.Column("stats", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.PrimaryKeyConstraint("tenant_id", "conversation_id", "layer", "layer_version"),
    )

    # Events stored before this revision get outbox rows for the new layers: the beat sweeper sends
    # them (their enqueued_at is NULL) and the layers are built from the existing log.
    op.execute(
        "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at) "
        "SELECT e.id, l.layer, e.tenant_id, e.conversation_id, NULL FROM events e "
        "CROSS JOIN (VALUES ('consolidate'), ('surprise'), ('engrams'), ('graph')) AS l(layer) "
        "ON CONFLICT DO NOTHING"
    )


def downgrade() -> None:
    for t in ("layer_runs", "graph_edges", "graph_nodes", "speaker_profiles", "contradictions", "assertions",
              "episodes", "event_signals"):
        op.drop_table(t)
    op.alter_column("tenants", "gate_mode", server_default="off")
