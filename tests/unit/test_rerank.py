"""Rerank stage: blend arithmetic, the best probability, and the local cross-encoder plumbing
(with a tiny CrossEncoder the test builds itself: no pretrained cross-encoder exists to download)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from app.domain.event import turn_text
from app.domain.retrieval.rerank import RerankCandidate, max_relevance, minmax, rerank
from tests.support.training_data import tiny_locomo, tiny_longmemeval


def overlap_scorer(query: str, texts):
    """A stand-in cross-encoder: how many query words a passage contains."""
    q = set(query.lower().strip("?").split())
    return [float(len(q & set(t.lower().split()))) for t in texts]


def test_blend_follows_the_formula():
    cands = [RerankCandidate("a", "x", 0.9), RerankCandidate("b", "y", 0.5), RerankCandidate("c", "z", 0.1)]
    ce = {"x": 0.0, "y": 2.0, "z": 4.0}
    out = rerank("q", cands, lambda q, ts: [ce[t] for t in ts], alpha=0.55)
    s = {r.id: r.score for r in out}
    assert s["a"] == pytest.approx(0.55 * 0.0 + 0.45 * 1.0)
    assert s["b"] == pytest.approx(0.55 * 0.5 + 0.45 * 0.5)
    assert s["c"] == pytest.approx(0.55 * 1.0 + 0.45 * 0.0)
    assert [r.id for r in out] == ["c", "b", "a"]
    assert [r.rank_before for r in out] == [3, 2, 1] and [r.rank_after for r in out] == [1, 2, 3]
    assert out[0].explain()["ce_norm"] == 1.0


def test_order_changes_only_when_the_cross_encoder_disagrees_strongly_enough():
    q = "Which city did Ana move to?"
    cands = [RerankCandidate(1, "Ben: my dog loves snow", 0.033),
             RerankCandidate(2, "Ana: we decided to move to Denver, the city we love", 0.032),
             RerankCandidate(3, "Ana: hello there", 0.031)]
    assert [r.id for r in rerank(q, cands, overlap_scorer)][0] == 2  # CE overrules fusion
    assert [r.id for r in rerank(q, cands, overlap_scorer, alpha=0.0)] == [1, 2, 3]  # fusion alone
    # when the CE agrees with fusion nothing moves
    agree = lambda q, ts: [3.0, 2.0, 1.0]  # noqa: E731
    assert [r.id for r in rerank(q, cands, agree)] == [1, 2, 3]


def test_only_the_top_n_are_scored_and_the_rest_keep_their_order_below():
    calls = []

    def scorer(q, ts):
        calls.append(len(ts))
        return list(range(len(ts)))  # reverses the head

    cands = [RerankCandidate(i, f"t{i}", 1.0 - i / 10) for i in range(6)]
    out = rerank("q", cands, scorer, top_n=3)
    assert calls == [3]
    assert [r.id for r in out] == [2, 1, 0, 3, 4, 5]
    assert not out[3].reranked and out[3].ce is None
    assert rerank("q", [], scorer) == []


def test_minmax_and_best_probability_and_bad_input():
    assert minmax([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert minmax([5.0, 5.0]) == [1.0, 1.0]
    low = rerank("q", [RerankCandidate(1, "a", 1.0)], lambda q, ts: [-4.0])  # sigmoid ≈ 0.018
    assert max_relevance(low) == pytest.approx(0.018, abs=1e-3)
    assert max_relevance(rerank("q", [], lambda q, ts: [])) is None
    with pytest.raises(ValueError):
        rerank("q", [RerankCandidate(1, "a", 1.0)], lambda q, ts: [1.0, 2.0])
    with pytest.raises(ValueError):
        rerank("q", [RerankCandidate(1, "a", 1.0)], overlap_scorer, alpha=1.5)
    assert turn_text("Ana", "hi") == "Ana: hi" and turn_text(None, "hi") == "hi"


# ---------------------------------------------------------------- the model wrapper, with a tiny CE


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    from transformers import BertConfig, BertForSequenceClassification

    from app.settings import packaged_minilm_path

    src = Path(packaged_minilm_path())  # its tokenizer, as a cross-encoder trained from it has
    out = tmp_path_factory.mktemp("tiny-ce")
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128, num_labels=1)
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy(src / name, out / name)
    return out


def test_reranker_loads_a_local_cross_encoder_and_scores_pairs(tiny_cross_encoder):
    from app.adapters.reranker import Reranker, sigmoid

    ce = Reranker(tiny_cross_encoder, max_length=64)
    texts = ["Ana: we moved to Denver", "Ben: my dog loves snow", "Ana: hello"]
    s1 = ce.score("Where does Ana live?", texts)
    s2 = ce("Where does Ana live?", texts)
    assert s1.shape == (3,) and s1.dtype == np.float32
    assert np.allclose(s1, s2)  # deterministic (eval mode)
    assert len(set(np.round(s1, 6))) > 1  # the pair matters
    assert ce.last_latency_ms > 0.0  # the last call was timed
    assert ce.score("q", []).shape == (0,)
    assert np.all((sigmoid(s1) > 0) & (sigmoid(s1) < 1))
    # wired into the stage: the CE's own logits come back per item
    cands = [RerankCandidate(i, t, 1.0 / (i + 1)) for i, t in enumerate(texts)]
    out = rerank("Where does Ana live?", cands, ce.score)
    assert sorted(r.ce for r in out) == pytest.approx(sorted(s1.tolist()), abs=1e-6)


def test_length_sorted_batches_give_each_passage_its_own_score(tiny_cross_encoder):
    """Pairs are scored shortest first in small batches; the scores must come back in the caller's
    order and equal each pair scored alone (fp32: padding is masked, so the batch does not matter)."""
    from app.adapters.reranker import Reranker

    texts = ["Ben: a much longer turn about the dog, the snow, the lake and the long walk we took after lunch",
             "Ana: hi", "Ana: we moved to Denver last spring", "Cy: ok", "Ben: my dog loves snow and cold weather"]
    batched = Reranker(tiny_cross_encoder, max_length=64, batch_size=2, quantize=False)
    alone = [batched.score("Where does Ana live?", [t])[0] for t in texts]
    got = batched.score("Where does Ana live?", texts)
    assert got == pytest.approx(alone, abs=1e-5)
    assert len(set(np.round(got, 5))) == len(texts)  # distinct scores, so a mis-ordering would show


@pytest.mark.needs_shared_data("locomo")
def test_rerank_batching_benchmark_runs(tmp_path, tiny_cross_encoder, shared_data):
    from bench import rerank_batching

    data = shared_data
    res = rerank_batching.main(["--data-dir", str(data), "--model", str(tiny_cross_encoder), "--datasets", "locomo",
                                "--questions", "3", "--pairs", "5", "--batches", "8,2", "--repeats", "1",
                                "--out-dir", str(tmp_path)])
    rows = res["datasets"]["locomo"]["rows"]
    assert [r["batch_size"] for r in rows] == [8, 2] and res["datasets"]["locomo"]["questions"] == 3
    # batched, quantised scores stay close to the exact batch-of-one logits (the tiny random model's
    # logits are nearly tied, so its rank correlation says nothing; `_spearman` is checked below)
    assert all(r["p50_ms"] > 0 and r["mean_abs_logit_diff"] < 0.01 for r in rows)
    assert "| 2 |" in next(tmp_path.glob("rerank-batching-*.md")).read_text()


def test_rank_correlation_of_the_batching_benchmark():
    from bench.rerank_batching import _spearman

    a = np.array([0.1, 0.5, 0.3, 0.9], dtype=np.float32)
    assert _spearman(a, a * 2 + 1) == pytest.approx(1.0)  # same order, other scale
    assert _spearman(a, -a) == pytest.approx(-1.0)
    assert _spearman(a, np.array([0.1, 0.3, 0.5, 0.9])) == pytest.approx(0.8)  # one swap of neighbours
    assert _spearman(a[:1], a[:1]) == 1.0


def test_reranker_fails_loudly_without_a_model(tmp_path):
    from app.adapters.reranker import Reranker, RerankerUnavailable

    with pytest.raises(RerankerUnavailable, match="no cross-encoder"):
        Reranker(tmp_path / "nope")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{}")
    with pytest.raises(RerankerUnavailable):
        Reranker(tmp_path / "broken")


def test_the_default_reranker_is_the_trained_one_unless_a_path_is_set(tmp_path, monkeypatch):
    from app.adapters import reranker as rr
    from app.settings import get_settings

    monkeypatch.delenv("PALIMPSEST_RERANKER_MODEL_PATH", raising=False)
    monkeypatch.setenv("PALIMPSEST_VAR_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        trained = tmp_path / "models" / "reranker-minilm"  # what `palimpsest train-reranker` writes
        assert rr.default_reranker_path() == str(trained)
        with pytest.raises(rr.RerankerUnavailable):  # none trained: the stage has no model
            rr.get_reranker()
        monkeypatch.setenv("PALIMPSEST_RERANKER_MODEL_PATH", str(tmp_path / "missing"))
        get_settings.cache_clear()
        assert rr.default_reranker_path() == str(tmp_path / "missing")  # an explicit path wins, even missing
    finally:
        get_settings.cache_clear()


# ---------------------------------------------------------------- training plumbing (tiny model, tiny data)


def _bag_encoder(texts):
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().replace("?", " ").replace(".", " ").split():
            out[i, hash(w) % 64] += 1.0
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_mined_groups_use_gold_positives_and_exclude_gold_neighbours(tmp_path):
    from training.locomo import load_locomo
    from training.reranker import mine_groups

    tiny_locomo(tmp_path / "l.json")
    convs = load_locomo(tmp_path / "l.json")
    assert convs[0].questions[2].gold == ("D1:6", "D2:2")  # "D1:6; D2:2" split
    groups = mine_groups(convs, _bag_encoder, negatives=3, pool=5)
    assert len(groups) == 4  # one per (question, gold turn)
    by_q = {}
    for g in groups:
        by_q.setdefault(g.question, []).append(g)
    puppy = by_q["What is the name of Ben's puppy?"][0]
    assert puppy.positive == "Ben: Great! I adopted a puppy named Rex."
    banned = {"Ana: Hi Ben, how are you?", "Ana: Lovely. I started violin lessons this week."}  # D1:1, D1:3
    assert len(puppy.negatives) == 3 and not banned & set(puppy.negatives)
    assert puppy.positive not in puppy.negatives


def test_train_reranker_end_to_end_on_a_tiny_model(tmp_path, tiny_cross_encoder):
    """Data of one's own in the import formats (LoCoMo's, LongMemEval_S's), `--split all`: it trains,
    saves a cross-encoder the product loads, and a manifest naming every conversation it saw."""
    from app.adapters.reranker import Reranker
    from bench.provenance import training_manifest
    from training.cli import main
    from training.eval_reranker import evaluate
    from training.export import export_fp16

    data = tmp_path / "data"
    tiny_locomo(data / "locomo" / "locomo_dev7.json")
    tiny_longmemeval(data)
    out = tmp_path / "out"
    assert main(["--data-dir", str(data), "--datasets", "locomo,beam,longmemeval", "--split", "all",
                 "--out", str(out), "--base", str(tiny_cross_encoder), "--max-length", "64", "--negatives", "2",
                 "--pool", "5", "--group-batch", "2", "--epochs", "2", "--cache-dir", "", "--freeze-layers", "1",
                 "--layers", "1", "--time-limit", "120"]) == 0
    report = json.loads((out / "training_report.json").read_text())
    assert report["groups"] == 5 and report["steps"] == 6 and not report["stopped_early"]  # 4 LoCoMo + 1 LME
    assert training_manifest(out)["datasets"] == {"locomo": ["conv-x"], "longmemeval": ["q-train"]}
    assert "beam: not under" in " ".join(training_manifest(out)["notes"])
    half = export_fp16(out, tmp_path / "half")
    assert half.stat().st_size < (out / "model.safetensors").stat().st_size * 0.6
    a, b = Reranker(out, quantize=False), Reranker(tmp_path / "half", quantize=False)
    pairs = ["Ben: I am moving to Denver next month.", "Ana: hi"]
    assert a.score("Where did Ben move?", pairs) == pytest.approx(b.score("Where did Ben move?", pairs), abs=1e-2)
    with pytest.raises(Exception, match="trained on"):
        evaluate(str(out), ["conv-x"], data_path=str(data / "locomo" / "locomo_dev7.json"))


def test_training_data_reads_the_train_split_only(tmp_path):
    """BEAM through the benchmark's loader (sessions are batches, abstention has no positive) and
    LongMemEval haystacks (`has_answer` turns are the positives), cut to the manifest's train split."""
    from training.data import load_training_data

    for n, text in ((1, "My sprint ends March 29."), (15, "A validation conversation.")):
        d = tmp_path / "beam100k" / str(n)
        d.mkdir(parents=True)
        (d / "chat.json").write_text(json.dumps([
            {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [[
                {"role": "user", "id": 0, "content": text}, {"role": "assistant", "id": 1, "content": "Noted."}]]},
            {"batch_number": 2, "turns": [[{"role": "user", "id": 2, "content": "It moved to April 5."}]]}]))
        (d / "probing_questions.json").write_text(json.dumps({
            "abstention": [{"question": "What did my boss say?", "ideal_response": "No information."}],
            "knowledge_update": [{"question": "When does my sprint end?", "answer": "April 5",
                                  "source_chat_ids": "{'original_info': [0], 'updated_info': [2]}"}]}))
    from bench.splits import train_ids, validation_ids

    lme_train, lme_val = train_ids("longmemeval")[0], validation_ids("longmemeval")[0]
    tiny_longmemeval(tmp_path, (lme_train, lme_val))
    data = load_training_data(tmp_path, log=lambda m: None)
    assert data.ids == {"beam": ["beam-1"], "longmemeval": [lme_train]}
    beam, lme = data.conversations
    assert [(t.id, t.speaker, t.session) for t in beam.turns] == [("0", "user", "1"), ("1", "assistant", "1"),
                                                                  ("2", "user", "2")]
    assert [(q.question, q.gold) for q in beam.questions] == [("When does my sprint end?", ("0", "2"))]
    assert not beam.mine_dense and not lme.mine_dense  # BM25-mined: long turns, large haystacks
    assert [q.gold for q in lme.questions] == [("s1:0",)] and lme.turns[0].session == "s1"
    assert load_training_data(tmp_path, split="all", log=lambda m: None).ids["beam"] == ["beam-1", "beam-15"]
