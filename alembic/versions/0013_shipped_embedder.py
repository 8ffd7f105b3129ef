"""The shipped embedder (issue #17 item 3): events are encoded by `palimpsest-minilm-v1`, the
fine-tuned all-MiniLM-L6-v2 in `app/adapters/embed_model/` (docs/models.md), no longer by the
packaged all-MiniLM-L6-v2.

Vectors are stored per model name and the dense signals read the current name's only, so after the
upgrade the old default's vectors are never read again. They are deleted here, and each of their
events' `embed` outbox row is made pending: the embed worker (the sweeper re-sends pending rows)
encodes them again with the new model. Until it has, the dense signals find only the events already
re-embedded (one encoding of the log: ~35 events/s on two CPU cores, docs/scaling.md). Vectors of a
model you configured yourself (`PALIMPSEST_EMBEDDING_MODEL_NAME`) are left alone. Layers built over
the old vectors (episodes, surprise, the gate's prediction error) keep their rows until they are
rebuilt: `palimpsest rebuild --layer consolidate` (and `surprise`, `gate`) once the worker is done.

The downgrade does the same in reverse: the new model's vectors go, and 0012's code encodes their
events again under all-MiniLM-L6-v2.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

OLD = "all-MiniLM-L6-v2"
NEW = "palimpsest-minilm-v1"


def _reembed(model: str) -> None:
    op.execute(f"""
        WITH gone AS (DELETE FROM embeddings WHERE model = '{model}' RETURNING event_pk)
        UPDATE indexing_state SET done_at = NULL, attempts = 0, last_error = NULL
        WHERE layer = 'embed' AND event_pk IN (SELECT event_pk FROM gone)
    """)


def upgrade() -> None:
    _reembed(OLD)


def downgrade() -> None:
    _reembed(NEW)
