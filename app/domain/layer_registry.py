"""The background layers: each has an outbox row per event and one task that does its work.

Plain data about the product (which layers exist, which waits for which, the task names they are
sent under), read by ingest, the Celery dispatcher (`app.adapters.dispatch`) and the workers.
"""
from __future__ import annotations

# layer name -> Celery task name. Ingest writes one outbox row per event and layer listed here
# (`gate` only for tenants whose encoding gate is on), and /v1/conversations/{id}/status shows
# each layer's pending count.
LAYERS: dict[str, str] = {
    "embed": "palimpsest.embed",
    "gate": "palimpsest.gate",
    "consolidate": "palimpsest.consolidate",
    "surprise": "palimpsest.surprise",
    "engrams": "palimpsest.engrams",
    "graph": "palimpsest.graph",
}

# Layers whose outbox rows exist only for some tenants (the writer leaves them out otherwise).
OPTIONAL_LAYERS = frozenset({"gate"})

# Conversation-level layers: recomputed per conversation from its whole log (idempotent). A task
# given event pks processes their conversations' pending rows; a task that finds none is a no-op.
CONVERSATION_LAYERS: tuple[str, ...] = ("gate", "consolidate", "surprise", "engrams", "graph")

# A layer waits while any layer it depends on has work pending in the same conversation; the
# layer that finishes last starts the waiting ones (and the beat sweeper is the safety net).
DEPENDS: dict[str, tuple[str, ...]] = {
    "gate": ("embed",),  # prediction error and vector neighbours need the stored vectors
    "consolidate": ("embed", "gate"),  # topic shifts and summaries use the stored vectors
    "graph": ("embed", "gate", "consolidate"),  # it reads consolidation's episodes and assertions
    "surprise": ("gate",),
    "engrams": ("gate",),
}

# Layers a forgotten speaker's conversations are rebuilt with.
REBUILT_AFTER_FORGET: tuple[str, ...] = ("consolidate", "surprise", "engrams", "graph")


def dependents_of(layer: str) -> list[str]:
    return [name for name, deps in DEPENDS.items() if layer in deps]


# Tasks that are not layers (no outbox row): a query's heat bump (workers/heat.py).
HEAT_BUMP = "palimpsest.heat_bump"
