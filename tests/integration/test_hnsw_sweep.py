"""Issue 8's HNSW sweep measures recall and latency on a small table in the test database."""
from __future__ import annotations

import numpy as np

def test_hnsw_sweep_runs_on_a_small_table(database_url, tmp_path):
    from bench import hnsw_sweep

    rng = np.random.default_rng(0)
    base = rng.standard_normal((300, hnsw_sweep.DIM)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    queries = base[:20] + 0.1 * rng.standard_normal((20, hnsw_sweep.DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    desc = {"locomo_turns": 300, "beam_turns": 0, "questions": 20, "embedder": "random"}
    dsn = database_url.replace("postgresql+psycopg://", "postgresql://")
    res = hnsw_sweep.main(["--n", "3000", "--queries", "20", "--conv-size", "1000", "--m", "8",
                           "--ef-construction", "32", "--ef-search", "20,200", "--dsn", dsn,
                           "--out-dir", str(tmp_path)], vectors=(base, queries, desc))
    assert len(res["rows"]) == 2 and len(res["builds"]) == 1
    by_ef = {r["ef_search"]: r for r in res["rows"]}
    assert by_ef[200]["k10_recall@10"] >= 0.9 and by_ef[200]["pool_recall@10"] >= by_ef[20]["pool_recall@10"] - 0.05
    filtered = {f["conversation"]: f for f in res["conversation_filtered"]}
    assert filtered["c0"]["recall@10"] >= 0.8 and filtered["c0"]["rows"] < 1000
    assert "| 8 | 32 |" in next(tmp_path.glob("hnsw-sweep-*.md")).read_text()
