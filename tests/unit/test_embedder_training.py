"""`palimpsest train-embedder` (training.embedder): what becomes a pair, that training draws a question
toward its evidence, and that the release the package ships is that model with its manifest."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.training_data import tiny_locomo, tiny_longmemeval


def _tiny_convs(tmp_path):  # noqa: ANN001, ANN202
    from training.data import load_training_data

    tiny_locomo(tmp_path / "locomo" / "locomo_dev7.json")
    return load_training_data(tmp_path, ("locomo",), "all", log=lambda m: None).conversations


def test_pairs_hold_the_gold_turns_words_and_never_a_gold_neighbour_as_negative(tmp_path):
    from training.embedder import make_pairs

    pairs = make_pairs(_tiny_convs(tmp_path), hard_negatives=2, max_gold=3, seed=1)
    assert len(pairs) == 4  # one per (question, gold turn): the move has two gold turns
    by_q = {}
    for p in pairs:
        by_q.setdefault(p.question, []).append(p)
    puppy = by_q["What is the name of Ben's puppy?"][0]
    assert puppy.positive == "Great! I adopted a puppy named Rex."
    assert not puppy.positive.startswith("Ben:")  # the words alone, as the service encodes an event
    banned = {"Hi Ben, how are you?", "Lovely. I started violin lessons this week."}  # D1:2's neighbours
    assert len(puppy.negatives) == 2 and not banned & set(puppy.negatives)
    assert {p.positive for p in by_q["Where did Ben move?"]} == {"I am moving to Denver next month.",
                                                                  "Snowy. Rex loves the snow."}
    assert make_pairs(_tiny_convs(tmp_path), hard_negatives=2, seed=1) == pairs  # the seed fixes the draw


def test_a_positive_two_questions_share_is_not_a_negative_of_either():
    import torch

    from training.embedder import Pair, _batch_loss

    class Fixed(torch.nn.Module):
        """Embeds a text by a fixed table: the loss's arithmetic, without a transformer."""
        table = {"q1": [1.0, 0.0], "q2": [1.0, 0.0], "same answer": [1.0, 0.0], "other": [0.0, 1.0]}

        def tokenize(self, texts):  # noqa: ANN001, ANN202
            return texts

        def forward(self, texts):  # noqa: ANN001, ANN202
            return {"sentence_embedding": torch.tensor([self.table[t] for t in texts])}

    model = Fixed()
    shared = [Pair("q1", "same answer", ("other",), "c"), Pair("q2", "same answer", ("other",), "c")]
    # each question's own positive scores 20 against the other's negative at 0: the duplicate positive
    # masked out, the loss is log(1 + 2 e^-20) ~ 0; counted as a negative it would be ~ log 2
    assert float(_batch_loss(model, shared)) == pytest.approx(0.0, abs=1e-6)


def test_training_draws_a_question_to_its_evidence_and_the_release_keeps_it(tmp_path):
    """Data of one's own in the import formats, `--split all`: the saved model ranks each question's
    evidence higher than the base did, records what it saw, and its fp16 release encodes alike."""
    from sentence_transformers import SentenceTransformer

    from bench.provenance import training_manifest
    from training.cli import embedder_main
    from training.export import export_fp16

    data = tmp_path / "data"
    tiny_locomo(data / "locomo" / "locomo_dev7.json")
    tiny_longmemeval(data)
    out = tmp_path / "out"
    assert embedder_main(["--data-dir", str(data), "--datasets", "locomo,beam,longmemeval", "--split", "all",
                          "--out", str(out), "--epochs", "4", "--lr", "1e-4", "--batch-size", "5",
                          "--hard-negatives", "1", "--threads", "1", "--time-limit", "120"]) == 0
    report = json.loads((out / "training_report.json").read_text())
    assert report["pairs"] == 5 and report["steps"] == 4 and not report["stopped_early"]  # 4 LoCoMo + 1 LME
    assert training_manifest(out)["datasets"] == {"locomo": ["conv-x"], "longmemeval": ["q-train"]}

    from app.settings import packaged_minilm_path

    question, gold, other = "Where did Ben move?", "I am moving to Denver next month.", "Hi Ben, how are you?"

    def margin(model):  # noqa: ANN001, ANN202
        q, g, o = model.encode([question, gold, other], normalize_embeddings=True)
        return float(q @ g - q @ o)

    base, trained = SentenceTransformer(packaged_minilm_path()), SentenceTransformer(str(out))
    assert margin(trained) > margin(base)
    half = export_fp16(out, tmp_path / "half")
    assert half.stat().st_size < (out / "model.safetensors").stat().st_size * 0.6
    assert (tmp_path / "half" / "1_Pooling" / "config.json").is_file()
    shipped_report = json.loads((tmp_path / "half" / "training_report.json").read_text())
    assert str(tmp_path) in json.dumps(report) and str(tmp_path) not in json.dumps(shipped_report)  # no machine path
    assert shipped_report["config"]["output_dir"] == "out" and shipped_report["pairs"] == 5
    released = SentenceTransformer(str(tmp_path / "half"))
    assert next(released.parameters()).dtype.is_floating_point and str(next(released.parameters()).dtype) == "torch.float32"
    a = trained.encode([question, gold], normalize_embeddings=True)
    b = released.encode([question, gold], normalize_embeddings=True)
    assert np.allclose((a * b).sum(axis=1), 1.0, atol=1e-3)


def test_the_service_embeds_with_the_shipped_model_trained_on_no_validation_conversation():
    """A fresh clone encodes events with the release in app/adapters/embed_model, under its own name;
    its manifest lists train ids only, so the harness may score it on the validation split."""
    from app.adapters.embedder import get_embedder
    from app.settings import SHIPPED_EMBEDDER, Settings
    from bench.provenance import check_overlap, embedder_info
    from bench.splits import train_ids, validation_ids

    s = Settings()
    assert s.embedding_model_path == str(SHIPPED_EMBEDDER) and s.embedding_model_name == "palimpsest-minilm-v1"
    assert get_embedder().name == "palimpsest-minilm-v1"
    models = {"embedder": embedder_info()}
    trained = models["embedder"]["training"]["datasets"]
    assert set(trained) == {"beam", "longmemeval"}  # LoCoMo's licence is non-commercial: not in the release
    for ds in ("beam", "longmemeval"):
        assert not set(trained[ds]) & set(validation_ids(ds))
        assert check_overlap(models, ds, validation_ids(ds)) == {}
    from bench.provenance import TrainOverlapError

    with pytest.raises(TrainOverlapError):
        check_overlap(models, "beam", train_ids("beam")[:1])


def test_a_cross_fitting_embedder_leaves_out_its_fold_and_every_pair_citing_that_folds_evidence(tmp_path):
    """Two LongMemEval_S questions of different folds share a session, so the evidence of the one
    left out is also the other's: no pair may teach the model that turn (it would score the left-out
    question as if seen)."""
    from bench.splits import train_ids
    from training.data import fold_of, load_training_data
    from training.embedder import leave_out, make_pairs

    ids = sorted(train_ids("longmemeval"))[:2]
    assert [fold_of("longmemeval", q, 2) for q in ids] == [0, 1]
    tiny_longmemeval(tmp_path, qids=ids)
    data = load_training_data(tmp_path, ("longmemeval",), "train", log=lambda m: None)
    kept, held = leave_out(data, 0, 2, log=lambda m: None)
    assert kept.ids == {"longmemeval": [ids[1]]}  # the manifest lists what it saw, not the left-out fold
    assert [c.id for c in kept.conversations] == [f"longmemeval/{ids[1]}"]
    assert held == {"I bought a blue bike on Sunday."}
    pairs = make_pairs(kept.conversations, hard_negatives=1)
    assert pairs and all(p.positive in held for p in pairs)  # the trainer drops every one of them
    with pytest.raises(ValueError, match="not in the train split"):
        fold_of("longmemeval", "not-a-train-question", 2)
    with pytest.raises(ValueError, match="fold 2"):
        leave_out(data, 2, 2)


def test_help_names_the_commands_a_user_types_and_the_cross_fitting_options(capsys):
    from training.cli import embedder_main, main

    with pytest.raises(SystemExit):
        embedder_main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: palimpsest train-embedder") and "--leave-out-fold" in out and "--folds" in out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith("usage: palimpsest train-reranker")


def test_decontamination_drops_every_pair_that_holds_a_validation_questions_evidence(tmp_path):
    """A train question and a validation question whose haystacks share the session that answers both (as
    LongMemEval_S's do): the train pair would teach the embedder the validation answer, so it goes; so does
    a pair whose negative is that turn. Other pairs stay."""
    from bench.splits import train_ids, validation_ids
    from training.data import load_training_data
    from training.embedder import Pair, drop_held, make_pairs, validation_evidence

    tiny_longmemeval(tmp_path, qids=(train_ids("longmemeval")[0], validation_ids("longmemeval")[0]))
    train = load_training_data(tmp_path, ("longmemeval",), "train", log=lambda m: None)
    pairs = make_pairs(train.conversations)
    assert [p.positive for p in pairs] == ["I bought a blue bike on Sunday."]  # the train question's own pair
    held = validation_evidence(tmp_path, ("longmemeval",), log=lambda m: None)
    assert held == {"I bought a blue bike on Sunday."}
    assert drop_held(pairs, held) == []
    other = Pair("What do I cook?", "Salt the water well.", ("I bought a blue bike on Sunday.",), "c")
    clean = Pair("What do I cook?", "Salt the water well.", ("Thanks, the weather is cold today.",), "c")
    assert drop_held([other, clean], held) == [clean]
