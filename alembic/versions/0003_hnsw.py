"""HNSW parameters from the measured sweep: the dense index is rebuilt with m = 16,
ef_construction = 128 (was 16 / 64); queries use ef_search = 160 (was 200, now the
`hnsw_ef_search` setting).

bench/results/hnsw-sweep-20261122-175107.md (100k vectors, 200 LoCoMo questions as queries, the
dense signal's LIMIT 100 query with iterative scans): the point with the fewest distance
computations whose recall stays within 0.5 points of the old parameters is m = 16,
ef_construction = 128, ef_search = 160: recall@10 0.985 / recall@100 0.970 against 0.987 / 0.974
before, p50 6.4 ms / p95 16.1 ms against 10.4 / 21.6 ms (a shared 2-core machine: latency is
noisy, recall is exact). The build takes ~1.5x as long (91 s against 61 s for 100k vectors), and
each insert does correspondingly more graph work, which is small next to embedding the event.

The new index is built CONCURRENTLY beside the old one and swapped in, so a deployment with many
vectors keeps reading and writing while it builds (outside a transaction: Alembic's autocommit
block). On a large table raise `maintenance_work_mem` for the migrating session first (the build is
far faster when the graph fits; docs/deploy.md).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

M, EF_CONSTRUCTION = 16, 128
OLD_M, OLD_EF_CONSTRUCTION = 16, 64


def _rebuild(m: int, ef_construction: int) -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS ix_embeddings_hnsw_new")  # a build interrupted earlier
        op.execute(
            "CREATE INDEX CONCURRENTLY ix_embeddings_hnsw_new ON embeddings "
            f"USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef_construction})"
        )
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS ix_embeddings_hnsw")
        op.execute("ALTER INDEX ix_embeddings_hnsw_new RENAME TO ix_embeddings_hnsw")


def upgrade() -> None:
    _rebuild(M, EF_CONSTRUCTION)


def downgrade() -> None:
    _rebuild(OLD_M, OLD_EF_CONSTRUCTION)
