"""What an incremental graph run keeps besides the fact fold (app.domain.layers.graph_fold): the
entity names' vectors, encoded once per name (a batch stores the ones it encoded: `to_dict(start)`).

Vectors are kept as float16 (both in a full build and in an extension, so the cosine merge sees the
same numbers either way).
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

Encode = Callable[[list[str]], np.ndarray]


@dataclass
class NameVectors:
    """`encode` with a memory: names already encoded are not encoded again."""

    encode: Encode | None
    cache: dict[str, np.ndarray] = field(default_factory=dict)
    encoded: int = 0  # names encoded by this object

    def __call__(self, keys: list[str]) -> np.ndarray:
        missing = [k for k in dict.fromkeys(keys) if k not in self.cache]
        if missing and self.encode is not None:
            vecs = np.asarray(self.encode(missing), dtype=np.float32).astype(np.float16)
            self.cache.update(zip(missing, vecs))
            self.encoded += len(missing)
        return np.vstack([self.cache[k].astype(np.float32) for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def to_dict(self, start: int = 0) -> dict:
        """The vectors as JSON data, from the `start`-th name encoded on."""
        keys = list(self.cache)[start:]
        mat = np.vstack([self.cache[k] for k in keys]).astype("<f2") if keys else np.zeros((0, 0), "<f2")
        return {"keys": keys, "dim": int(mat.shape[1]) if keys else 0,
                "vecs": base64.b64encode(mat.tobytes()).decode("ascii")}

    @classmethod
    def from_dict(cls, d: dict, encode: Encode | None) -> "NameVectors":
        return cls.from_dicts([d], encode)

    @classmethod
    def from_dicts(cls, ds: list[dict], encode: Encode | None) -> "NameVectors":
        """The vectors of `to_dict` parts, in order."""
        cache: dict[str, np.ndarray] = {}
        for d in ds:
            keys, dim = d["keys"], d["dim"]
            mat = np.frombuffer(base64.b64decode(d["vecs"]), dtype="<f2").reshape(len(keys), dim) if keys else []
            cache.update({k: np.asarray(mat[i], dtype=np.float16) for i, k in enumerate(keys)})
        return cls(encode, cache)
