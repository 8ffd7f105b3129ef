"""The background layers: each has an outbox row per event and one Celery task that does its work."""
from __future__ import annotations

# layer name -> Celery task name. Ingest writes one outbox row per event and layer listed here.
LAYERS: dict[str, str] = {
    "embed": "palimpsest.embed",
}
