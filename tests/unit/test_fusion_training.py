"""`training.fusion.train_and_choose`: fitted on train rows only, chosen on validation, the chosen
model written with what it was fitted on (synthetic feature rows; no database)."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

pytest.importorskip("lightgbm")

from app.domain.retrieval.features import FEATURES  # noqa: E402
from training import fusion  # noqa: E402


def rows(dataset: str, conversation: str, n: int, seed: int) -> list[dict]:
    """Questions of 20 candidates: the gold one has a high `dense_rel` and a low fused rank."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n):
        x = rng.random((20, len(FEATURES)))
        y = np.zeros(20)
        gold = int(rng.integers(5, 20))
        y[gold] = 1.0
        x[:, FEATURES.index("dense_rel")] = rng.random(20) * 0.5
        x[gold, FEATURES.index("dense_rel")] = 0.9
        out.append(vars(fusion.QueryRows(dataset, f"{conversation}:{q}", conversation, "single_hop",
                                         [f"e{i}" for i in range(20)], x, y)))
    return out


def test_fits_on_train_chooses_on_validation_and_records_it(tmp_path, monkeypatch):
    monkeypatch.setattr(fusion, "CACHES", [tmp_path])
    monkeypatch.setattr(fusion, "DATASETS", ("locomo", "longmemeval"))
    (tmp_path / "train-locomo.pkl").write_bytes(pickle.dumps(rows("locomo", "conv-26", 60, 1)))
    (tmp_path / "train-longmemeval.pkl").write_bytes(pickle.dumps([]))  # built with no haystacks
    (tmp_path / "validation-locomo.pkl").write_bytes(pickle.dumps(rows("locomo", "conv-43", 30, 2)))
    (tmp_path / "validation-longmemeval.pkl").write_bytes(pickle.dumps(rows("longmemeval", "q1", 10, 3)))
    out = tmp_path / "model.json"
    monkeypatch.setenv("PALIMPSEST_FUSION_OUT", str(out))
    doc = fusion.train_and_choose(None)
    assert json.loads(out.read_text())["kind"] == doc["kind"]
    results = doc["validation"]["candidates_only"]
    chosen = doc["validation"]["chosen"]
    assert chosen in results and chosen != "fused (weighted RRF, no reweight)"
    assert all(fusion.objective(results[chosen]) >= fusion.objective(v) for k, v in results.items())
    assert results[chosen]["locomo"]["mrr"] > 0.9  # the planted signal was learned
    assert set(results[chosen]) == {"locomo", "longmemeval"}  # chosen over every validation data set
    assert doc["trained_on"] == {"locomo": ["conv-26"]}  # not the data set it was only validated on


def test_the_context_estimate_holds_what_fits_2000_tokens_and_er_counts_only_that():
    words = np.array([1000.0, 10.0, 600.0, 10.0])  # 1308, 21, 788, 21 tokens (estimated)
    assert fusion.packed([0, 1, 2, 3], words) == [0, 1]  # 1308 + 21 + 788 > 2000: the first that does not fit ends it
    x = np.zeros((4, len(FEATURES)))
    x[:, FEATURES.index("len_words")] = words
    r = fusion.QueryRows("locomo", "c:1", "c", "single_hop", ["a", "b", "c", "d"], x, np.array([0, 0, 0, 1.0]))
    assert fusion.rank_scores([r], None)["locomo"]["er"] == 0.0  # gold fourth, behind a turn that does not fit
    up = fusion.rank_scores([r], lambda rows: -rows[:, FEATURES.index("len_words")])  # short turns first
    assert up["locomo"]["er"] == 1.0 and up["locomo"]["r@5"] == 1.0


def test_rows_are_recorded_in_the_fused_order_whatever_the_default_adds_on_top():
    # the priors on top of a recorder's all-zero scores would re-order the candidates by themselves,
    # and the ids recorded would no longer match the feature rows (a cache collected so at stop 29
    # scored LoCoMo r@10 0.27 in its "fused" order, against 0.69)
    recipe = fusion.collection_recipe()
    assert recipe.learned and not recipe.learned_priors and not recipe.current_first


def test_a_split_rows_come_from_every_cache_folder_and_a_question_in_two_is_refused(tmp_path, monkeypatch):
    """Cross-fitted rows: each fold collected into its own folder with the embedder that did not see it."""
    a, b = tmp_path / "fold0", tmp_path / "fold1"
    a.mkdir(), b.mkdir()
    (a / "train-beam.pkl").write_bytes(pickle.dumps(rows("beam", "beam-1", 3, 1)))
    (b / "train-beam.pkl").write_bytes(pickle.dumps(rows("beam", "beam-2", 2, 2)))
    monkeypatch.setattr(fusion, "CACHES", [a, b])
    got = fusion.cached("train", None, ("beam",))
    assert sorted({r.conversation for r in got}) == ["beam-1", "beam-2"] and len(got) == 5
    (b / "train-beam.pkl").write_bytes(pickle.dumps(rows("beam", "beam-1", 2, 2)))
    with pytest.raises(ValueError, match="more than one"):
        fusion.cached("train", None, ("beam",))


def test_the_conversations_left_out_of_collection_are_those_the_embedders_manifest_lists(tmp_path, monkeypatch):
    from app.settings import SHIPPED_EMBEDDER, get_settings
    from bench.splits import train_ids

    saw = json.loads((SHIPPED_EMBEDDER / "training-manifest.json").read_text())["datasets"]
    assert fusion.embedder_saw("beam") == set(train_ids("beam")) == set(saw["beam"])
    assert fusion.embedder_saw("locomo") == set()  # the shipped model never read LoCoMo
    monkeypatch.setenv("PALIMPSEST_EMBEDDING_MODEL_PATH", str(tmp_path))  # no manifest: nothing known seen
    get_settings.cache_clear()
    try:
        assert fusion.embedder_saw("beam") == set()
    finally:
        monkeypatch.delenv("PALIMPSEST_EMBEDDING_MODEL_PATH")
        get_settings.cache_clear()
