"""A name is not a match; findable turns (issue #17 items 8 and 6).

- `events.search_tsv` indexes the words said, no longer the speaker's name in front of them:
  `to_tsvector(search_config, content)` (was `coalesce(speaker, '') || ' ' || content`). A generated
  column's expression cannot be altered: the column and its GIN index are dropped and added again,
  which rewrites `events` and rebuilds the index (about as long as writing the events' tsvectors
  once; the table is locked meanwhile).
- The event vectors encode the content alone (`app.domain.event.embedding_text`; was "Speaker:
  content"): every stored vector is deleted and every event's `embed` outbox row made pending, so
  the embed worker (the sweeper re-sends pending rows) encodes them again. Until it has, the dense
  signals find only the events already re-embedded: plan the upgrade's downtime or accept a while
  of lexical-only retrieval; the cost is one encoding of the whole log (docs/models.md).
- `event_signals.findable` and `findable_tsv` (GIN): each event's session date in the words a
  question uses ("8 May 2023 ; May 2023 ; Monday"), in the event's text-search configuration,
  written here for every stored event (one UPDATE over `event_signals`, a row added for events
  without one) and afterwards with each event's vector (`app.storage.findable`; with the setting
  `findable_previous`, new vectors' events also get the turn they answer).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

TSV = "to_tsvector(search_config, content)"
OLD_TSV = "to_tsvector(search_config, coalesce(speaker, '') || ' ' || content)"

_DAY = "e.occurred_at AT TIME ZONE 'UTC'"
# app.storage.findable's text without the previous turn (a migration keeps its own copy)
FINDABLE_BACKFILL = f"""
UPDATE event_signals s SET findable = t.txt, findable_tsv = to_tsvector(t.search_config, t.txt)
FROM (
    SELECT e.id, e.search_config,
           concat_ws(' ; ', to_char({_DAY}, 'FMDD FMMonth YYYY'), to_char({_DAY}, 'FMMonth YYYY'),
                     to_char({_DAY}, 'FMDay')) AS txt
    FROM events e
) t
WHERE s.event_pk = t.id
"""
FINDABLE_INSERT = "INSERT INTO event_signals (event_pk, tenant_id, conversation_id) " \
                  "SELECT id, tenant_id, conversation_id FROM events ON CONFLICT (event_pk) DO NOTHING"
REEMBED = [
    "DELETE FROM embeddings",
    "INSERT INTO indexing_state (event_pk, layer, tenant_id, conversation_id, enqueued_at) "
    "SELECT id, 'embed', tenant_id, conversation_id, now() FROM events ON CONFLICT DO NOTHING",
    "UPDATE indexing_state SET done_at = NULL, attempts = 0, last_error = NULL WHERE layer = 'embed'",
]


def _replace_tsv(expression: str) -> None:
    op.drop_index("ix_events_tsv", table_name="events")
    op.drop_column("events", "search_tsv")
    op.add_column("events", sa.Column("search_tsv", postgresql.TSVECTOR, sa.Computed(expression, persisted=True)))
    op.create_index("ix_events_tsv", "events", ["search_tsv"], postgresql_using="gin")


def upgrade() -> None:
    _replace_tsv(TSV)
    op.add_column("event_signals", sa.Column("findable", sa.Text, nullable=True))
    op.add_column("event_signals", sa.Column("findable_tsv", postgresql.TSVECTOR, nullable=True))
    op.execute(FINDABLE_INSERT)
    op.execute(FINDABLE_BACKFILL)
    op.create_index("ix_event_signals_findable", "event_signals", ["findable_tsv"], postgresql_using="gin")
    for stmt in REEMBED:
        op.execute(stmt)


def downgrade() -> None:
    op.drop_index("ix_event_signals_findable", table_name="event_signals")
    op.drop_column("event_signals", "findable_tsv")
    op.drop_column("event_signals", "findable")
    _replace_tsv(OLD_TSV)
    for stmt in REEMBED:  # the vectors go back to "Speaker: content" with the code of 0011
        op.execute(stmt)
