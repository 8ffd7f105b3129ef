"""The search recipe: which stages run and with what weights (Graphiti-style named configuration).

Defaults come from the settings; a request may override any field (`"pipeline": {...}`), which
is how the benchmark ablates a stage.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from app.settings import Settings


@dataclass(frozen=True)
class Recipe:
    lexical: bool = True
    dense: bool = True
    derived: bool = False  # full-text over resolved dates and entity names (the layers' search_extra); off: measured worse
    graph: bool = True  # Personalized PageRank over the entity graph from the question's entities
    bundle: bool = True  # with the graph: PRISM typed-path bundle search from the dense hits
    expansion: bool = False  # the question restated (HyDE with an LLM, else feedback); off: measured worse
    separation: bool = True  # per-speaker list, only in conversations with more than five speakers
    lexical_weight: float = 1.0
    dense_weight: float = 1.0
    rrf_k: int = 60
    candidate_pool: int = 100
    window: bool = True  # a signal of events said in (or about) the time window the question names
    window_max_days: int = 92  # wider windows ("before 2022") only reweight, they do not retrieve
    recency: bool = True  # newest-first list of the candidates, for intents whose profile weighs recency
    intent: bool = True  # route the question (rules, prototypes, LLM when configured)
    intent_weights: bool = True  # fuse with the intent's weight profile instead of the fixed weights
    reweight: bool = True  # True Memory eq. 4: time window, speaker, surprise, knowledge update, salience
    asker: bool = True  # with reweight: a first-person question doubles the user's own turns (events with roles)
    reweight_depth: int = 100  # how much of the fused list is reweighted (the rest keeps its order below)
    salience_floor: float | None = None  # drop candidates the gate scored below this (None = keep all)
    rerank: bool = True  # cross-encoder over the top N (only when a reranker model is installed)
    rerank_top_n: int = 20  # 20 pairs: same held-out r@10 as 50 (0.686), p95 190 ms vs 531 ms (int8, CPU)
    rerank_alpha: float = 0.55
    neighbours: int = 1  # turns on each side of the strongest evidence added to the context
    neighbour_of: int = 5  # around how many of the best candidates
    summaries: bool = True  # episode summaries stand in for direct evidence that does not fit
    notice: bool = True  # end the context with a note of what was left out
    abstain_dense_floor: float = 0.31  # abstain when the best dense cosine is below (no reranker ran)
    abstain_rerank_floor: float = 0.52  # abstain when the best cross-encoder probability is below

    @classmethod
    def from_settings(cls, s: Settings) -> "Recipe":
        return cls(
            lexical=s.lexical_enabled,
            dense=s.dense_enabled,
            derived=s.derived_enabled,
            graph=s.graph_enabled,
            bundle=s.bundle_enabled,
            expansion=s.expansion_enabled,
            separation=s.separation_enabled,
            window=s.window_enabled,
            window_max_days=s.window_max_days,
            recency=s.recency_enabled,
            lexical_weight=s.lexical_weight,
            dense_weight=s.dense_weight,
            rrf_k=s.rrf_k,
            candidate_pool=s.candidate_pool,
            intent=s.intent_enabled,
            intent_weights=s.intent_weights_enabled,
            reweight=s.reweight_enabled,
            asker=s.asker_enabled,
            reweight_depth=s.reweight_depth,
            salience_floor=s.salience_floor,
            rerank=s.rerank_enabled,
            rerank_top_n=s.rerank_top_n,
            rerank_alpha=s.rerank_alpha,
            neighbours=s.context_neighbours,
            neighbour_of=s.context_neighbour_of,
            summaries=s.context_summaries,
            abstain_dense_floor=s.abstain_dense_floor,
            abstain_rerank_floor=s.abstain_rerank_floor,
        )

    def with_overrides(self, overrides: dict[str, Any] | None) -> "Recipe":
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in overrides.items() if k in known and v is not None})

    def describe(self) -> dict[str, Any]:
        """The recipe as run, echoed in the response so a result can be reproduced."""
        return asdict(self)

    def weights(self) -> dict[str, float]:
        return {"lexical": self.lexical_weight, "dense": self.dense_weight}
