"""The shape of a conversation-level layer job: what a build is given (`Context`), what a layer
declares (`ConversationLayer`), and what one run over a conversation came to (`Outcome`).

The machinery that runs them is `app.services.layers`; the builds are `app.services.builds`,
`app.services.consolidation_build`, `app.services.graph_build`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np
from sqlalchemy import Connection

from app.domain.layers.events import LayerEvent
from app.storage.events import EventRow


@dataclass
class Context:
    """One conversation's input to a layer. The log and the vectors are read on first use, so a
    layer that extends its state with the new events (`ConversationLayer.extend`) never reads the
    whole conversation."""

    tenant_id: int
    conversation_id: str
    version: str
    pending: list[int]  # outbox rows this run will mark done
    load_log: Callable[[], list[EventRow]] = field(repr=False, default=lambda: [])  # gated-out included
    load_vectors: Callable[[], dict[int, np.ndarray]] | None = field(repr=False, default=None)
    force: bool = False  # a rebuild: recompute from the whole log

    @cached_property
    def all_rows(self) -> list[EventRow]:  # gated-out events included, time order
        return self.load_log()

    @cached_property
    def rows(self) -> list[EventRow]:  # admitted events, time order
        return [r for r in self.all_rows if r.gate_status != "gated_out"]

    @cached_property
    def vectors(self) -> dict[int, np.ndarray] | None:
        return self.load_vectors() if self.load_vectors is not None else None

    @cached_property
    def events(self) -> list[LayerEvent]:
        return [LayerEvent.of(r, seq=i) for i, r in enumerate(self.rows)]

    def matrix(self) -> np.ndarray | None:
        """Vectors aligned with `rows` (None unless every admitted event has one)."""
        if not self.vectors or not self.rows or any(r.id not in self.vectors for r in self.rows):
            return None
        return np.vstack([self.vectors[r.id] for r in self.rows])


@dataclass(frozen=True)
class ConversationLayer:
    layer: str
    version: Callable[[], str]  # the current version (the graph's depends on the extractor)
    build: Callable[[Connection, Context], dict]  # writes the slice from the whole log, returns stats
    needs_vectors: bool = False
    # extends the slice with the pending events only, from the layer's stored state; None when it
    # cannot (no state, an event before the watermark, an erased event...): then `build` runs
    extend: Callable[[Connection, Context], dict | None] | None = None


@dataclass(frozen=True)
class Outcome:
    status: str  # done | nothing | waiting
    events: int = 0
    marked: int = 0
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)
