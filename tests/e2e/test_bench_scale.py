"""The scale benchmark through the real service: a point with every event posted and a seeded point (API +
Celery worker processes), and the requery tool on the database a tiny run left behind. All read the shared
LoCoMo data; the generator's own tests are in tests/unit/test_bench_scale.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_bench_scale import _vectors, pool  # noqa: F401  (pool is a fixture)


@pytest.mark.slow
@pytest.mark.needs_shared_data("locomo")
@pytest.mark.timeout(1200)  # ~1 min on an idle 2-core machine; embedding is most of it, and shared machines are slower
def test_a_posted_point_end_to_end(tmp_path, database_url, redis_url):
    """A point of `make bench-scale`'s kind (every event posted through the real API and embedded by the
    worker), at 3,000 events instead of its 10,000: the same code end to end (three POSTs of 1,000 in
    flight at once, the embed wait, queries, memory, the report), a third of the embedding. Kept light:
    short turns only, few queries, a small raw-embedder sample."""
    from bench.scale import ScaleOptions, run
    from tests.support import own_queue

    opts = ScaleOptions(sizes=(3_000,), queries=20, raw_sample=128, assistant_share=0.0, out_dir=tmp_path / "out",
                        var_dir=tmp_path / "var", reranker=tmp_path / "no-reranker", database_url=database_url,
                        redis_url=redis_url, queue=own_queue(), stall_s=300)
    result, paths = run(opts, log=lambda m: None)
    point = result["points"][0]
    assert point["created"] == 3_000 and point["db"]["events_in_db"] >= 3_000
    q = point["queries"]
    assert q["pairs"] == 20 and q["tenant+rerank"] is None  # no cross-encoder: n/a
    assert q["tenant"]["recall_at_10"] >= 0.8 and q["conversation"]["recall_at_10"] >= 0.8
    assert point["embed_share"] and point["raw_embed"]["texts_per_s"] > 0
    assert point["memory_mb"]["worker"]["max_process"] > 0
    for p in paths.values():
        assert Path(p).stat().st_size > 0
    assert json.loads(paths["json"].read_text())["points"][0]["events"] == 3_000
    assert "| 3,000 |" in paths["markdown"].read_text()


@pytest.mark.slow
@pytest.mark.needs_shared_data("locomo")
@pytest.mark.timeout(1200)
def test_seeded_point_posts_only_its_last_events(tmp_path, pool, database_url, redis_url, engine):
    """With --vectors, a step's first events are written by the writer with their precomputed vectors and
    one HNSW build; only its last `api_events` go through the API and the worker; queries find planted
    facts among the seeded events too."""
    from sqlalchemy import text

    from bench.scale import ScaleOptions, run
    from tests.support import own_queue

    path = _vectors(tmp_path, pool, 1200)
    opts = ScaleOptions(sizes=(1500,), queries=10, raw_sample=64, assistant_share=0.0, out_dir=tmp_path / "out",
                        var_dir=tmp_path / "var", reranker=tmp_path / "no-reranker", database_url=database_url,
                        redis_url=redis_url, queue=own_queue(), stall_s=300, vectors=path, api_events=300)
    result, paths = run(opts, log=lambda m: None)
    point = result["points"][0]
    assert point["seeded"]["events"] == 1200 and point["created"] == 300
    tenant = f"scale-{result['run_id']}"
    with engine.connect() as conn:
        tid = conn.execute(text("SELECT id FROM tenants WHERE name = :n"), {"n": tenant}).scalar_one()
        n_vec, n_pending = conn.execute(text(
            "SELECT (SELECT count(*) FROM embeddings WHERE tenant_id = :t), "
            "(SELECT count(*) FROM indexing_state WHERE tenant_id = :t AND layer = 'embed' AND done_at IS NULL)"),
            {"t": tid}).one()
        index = conn.execute(text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_embeddings_hnsw'")).scalar_one()
    assert (n_vec, n_pending) == (1500, 0)
    assert "hnsw" in index and "ef_construction='128'" in index  # rebuilt as the schema declares it
    assert point["queries"]["tenant"]["recall_at_10"] >= 0.8
    md = paths["markdown"].read_text()
    assert "1,200 seeded" in md and "--vectors" in md


@pytest.mark.slow
@pytest.mark.needs_shared_data("locomo")
@pytest.mark.timeout(1200)
def test_requery_asks_the_run_s_planted_questions_with_and_without_an_index(tmp_path):
    """`python -m bench.scale_requery` on the database a (tiny, embedded) scale run left behind: both
    variants are measured, the planted facts are found, and the index is left as migrated."""
    from sqlalchemy import create_engine, text

    from app.embedded import ensure_postgres
    from bench.scale import ScaleOptions, _stop_embedded, run
    from bench.scale_requery import main

    var = tmp_path / "var"
    run(ScaleOptions(sizes=(600,), queries=4, raw_sample=32, assistant_share=0.0, out_dir=tmp_path / "out",
                     var_dir=var, reranker=tmp_path / "no-reranker", stall_s=300), log=lambda m: None)
    assert main(["--index", "ix_events_tenant_time", "--rounds", "1", "--queries", "4", "--write-batches", "1",
                 "--var-dir", str(var), "--out-dir", str(tmp_path / "out")]) == 0
    result = json.loads(next((tmp_path / "out").glob("scale-requery-*.json")).read_text())
    assert [r["variant"] for r in result["rounds"]] == ["without", "with"] and result["events"] == 600
    for r in result["rounds"]:
        assert r["tenant"]["recall_at_10"] >= 0.75 and r["tenant"]["stage_p50_ms"]["intent"] > 0
        assert r["writer_eps"] > 0
    engine = create_engine(ensure_postgres(var))
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_events_tenant_time'")
                                ).scalar_one() == 1
            assert conn.execute(text("SELECT count(*) FROM events")).scalar_one() == 600 + 2 * 1000
    finally:
        engine.dispose()
        _stop_embedded(var)
