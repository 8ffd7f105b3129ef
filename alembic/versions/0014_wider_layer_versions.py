"""Layer versions up to 255 characters (they were 64).

A derived row carries the version of the code that built it, joined from its parts
("graph/4+llm_assertions/2+assertions/10+timeparse/14+llm_extract/3": the graph built from the LLM's
claims). Each part's number grows with every release of its rules, and at 65 characters that string no
longer fitted: a graph job with an LLM configured failed writing its nodes. Widening a varchar is a
catalogue change in PostgreSQL (no table is rewritten), and no stored value changes.

The downgrade narrows the columns back to 64 characters: it fails if a longer version is stored. Rebuild
those layers with the older code first (`palimpsest rebuild`), or delete their rows; the verbatim log is
never touched by either direction.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# (table, column): every column that stores a layer's version
COLUMNS = [(t, "layer_version") for t in ("episodes", "assertions", "contradictions", "speaker_profiles", "graph_nodes",
                                          "graph_edges", "layer_runs", "layer_state")] + [
    ("event_signals", c) for c in ("surprise_version", "consolidation_version", "graph_version")]


def _width(old: int, new: int) -> None:
    for table, column in COLUMNS:
        op.alter_column(table, column, type_=sa.String(new), existing_type=sa.String(old))


def upgrade() -> None:
    _width(64, 255)


def downgrade() -> None:
    _width(255, 64)
