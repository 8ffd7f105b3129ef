"""Precomputed vectors of the scale corpus, so a tenant of a million events can be seeded in bounded time.

    .venv/bin/python -m bench.scale_vectors --events 990000 --device cuda   # a GPU: minutes
    .venv/bin/python -m bench.scale_vectors --events 90000                  # two CPU cores: ~40 min

The scale benchmark pushes every event through the API and the embedder. On two CPU cores the
embedder indexes 35-40 events/s, so 1M events would take 7-8 hours: that is the embedder's cost
(60M word pieces through a 6-layer transformer), and it is linear in the events, so the step from
10k to 1M adds nothing to learn about it. What does grow with the tenant (the HNSW graph, the GIN
index, the lexical statistics, the planner's choices) needs the million rows to be there. This module
computes the vectors of the corpus' first N events once, with the service's own embedder
(`app.adapters.embedder.Embedder`, the same weights and the text the embed task encodes), on any
device; `palimpsest bench scale --vectors DIR` then COPYs those events and vectors into the tenant
and POSTs only the last events of each step through the API (bench/scale.py).

Output, under `--out` (default `var/bench/scale-vectors`), in a folder named by seed and size:
- `vectors.f16`: N x dim float16, row i = stream position i (float16 keeps 11 bits: cosine to the
  float32 vector ~1 - 1e-7, far below what changes a ranking at these scores);
- `hashes.u64`: blake2b-64 of each row's text, checked row by row when seeding, so a corpus that
  differs (another seed, changed generator, another Python's random) fails instead of mismatching;
- `meta.json`: seed, events, model, dim, device, seconds, texts/s.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.domain.event import turn_text
from bench.scale_data import Corpus, SourcePool

CHUNK = 50_000  # texts per encode call: bounded memory, progress in the log


def text_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def folder(out: Path, seed: int, events: int) -> Path:
    return out / f"seed{seed}-n{events}"


def corpus_texts(corpus: Corpus, start: int, stop: int) -> Iterator[str]:
    for ev, _ in corpus.events(start, stop):
        yield turn_text(ev["speaker"], ev["content"])  # what the embed task encodes


class SeedVectors:
    """A computed folder, read-only: rows by stream position, each checked against its text."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.meta: dict[str, Any] = json.loads((self.path / "meta.json").read_text())
        n, dim = self.meta["events"], self.meta["dim"]
        self.vectors = np.memmap(self.path / "vectors.f16", dtype=np.float16, mode="r", shape=(n, dim))
        self.hashes = np.fromfile(self.path / "hashes.u64", dtype="<u8")
        if len(self.hashes) != n:
            raise ValueError(f"{self.path}: {len(self.hashes)} hashes for {n} events")

    @property
    def events(self) -> int:
        return int(self.meta["events"])

    def row(self, pos: int, text: str) -> np.ndarray:
        if int(self.hashes[pos]) != text_hash(text):
            raise ValueError(f"{self.path}: the text of stream position {pos} differs from the one its vector "
                             "was computed for (another seed or generator): recompute with bench.scale_vectors")
        return np.asarray(self.vectors[pos], dtype=np.float32)


def compute(corpus: Corpus, events: int, embedder, out_dir: Path, log=print) -> Path:
    """Encode the first `events` texts of the corpus and write the folder (atomically: a partial
    run leaves no `meta.json`, so it is never read as complete)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "meta.json").unlink(missing_ok=True)
    t0 = time.perf_counter()
    done = 0
    with open(out_dir / "vectors.f16", "wb") as vf, open(out_dir / "hashes.u64", "wb") as hf:
        texts = corpus_texts(corpus, 0, events)
        while done < events:
            chunk = [t for _, t in zip(range(min(CHUNK, events - done)), texts)]
            vf.write(np.asarray(embedder.encode(chunk), dtype=np.float16).tobytes())
            hf.write(np.asarray([text_hash(t) for t in chunk], dtype="<u8").tobytes())
            done += len(chunk)
            log(f"{done:,} / {events:,} vectors ({done / (time.perf_counter() - t0):.0f} texts/s)")
    seconds = time.perf_counter() - t0
    meta = {"seed": corpus.seed, "events": events, "assistant_share": corpus.assistant_share,
            "model": embedder.name, "dim": embedder.dim, "dtype": "float16",
            "device": getattr(embedder, "device", "cpu"), "batch_size": embedder.batch_size,
            "seconds": round(seconds, 1), "texts_per_s": round(events / seconds, 1)}
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=1))
    return out_dir


def main(argv: Sequence[str] | None = None) -> int:
    import os

    from app.adapters.embedder import Embedder  # no settings, no database: runs on a bare GPU machine

    repo = Path(__file__).resolve().parents[1]
    data_dir = Path(os.environ.get("PALIMPSEST_BENCH_DATA") or repo.parent / "shared" / "data")

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, required=True, help="vectors of stream positions [0, events)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--assistant-share", type=float, default=0.2)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, ...")
    ap.add_argument("--batch-size", type=int, default=0, help="default: 256 on a GPU, the service's 16 on a CPU")
    ap.add_argument("--model-path", default=None, help="default: the service's embedding_model_path")
    ap.add_argument("--model-name", default="all-MiniLM-L6-v2")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=repo / "var" / "bench" / "scale-vectors")
    a = ap.parse_args(argv)
    if a.model_path is None:
        from app.settings import get_settings

        a.model_path = get_settings().embedding_model_path
    batch = a.batch_size or (16 if a.device == "cpu" else 256)
    embedder = Embedder(a.model_path, a.model_name, batch_size=batch, device=a.device)
    corpus = Corpus(SourcePool.load(a.data_dir or data_dir), a.seed, assistant_share=a.assistant_share)
    path = compute(corpus, a.events, embedder, folder(a.out, a.seed, a.events),
                   log=lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True))
    print(json.dumps({"folder": str(path), **json.loads((path / "meta.json").read_text())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
