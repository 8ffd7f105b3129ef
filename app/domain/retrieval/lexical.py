"""BM25 over the term frequencies full-text search hands back (the lexical signal's scoring, pure).

PostgreSQL finds the events that share any stemmed term with the question (GIN index) and hands
back how often each query term occurs in each and their lengths (`app.storage.candidates`); BM25
(k1 = 1.2, b = 0.75) then weighs each shared term by how rare it is in the scope, which
`ts_rank_cd` alone cannot do: "Denver" should count for more than "went". `finding_terms` picks
which terms may find candidates in a large scope.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

K1, B = 1.2, 0.75


def bm25(
    terms: Sequence[str], docs: Sequence[tuple[int, dict[str, int]]], n_docs: int, avgdl: float,
    lengths: Mapping[int, int] | None = None, df_floor: Mapping[str, float] | None = None,
) -> list[tuple[int, float]]:
    """BM25 of each doc for the query terms; document frequencies come from `docs`, which must hold
    every document of the scope that contains any term (the SQL match guarantees it). A doc's
    length is `lengths[pk]` when given (its tf may list only the query's terms), else len(tf).
    `df_floor`: a term's document frequency is at least this (what the statistics know of a term
    that only scored: it was counted among the documents the other terms found)."""
    floor = df_floor or {}
    df = {t: max(sum(1 for _, tf in docs if t in tf), floor.get(t, 0.0)) for t in terms}
    n = max(n_docs, len(docs), 1)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    avgdl = avgdl or 1.0
    scored = []
    for pk, tf in docs:
        dl = lengths.get(pk, len(tf)) if lengths is not None else len(tf)
        s = 0.0
        for t in terms:
            f = tf.get(t, 0)
            if f:
                s += idf[t] * f * (K1 + 1) / (f + K1 * (1 - B + B * dl / avgdl))
        scored.append((pk, s))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored


def finding_terms(terms: Sequence[str], shares: Mapping[str, float], max_share: float,
                  n_docs: int = 0, budget: float | None = None) -> list[str]:
    """The terms used to find candidates: those held by at most `max_share` of the events (a term in
    every tenth event cannot single out evidence, and enumerating its events is what grows with the
    tenant), and of those, rarest first, only as many as are expected to match at most `budget`
    events together (share × `n_docs` each; a term the statistics do not list is rarer than any
    they do, and always finds). All of them still count in BM25 for the events found. If every term
    is that common, the rarest one still finds.

    The budget is what keeps a tenant of a million events cheap: a question with three words each in
    0.5% of the events would otherwise rank 15,000 events to keep 2,000, and the rarest word is the
    one that singles out the evidence (BM25 weighs it most)."""
    ranked = sorted(terms, key=lambda t: (shares.get(t, 0.0), t))
    out: list[str] = []
    expected = 0.0
    for t in ranked:
        share = shares.get(t, 0.0)
        rows = share * n_docs
        if share > max_share or (budget is not None and out and expected + rows > budget):
            break  # every later term is at least as common
        out.append(t)
        expected += rows
    return sorted(out) or ranked[:1]
