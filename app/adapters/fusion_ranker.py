"""The learned fusion's model (issue #17 item 4): one JSON file shipped in the package
(`app/adapters/fusion_model/fusion.json`), written by `python -m training.fusion`.

The file says what it is: `kind` ("lightgbm": a LightGBM text model under `model`; "logistic":
standardisation and coefficients), `features` (the column order, which must equal
`app.domain.retrieval.features.FEATURES`), `trained_on` (the train-split conversation ids),
`trained_at` and the validation metrics it was chosen by. `score(rows)` gives one score per
candidate, higher first; `contributions(rows)` the per-feature share of each score (LightGBM's
SHAP values, or coefficient × standardised value), plus the bias in the last column.
"""
from __future__ import annotations

import json
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from app.domain.retrieval.features import FEATURES

MODEL_FILE = Path(__file__).with_name("fusion_model") / "fusion.json"


class FusionModelUnavailable(RuntimeError):
    """No model file, or one for another feature list."""


class FusionRanker:
    def __init__(self, doc: dict[str, Any]):
        self.kind = doc["kind"]
        self.features: tuple[str, ...] = tuple(doc["features"])
        self.meta = {k: v for k, v in doc.items() if k != "model"}
        if self.features != FEATURES:
            missing = sorted(set(FEATURES) ^ set(self.features))
            raise FusionModelUnavailable(f"the fusion model's features differ from the query's: {missing[:5]}")
        model = doc["model"]
        self._lock = threading.Lock()  # a LightGBM booster is not safe to predict from several threads at once
        if self.kind == "lightgbm":
            import lightgbm as lgb

            self._booster = lgb.Booster(model_str=model)
        elif self.kind == "logistic":
            self._mean = np.asarray(model["mean"], dtype=np.float64)
            self._scale = np.asarray(model["scale"], dtype=np.float64)
            self._coef = np.asarray(model["coef"], dtype=np.float64)
            self._intercept = float(model["intercept"])
        else:
            raise FusionModelUnavailable(f"unknown fusion model kind {self.kind!r}")

    @classmethod
    def load(cls, path: Path | str = MODEL_FILE) -> "FusionRanker":
        p = Path(path)
        if not p.is_file():
            raise FusionModelUnavailable(f"no fusion model at {str(p)!r} (python -m training.fusion writes one)")
        return cls(json.loads(p.read_text()))

    def score(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) == 0:
            return np.zeros(0)
        if self.kind == "lightgbm":
            with self._lock:
                return np.asarray(self._booster.predict(rows, num_threads=1), dtype=np.float64)
        return ((rows - self._mean) / self._scale) @ self._coef + self._intercept

    def contributions(self, rows: np.ndarray) -> np.ndarray:
        """(rows, features + 1): each feature's share of the score, the bias last."""
        if self.kind == "lightgbm":
            with self._lock:
                return np.asarray(self._booster.predict(rows, pred_contrib=True, num_threads=1), dtype=np.float64)
        z = ((rows - self._mean) / self._scale) * self._coef
        return np.hstack([z, np.full((len(rows), 1), self._intercept)])


@lru_cache(maxsize=1)
def get_fusion_ranker() -> FusionRanker:
    return FusionRanker.load(MODEL_FILE)


def installed_fusion_ranker() -> FusionRanker | None:
    """The shipped model, or None when it is missing or stale (the query then keeps weighted RRF)."""
    try:
        return get_fusion_ranker()
    except (FusionModelUnavailable, OSError, ValueError, ImportError):
        return None
