"""The shape of a conversation-level layer job: what a build is given (`Context`), what a layer
declares (`ConversationLayer`), and what one run over a conversation came to (`Outcome`).

The machinery that runs them is `app.services.layers`; the builds are `app.services.builds`,
`app.services.graph_build`.
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
    """One conversation's input to a layer."""

    tenant_id: int
    conversation_id: str
    version: str
    rows: list[EventRow]  # admitted events, time order
    pending: list[int]  # outbox rows this run will mark done
    vectors: dict[int, np.ndarray] | None = None
    all_rows: list[EventRow] = field(default_factory=list)  # gated-out events included

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
    build: Callable[[Connection, Context], dict]  # writes the slice, returns stats
    needs_vectors: bool = False


@dataclass(frozen=True)
class Outcome:
    status: str  # done | nothing | waiting
    events: int = 0
    marked: int = 0
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)
