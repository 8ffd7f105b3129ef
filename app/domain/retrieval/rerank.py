"""Stage 10: cross-encoder reranking of the top N, blended with the fused score.

For the top `top_n` candidates (default 50) of the reweighted fused list:

    final(d) = α · ce_norm(d) + (1 − α) · fused_norm(d),   α = 0.55 (Cortex §6.4.1)

`ce_norm` and `fused_norm` are min-max normalised to [0, 1] over those candidates, so neither scale
dominates by accident. Candidates past `top_n` keep their fused order below every reranked one. The
stage is pure: it takes a scoring function `(query, texts) -> logits` (the cross-encoder,
`app.adapters.reranker.Reranker.score`, or anything else) and returns data. `max_relevance` (the best
cross-encoder probability) is what the abstain floor reads when the stage ran
(`app.domain.retrieval.abstain`).

Removed (issue #17 item 10, read by nobody): True Memory's modality factor (summaries ×0.7 / ×1.2;
only events are ever reranked, so it was always 1) and Cortex's sufficient-context gate (τ = 0.15;
nothing called it: the abstain decision is `app.domain.retrieval.abstain`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

ALPHA = 0.55
TOP_N = 50

ScoreFn = Callable[[str, Sequence[str]], Sequence[float]]


@dataclass(frozen=True)
class RerankCandidate:
    id: Hashable
    text: str  # what the cross-encoder reads (for an event, `app.domain.event.turn_text`)
    fused: float  # the running score from fusion / reweighting


@dataclass
class RerankResult:
    id: Hashable
    score: float  # final score (reranked ones in [0, 1]; the rest below 0, in fused order)
    rank_before: int  # 1-based rank in the input
    rank_after: int = 0
    reranked: bool = False
    fused: float = 0.0
    fused_norm: float | None = None
    ce: float | None = None  # raw cross-encoder logit
    ce_prob: float | None = None  # sigmoid(ce)
    ce_norm: float | None = None

    def explain(self) -> dict[str, Any]:
        """What the API shows for this stage: how the item moved and why."""
        out: dict[str, Any] = {"rank_before": self.rank_before, "rank_after": self.rank_after,
                               "reranked": self.reranked}
        if self.reranked:
            out.update(ce=round(float(self.ce), 4), ce_prob=round(float(self.ce_prob), 4),
                       ce_norm=round(float(self.ce_norm), 4), fused_norm=round(float(self.fused_norm), 4),
                       score=round(self.score, 4))
        return out


def minmax(values: Sequence[float]) -> list[float]:
    """Min-max normalise to [0, 1]; a constant list maps to all 1.0 (no information, no penalty)."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [1.0] * len(values)
    return [(v - lo) / (hi - lo) for v in values]


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def rerank(
    query: str,
    candidates: Sequence[RerankCandidate],
    score_fn: ScoreFn,
    *,
    top_n: int = TOP_N,
    alpha: float = ALPHA,
) -> list[RerankResult]:
    """Rerank the first `top_n` candidates (in the given order) and return all of them, best first.

    `alpha` = 1 is the cross-encoder alone, 0 the fused order alone. Ties keep the input order.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    head = list(candidates[: max(0, top_n)])
    tail = list(candidates[max(0, top_n):])
    results: list[RerankResult] = []
    if head:
        raw = [float(s) for s in score_fn(query, [c.text for c in head])]
        if len(raw) != len(head):
            raise ValueError(f"score_fn returned {len(raw)} scores for {len(head)} passages")
        ce_n = minmax(raw)
        fu_n = minmax([c.fused for c in head])
        for i, c in enumerate(head):
            results.append(RerankResult(
                id=c.id, score=alpha * ce_n[i] + (1.0 - alpha) * fu_n[i], rank_before=i + 1,
                reranked=True, fused=c.fused, fused_norm=fu_n[i], ce=raw[i], ce_prob=_sigmoid(raw[i]),
                ce_norm=ce_n[i],
            ))
        results.sort(key=lambda r: (-r.score, r.rank_before))
    # The rest keep their fused order, strictly below every reranked item.
    for j, c in enumerate(tail):
        results.append(RerankResult(id=c.id, score=-1.0 - j, rank_before=len(head) + j + 1, fused=c.fused))
    for r, res in enumerate(results, start=1):
        res.rank_after = r
    return results


def max_relevance(results: Sequence[RerankResult]) -> float | None:
    """The best cross-encoder probability among the reranked items (None when nothing was reranked)."""
    probs = [r.ce_prob for r in results if r.ce_prob is not None]
    return max(probs) if probs else None
