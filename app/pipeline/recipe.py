"""The search recipe: which stages run and with what weights (Graphiti-style named configuration).

Defaults come from the settings; a request may override any field (`"pipeline": {...}`), which
is how the benchmark ablates a stage.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from app.settings import Settings


@dataclass(frozen=True)
class Recipe:
    lexical: bool = True
    dense: bool = True
    lexical_weight: float = 1.0
    dense_weight: float = 1.0
    rrf_k: int = 60
    candidate_pool: int = 100

    @classmethod
    def from_settings(cls, s: Settings) -> "Recipe":
        return cls(
            lexical=s.lexical_enabled,
            dense=s.dense_enabled,
            lexical_weight=s.lexical_weight,
            dense_weight=s.dense_weight,
            rrf_k=s.rrf_k,
            candidate_pool=s.candidate_pool,
        )

    def with_overrides(self, overrides: dict[str, Any] | None) -> "Recipe":
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in overrides.items() if k in known and v is not None})

    def weights(self) -> dict[str, float]:
        return {"lexical": self.lexical_weight, "dense": self.dense_weight}
