"""What an incremental graph run keeps besides the fact fold (app.domain.layers.graph_fold): the
entity names' vectors (encoded once per name), and a checksum per stored row (node, edge group,
event signal), so a batch writes only the rows whose content changed.

Vectors are kept as float16 (both in a full build and in an extension, so the cosine merge sees the
same numbers either way).
"""
from __future__ import annotations

import base64
import zlib
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

    def to_dict(self) -> dict:
        keys = list(self.cache)
        mat = np.vstack([self.cache[k] for k in keys]).astype("<f2") if keys else np.zeros((0, 0), "<f2")
        return {"keys": keys, "dim": int(mat.shape[1]) if keys else 0,
                "vecs": base64.b64encode(mat.tobytes()).decode("ascii")}

    @classmethod
    def from_dict(cls, d: dict, encode: Encode | None) -> "NameVectors":
        keys, dim = d["keys"], d["dim"]
        mat = np.frombuffer(base64.b64decode(d["vecs"]), dtype="<f2").reshape(len(keys), dim) if keys else []
        return cls(encode, {k: np.asarray(mat[i], dtype=np.float16) for i, k in enumerate(keys)})


def _crc(obj: object) -> int:
    """A checksum of a row: its repr (rows are built with their keys in one order, so equal rows
    have equal reprs)."""
    return zlib.crc32(repr(obj).encode("utf-8"))


def edge_key(e: dict) -> str:
    return f"{e['src']}\x1f{e['dst']}\x1f{e['type']}"


def row_hashes(nodes: list[dict], edges: list[dict], signals: list[dict]) -> dict:
    """Checksums: per node key, per (src, dst, type) edge group, per event's signals."""
    groups: dict[str, list[dict]] = {}
    for e in edges:
        groups.setdefault(edge_key(e), []).append(e)
    return {"n": {n["key"]: _crc(n) for n in nodes}, "e": {k: _crc(g) for k, g in groups.items()},
            "s": {str(s["event_pk"]): _crc(s) for s in signals}}


@dataclass
class Diff:
    node_keys: list[str]  # to delete (changed or gone)
    nodes: list[dict]  # to insert
    edge_triples: list[tuple[str, str, str]]  # (src, dst, type) groups to delete
    edges: list[dict]  # to insert
    signals: list[dict]  # to upsert


def changed_rows(old: dict, new: dict, nodes: list[dict], edges: list[dict], signals: list[dict]) -> Diff:
    """The rows of `nodes`/`edges`/`signals` (checksums `new`) that differ from the stored ones (`old`)."""
    on, nn = old["n"], new["n"]
    node_keys = [k for k in on if nn.get(k) != on[k]] + [k for k in nn if k not in on]
    changed_n = {k for k in nn if on.get(k) != nn[k]}
    oe, ne = old["e"], new["e"]
    triples = [k for k in oe if ne.get(k) != oe[k]] + [k for k in ne if k not in oe]
    changed_e = {k for k in ne if oe.get(k) != ne[k]}
    os_, ns = old["s"], new["s"]
    return Diff(node_keys, [n for n in nodes if n["key"] in changed_n],
                [tuple(k.split("\x1f")) for k in triples],  # type: ignore[misc]
                [e for e in edges if edge_key(e) in changed_e],
                [s for s in signals if os_.get(str(s["event_pk"])) != ns[str(s["event_pk"])]])
