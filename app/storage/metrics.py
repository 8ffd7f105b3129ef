"""SQL behind the scrape-time metrics."""
from __future__ import annotations

from sqlalchemy import Connection, text


def indexing_lag(conn: Connection) -> list[tuple[str, int, float]]:
    """(layer, pending events, age in seconds of the oldest pending one)."""
    rows = conn.execute(text(
        "SELECT s.layer, count(*), coalesce(extract(epoch FROM now() - min(e.ingested_at)), 0) "
        "FROM indexing_state s JOIN events e ON e.id = s.event_pk "
        "WHERE s.done_at IS NULL GROUP BY s.layer"
    ))
    return [(r[0], int(r[1]), float(r[2])) for r in rows]


def gate_counts(conn: Connection) -> list[tuple[str, int]]:
    rows = conn.execute(text(
        "SELECT coalesce(gate_status, 'unscored'), count(*) FROM events GROUP BY 1"
    ))
    return [(r[0], int(r[1])) for r in rows]
