"""Stage 1: intent routing (PRISM N4, eq. 7; Cortex §3.3 intent weight profiles).

A three-tier cascade, cheapest first:

1. **keyword** — high-precision English patterns on question form and trigger phrases. Commits when
   any rule fires.
2. **prototype** — the query embedding against prototype questions per label; commits only a clear
   winner (θ = 0.55, margin 0.10; PRISM Table 5).
3. **llm** — only when the router is given an LLM (`app.ports.LLM`): the LLM scores every label in
   [0, 1]; the best at ≥ 0.5 wins. Any error falls back to `general`.

The rules, prototypes and weight profiles are in `app.domain.retrieval.intent_rules`; this module
runs the cascade and blends the winner's profile with `general` by its confidence.

Independently of the label, the question's own time expression ("last summer", "in May 2023",
"yesterday", "between March and June", "before 2022") is resolved against a reference time into a
half-open window [start, end) (`None` for an open end) by the calendar the ingest shares
(`app.domain.timeexpr`); the reweighting stage boosts candidates inside it.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import numpy as np

from app.domain.retrieval.intent_rules import (
    LABELS,
    PRIORITY,
    PROTOTYPE_MARGIN,
    PROTOTYPE_THRESHOLD,
    PROTOTYPES,
    Encode,
    PrototypeBank,
    keyword_scores,
    pick,
    profile_weights,
    prototype_decision,
)
from app.domain.timeexpr import Window, in_window, resolve_time_window
from app.ports import LLM

LLM_THRESHOLD = 0.5


@dataclass(frozen=True)
class Intent:
    label: str
    confidence: float
    tier: str  # "keyword" | "prototype" | "llm" | "default"
    weights: dict[str, float]
    time_window: Window | None = None  # half-open [start, end); None for an open end
    time_expression: str | None = None
    labels: frozenset[str] = frozenset()  # every label with evidence (PRISM's h(q) is a set)
    scores: dict[str, float] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()  # the rules / prototype / model answer that decided

    def in_window(self, when: datetime | date | None) -> bool:
        return in_window(when, self.time_window)

    def to_dict(self) -> dict[str, Any]:
        w = None
        if self.time_window is not None:
            w = [d.isoformat() if d else None for d in self.time_window]
        return {
            "label": self.label, "confidence": round(self.confidence, 4), "tier": self.tier,
            "weights": {k: round(v, 4) for k, v in self.weights.items()}, "time_window": w,
            "time_expression": self.time_expression, "labels": sorted(self.labels),
            "scores": {k: round(v, 4) for k, v in self.scores.items()}, "evidence": list(self.evidence),
        }


# ------------------------------------------------------------------ tier 3: LLM

_LLM_SYSTEM = (
    "You classify questions that an assistant asks of its long-term conversation memory. "
    "Reply with one JSON object only, no prose."
)
_LLM_USER = """Score how strongly the question below shows each intent, from 0.0 to 1.0. Several may be high.

- temporal: asks when something happened, for how long, or in what order.
- causal: asks why something happened, its reason, motivation or consequence.
- multi_hop: needs several separate facts combined, or an inference, comparison or count across conversations.
- entity_centric: looks up one stored attribute of a named person, place or thing.
- knowledge_update: asks for the current or latest value of something that may have changed.
- preference: asks what someone likes, prefers, enjoys or would recommend.

A vague continuation ("go on", "tell me more") scores 0.0 everywhere.

Question: {query}

Answer with exactly: {{"temporal": x, "causal": x, "multi_hop": x, "entity_centric": x, "knowledge_update": x, "preference": x}}"""


def llm_scores(query: str, llm: LLM) -> dict[str, float]:
    """Ask the LLM for per-label scores. Raises on any failure (`LLMError`, or a reply without scores)."""
    content = llm.chat([{"role": "system", "content": _LLM_SYSTEM},
                        {"role": "user", "content": _LLM_USER.format(query=query)}])
    m = re.search(r"\{.*\}", content, re.S)
    if not m:
        raise ValueError(f"no JSON object in the LLM reply: {content[:200]!r}")
    raw = json.loads(m.group(0))
    out = {k: min(1.0, max(0.0, float(raw[k]))) for k in LABELS if k != "general" and k in raw}
    if not out:
        raise ValueError(f"no intent scores in the LLM reply: {content[:200]!r}")
    return out


# ------------------------------------------------------------------ the router


class IntentRouter:
    """The three-tier cascade. `encode` (the embedder's) enables tier 2; `llm` enables tier 3."""

    def __init__(self, encode: Encode | None = None, *, llm: LLM | None = None,
                 prototypes: Mapping[str, Sequence[str]] = PROTOTYPES,
                 threshold: float = PROTOTYPE_THRESHOLD, margin: float = PROTOTYPE_MARGIN):
        self.encode = encode
        self.bank = PrototypeBank(encode, prototypes) if encode is not None else None
        self.llm = llm
        self.threshold = threshold
        self.margin = margin

    def route(self, query: str, *, reference_time: datetime | None = None,
              query_vec: np.ndarray | None = None, use_llm: bool = True) -> Intent:
        """Classify `query`. Pass `query_vec` (the dense signal's embedding) to skip re-encoding."""
        tw = resolve_time_window(query, reference_time)
        window, expr = (tw if tw else (None, None))

        kw, fired = keyword_scores(query)
        if window is not None:
            kw["temporal"] = max(kw.get("temporal", 0.0), 0.8)
            fired.append(f"temporal:time-expression({expr})")
        if kw:
            label, conf = pick(kw)
            return self._intent(label, conf, "keyword", kw, fired, window, expr)

        if self.bank is not None:
            qv = query_vec if query_vec is not None else np.asarray(self.encode([query]))[0]  # type: ignore[misc]
            ps, which = self.bank.scores(qv)
            label = prototype_decision(ps, self.threshold, self.margin)
            if label is not None:
                return self._intent(label, ps[label], "prototype", ps, [f"{label}:prototype({which[label]!r})"],
                                    window, expr, labels={label})
            proto_scores = ps
        else:
            proto_scores = {}

        if self.llm is not None and use_llm:
            try:
                ls = llm_scores(query, self.llm)
                label, conf = max(ls.items(), key=lambda kv: (kv[1], -PRIORITY.index(kv[0])))
                hits = frozenset(k for k, v in ls.items() if v >= LLM_THRESHOLD)
                if conf >= LLM_THRESHOLD:
                    return self._intent(label, conf, "llm", ls, [f"{label}:llm({self.llm.model})"], window, expr,
                                        labels=hits)
                return self._intent("general", 1.0 - conf, "llm", ls, ["general:llm-no-intent"], window, expr,
                                    labels=frozenset())
            except Exception as exc:  # noqa: BLE001 - any failure falls back to the safe default
                return self._intent("general", 0.0, "default", proto_scores,
                                    [f"llm-error:{type(exc).__name__}: {str(exc)[:120]}"], window, expr,
                                    labels=frozenset())
        return self._intent("general", 0.0, "default", proto_scores, [], window, expr, labels=frozenset())

    @staticmethod
    def _intent(label: str, conf: float, tier: str, scores: Mapping[str, float], evidence: Sequence[str],
                window: Window | None, expr: str | None, labels: frozenset[str] | None = None) -> Intent:
        if labels is None:
            labels = frozenset(k for k, v in scores.items() if v >= 0.75)
        labels = frozenset(labels) | ({label} if label != "general" else frozenset())
        conf = float(min(1.0, max(0.0, conf)))
        return Intent(label=label, confidence=conf, tier=tier,
                      weights=profile_weights(label, conf if label != "general" else 1.0),
                      time_window=window, time_expression=expr, labels=labels,
                      scores={k: float(v) for k, v in scores.items()}, evidence=tuple(evidence))


_ROUTERS: dict[Any, IntentRouter] = {}
_ROUTERS_LOCK = threading.Lock()


def get_router(encode: Encode | None = None, llm: LLM | None = None) -> IntentRouter:
    """A router per (encoder, LLM), cached so the prototype bank is embedded once per process."""
    key = (id(getattr(encode, "__self__", encode)), getattr(encode, "__name__", None), llm)
    with _ROUTERS_LOCK:
        r = _ROUTERS.get(key)
        if r is None:
            r = _ROUTERS[key] = IntentRouter(encode, llm=llm)
        return r


def classify_intent(query: str, *, encode: Encode | None = None, reference_time: datetime | None = None,
                    query_vec: np.ndarray | None = None, llm: LLM | None = None) -> Intent:
    """One-call form of `IntentRouter.route` with a cached router."""
    return get_router(encode, llm).route(query, reference_time=reference_time, query_vec=query_vec)

