"""Stage 8: weighted reciprocal rank fusion (True Memory eq. 3, Cortex §3.4), and the order a later stage leaves.

score(d) = Σ_s w_s / (k + rank_s(d)), ranks starting at 1. Rank-based fusion needs no score
calibration between signals whose raw scores live on different scales.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence


def weighted_rrf(
    rankings: Mapping[str, Sequence[int]], weights: Mapping[str, float] | None = None, k: int = 60
) -> list[tuple[int, float]]:
    """Fuse ranked id lists into [(id, fused score)] best first; ties break by smaller id."""
    fused: dict[int, float] = {}
    for signal, ranked in rankings.items():
        w = 1.0 if weights is None else weights.get(signal, 1.0)
        if w == 0:
            continue
        for rank, doc in enumerate(ranked, start=1):
            fused[doc] = fused.get(doc, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def first_occurrences(hits: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """A ranked list with each event once, at its best rank. RRF sums over positions, so an event
    listed twice (several graph nodes of one event) would be counted twice."""
    seen: set[int] = set()
    out = []
    for pk, score in hits:
        if pk not in seen:
            seen.add(pk)
            out.append((pk, score))
    return out


def settle_order(moved: list, ranked: Sequence, depth: int, placed: set[int]) -> list:
    """After a stage moved items of `ranked`'s first `depth` into `moved` (bringing others up beside
    them, `placed` holding the event ids placed): the rest of `ranked` below in its order, and scores
    lowered where needed so that they read in rank order. Items have `.event.id` and `.score`."""
    out = moved + [r for r in ranked[depth:] if r.event.id not in placed]
    for prev, item in zip(out, out[1:]):
        item.score = min(item.score, prev.score)
    return out
