"""Query expansion: a second dense list from a question restated in the conversation's own terms.

A question and its evidence often share no words and only part of their meaning ("What instrument
does Leo play?" / "six months of cello"). Two ways to restate it:

* **HyDE** (when an LLM is configured): the LLM writes the turn that would answer the question;
  that turn's embedding is searched instead of the question's. It cannot know the facts, but it
  writes in the register of an answer, which sits closer to the evidence than the question does.
* **Pseudo-relevance feedback** (Rocchio, without an LLM): the question's vector moved toward the
  vectors of the turns the first-stage signals agree on most, q' = α·q + β·mean(feedback), so the
  search runs again with the conversation's own wording of the topic.

Pure functions here; the query path does the I/O (the LLM call, vectors from the database).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.domain.retrieval.fusion import weighted_rrf

ROCCHIO_ALPHA = 1.0
ROCCHIO_BETA = 0.5
FEEDBACK_DOCS = 3  # turns the question's vector is moved toward

HYDE_SYSTEM = (
    "You write one plausible message from a chat between people that would answer the user's question. "
    "Invent concrete details if you must; write only the message itself, in the first person, at most "
    "two sentences, with no preamble."
)


def rocchio(query: np.ndarray, feedback: Sequence[np.ndarray], alpha: float = ROCCHIO_ALPHA,
            beta: float = ROCCHIO_BETA) -> np.ndarray | None:
    """α·q + β·mean(feedback), unit length; None without feedback (nothing to expand toward)."""
    if not len(feedback):
        return None
    v = alpha * np.asarray(query, dtype=np.float32) + beta * np.mean(np.asarray(feedback, dtype=np.float32), axis=0)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


def feedback_ids(lists: Sequence[Sequence[int]], n: int = FEEDBACK_DOCS, k: int = 60) -> list[int]:
    """The `n` events the first-stage lists agree on most (plain reciprocal rank fusion)."""
    return [pk for pk, _ in weighted_rrf({str(i): ranked for i, ranked in enumerate(lists)}, k=k)[:n]]


def hyde_messages(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": HYDE_SYSTEM}, {"role": "user", "content": question}]


def usable_passage(reply: str, max_chars: int = 600) -> str | None:
    """The LLM's hypothetical turn, trimmed; None when it wrote nothing."""
    text = " ".join(reply.split())
    return text[:max_chars] if text else None
