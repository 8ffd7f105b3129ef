"""The small protocols through which the product talks to the outside.

Services depend on these, never on a concrete model or client: `app/adapters/` holds the
implementations (a sentence-transformers embedder, a cross-encoder, one HTTP LLM client), the
query service composes `Retriever`s (one per signal), and ingest hands work to a `Dispatcher`
(Celery in production, a list in a test). Nothing here does I/O itself.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np


class Hit(NamedTuple):
    """One candidate a signal found: the event's primary key and the signal's own score."""

    id: int
    score: float


@runtime_checkable
class Embedder(Protocol):
    name: str  # the model name stored with each vector

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class Reranker(Protocol):
    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One relevance logit per (query, passage) pair."""
        ...


@runtime_checkable
class FusionModel(Protocol):
    """The learned fusion: one score per candidate's feature row, and each feature's share of it."""

    def score(self, rows: np.ndarray) -> np.ndarray: ...

    def contributions(self, rows: np.ndarray) -> np.ndarray:
        """(rows, features + 1): per-feature contributions, the bias last."""
        ...


class LLMError(RuntimeError):
    """The LLM could not be reached or gave no usable reply. `kind` names what failed (the
    transport's or the HTTP status error's class name), for the stats of callers that fall back."""

    def __init__(self, message: str, kind: str = "LLMError"):
        super().__init__(message)
        self.kind = kind


@runtime_checkable
class LLM(Protocol):
    model: str  # the model's name, for evidence and responses

    def chat(self, messages: Sequence[dict[str, str]], *, json_mode: bool = False,
             timeout_s: float | None = None) -> str:
        """The assistant's reply text (temperature 0); raises `LLMError` on failure."""
        ...


@runtime_checkable
class Retriever(Protocol):
    """One retrieval signal: its name (the key in a response's `signals`) and its ranked hits."""

    name: str

    def run(self, ctx: Any) -> list[Hit]: ...


@runtime_checkable
class Dispatcher(Protocol):
    def enqueue(self, layer: str, pks: list[int], owners: dict[int, tuple[int, str]] | None = None) -> int:
        """Send the layer's work for these events; returns how many tasks were sent (0: broker down,
        the outbox sweeper sends them later). `owners` maps each event to its (tenant, conversation)
        where the caller knows it: the graph's tasks are routed by conversation (`app.domain.queues`)."""
        ...

    def publish(self, task: str, args: list) -> bool:
        """Send one task by name; False when the broker is unreachable."""
        ...

    def ping(self) -> None:
        """Raise when the broker cannot take work now (the readiness check)."""
        ...
