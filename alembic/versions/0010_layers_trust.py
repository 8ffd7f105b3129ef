"""Layer versions up to 64 characters: a layer's version names the rule sets it is built from.

The surprise layer's facts come from the assertion rules and the time resolver, so its version is
"surprise/1+assertions/2+timeparse/3": a change in either rebuilds it on upgrade. That no longer
fits the 32 characters every layer-version column had. Widening a varchar is a catalogue change in
PostgreSQL (no table rewrite, indexes kept).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

COLUMNS = [
    ("episodes", "layer_version"), ("layer_runs", "layer_version"), ("layer_state", "layer_version"),
    ("speaker_profiles", "layer_version"), ("assertions", "layer_version"), ("contradictions", "layer_version"),
    ("event_signals", "surprise_version"), ("event_signals", "consolidation_version"),
    ("event_signals", "graph_version"), ("graph_edges", "layer_version"), ("graph_nodes", "layer_version"),
]


def upgrade() -> None:
    for table, column in COLUMNS:
        op.alter_column(table, column, type_=sa.String(64), existing_type=sa.String(32))


def downgrade() -> None:
    for table, column in COLUMNS:
        op.alter_column(table, column, type_=sa.String(32), existing_type=sa.String(64))
