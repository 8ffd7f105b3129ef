"""The cross-encoder behind the rerank stage (True Memory Stage 10, Cortex §3.3 Stage 4).

Loads any sentence-transformers `CrossEncoder` from a local directory; nothing is fetched from a hub,
and a missing or malformed directory fails loudly at load time rather than at the first query.
Which model (`default_reranker_path`): the one the settings name (`PALIMPSEST_RERANKER_MODEL_PATH`),
else `<var_dir>/models/reranker-minilm`, where `palimpsest train-reranker` writes one. No
cross-encoder ships (no package we install carries one, and the one trained here did not earn its
place on validation: docs/models.md).
"""
from __future__ import annotations

import os
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_SUBDIR = Path("models") / "reranker-minilm"


class RerankerUnavailable(RuntimeError):
    """The configured cross-encoder directory is missing or is not a cross-encoder."""


class Reranker:
    """A local cross-encoder: `score(query, passages)` -> one raw relevance logit per passage."""

    def __init__(self, model_path: str | os.PathLike[str], max_length: int = 256, batch_size: int = 8,
                 threads: int = 0, quantize: bool = False):
        path = Path(model_path)
        if not path.is_dir() or not (path / "config.json").exists():
            raise RerankerUnavailable(
                f"no cross-encoder at {str(path)!r} (expected a directory with config.json; "
                "train one with `palimpsest train-reranker` or point the reranker model path setting at one)"
            )
        if threads:
            import torch

            torch.set_num_threads(threads)
        import torch
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(str(path), device="cpu", local_files_only=True, max_length=max_length,
                                       activation_fn=torch.nn.Identity())
        except Exception as exc:  # noqa: BLE001 - re-raised with the path in the message
            raise RerankerUnavailable(f"cannot load a cross-encoder from {str(path)!r}: {exc}") from exc
        if self._model.num_labels != 1:
            raise RerankerUnavailable(f"{str(path)!r} has {self._model.num_labels} labels; a reranker needs 1")
        self.quantized = False
        if quantize:
            self.quantized = _quantize_int8(self._model)
        self.path = str(path)
        self.name = path.name
        self.max_length = max_length
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self.last_latency_ms = 0.0

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Raw logits (higher = more relevant), float32, one per passage; sigmoid gives a probability.

        Pairs go through in batches of `batch_size`, shortest first: a batch is padded to its longest
        pair, so one long turn among twenty short ones would make all of them pay for its length.
        Batches of 8 scored 20 LoCoMo turns in 0.65x the time of one batch (BEAM's long turns 0.85x),
        equally close to the fp32 model (`python -m bench.rerank_batching`, bench/results/)."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        t0 = time.perf_counter()
        order = sorted(range(len(passages)), key=lambda i: len(passages[i]))
        with self._lock:  # torch already uses every core; concurrent calls only thrash
            out = self._model.predict(
                [(query, passages[i]) for i in order],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        scores = np.empty(len(passages), dtype=np.float32)
        scores[order] = np.asarray(out, dtype=np.float32).reshape(-1)
        self.last_latency_ms = (time.perf_counter() - t0) * 1000.0
        return scores

    __call__ = score


def _quantize_int8(ce) -> bool:
    """Dynamic int8 quantisation of the transformer's Linear layers (about 1.7x faster on a 2-core
    AVX-512 CPU, scores within ~1e-2). Returns False (and leaves fp32) where the backend lacks it."""
    import warnings

    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.ao.quantization.quantize_dynamic(ce.model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
        return True
    except Exception:  # noqa: BLE001 - an optional speed-up; fp32 still works
        return False


def sigmoid(x: np.ndarray | Sequence[float]) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


@lru_cache(maxsize=4)
def load_reranker(model_path: str, max_length: int = 256, batch_size: int = 8, threads: int = 0,
                  quantize: bool = True) -> Reranker:
    return Reranker(model_path, max_length, batch_size, threads, quantize)


def default_reranker_path() -> str:
    """The reranker directory the settings name (`reranker_model_path`: used as given, even when it is
    missing, which turns the stage off), else `<var_dir>/models/reranker-minilm`, where `palimpsest
    train-reranker` puts one. No cross-encoder ships with the package (docs/models.md)."""
    from app.settings import get_settings

    s = get_settings()
    configured = getattr(s, "reranker_model_path", None) or os.environ.get("PALIMPSEST_RERANKER_MODEL_PATH")
    if configured:
        return str(configured)
    return str(Path(s.var_dir) / DEFAULT_SUBDIR)


def get_reranker(model_path: str | None = None) -> Reranker:
    """The process-wide reranker (loaded once). Raises `RerankerUnavailable` when it is not there."""
    from app.settings import get_settings

    s = get_settings()
    return load_reranker(model_path or default_reranker_path(), s.reranker_max_length, s.reranker_batch_size,
                         s.torch_threads, s.reranker_quantize)
