"""The split manifest, the LongMemEval loader, session-level recall and the training-overlap refusal
(pure: no database, no service; the shared data only where a test says so by its name)."""
from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.datasets import Dataset, Question, subset
from bench.evaluate import SystemAnswer, summarize
from bench.datasets import default_data_dir
from bench.longmemeval import LME_FILE, load_longmemeval, parse_lme_date, session_of
from bench.metrics import ranked_sessions, session_metrics, session_recall
from bench.provenance import (
    TrainOverlapError,
    check_overlap,
    model_info,
    training_manifest,
    write_training_manifest,
)
from bench.splits import (
    check,
    ids,
    lme_is_validation,
    lme_split,
    load_manifest,
    select,
    train_ids,
    validation_ids,
)

LME_DATA = default_data_dir() / LME_FILE


# ---------------------------------------------------------------- the split manifest

def test_manifest_splits_are_the_issue_s_and_disjoint():
    m = load_manifest()
    assert train_ids("locomo") == ("conv-26", "conv-30", "conv-41", "conv-42")
    assert validation_ids("locomo") == ("conv-43", "conv-44", "conv-47")
    assert train_ids("beam") == tuple(f"beam-{i}" for i in range(1, 15))
    assert validation_ids("beam") == tuple(f"beam-{i}" for i in range(15, 21))
    for name in ("locomo", "beam", "longmemeval"):
        assert not set(train_ids(name)) & set(validation_ids(name))
        assert ids(name, "all") == train_ids(name) + validation_ids(name)
    assert check(m) == []
    assert len(train_ids("longmemeval")) + len(validation_ids("longmemeval")) == 363


def test_longmemeval_rule_is_deterministic_and_about_a_fifth():
    qids = [f"q{i:04d}" for i in range(2000)] + ["x_abs"]
    a, b = lme_split(qids), lme_split(reversed(qids))
    assert a == b
    assert sorted(a["train"] + a["validation"]) == sorted(qids)
    assert not set(a["train"]) & set(a["validation"])
    assert 0.17 < len(a["validation"]) / len(qids) < 0.23
    # the rule written out: sha256 -> first 8 hex -> mod 100 < 20
    import hashlib

    assert all((int(hashlib.sha256(q.encode()).hexdigest()[:8], 16) % 100 < 20) == lme_is_validation(q) for q in qids)


def test_manifest_lists_agree_with_the_rule_and_check_catches_drift():
    m = load_manifest()
    assert all(lme_is_validation(q) for q in m["longmemeval"]["validation"])
    assert not any(lme_is_validation(q) for q in m["longmemeval"]["train"])
    bad = json.loads(json.dumps(m))
    bad["locomo"]["validation"].append("conv-26")
    moved = bad["longmemeval"]["train"].pop()
    bad["longmemeval"]["validation"].append(moved)
    problems = check(bad, lme_question_ids=[*m["longmemeval"]["train"], *m["longmemeval"]["validation"], "new"])
    assert any("locomo: in train and validation" in p for p in problems)
    assert any("wrong side of the hash rule" in p for p in problems)
    assert any("not in the manifest" in p for p in problems)


@pytest.fixture(scope="module")
def shared_lme() -> Dataset:
    """The shared LongMemEval file, loaded once for the tests that read it (47 MB of gzipped JSON:
    tens of seconds a parse on two cores)."""
    return load_longmemeval(default_data_dir())


@pytest.mark.skipif(not LME_DATA.exists(), reason=f"test_manifest_covers_every_shared_longmemeval_question: "
                    f"no shared data at {LME_DATA}")
def test_manifest_covers_every_shared_longmemeval_question(shared_lme):
    qids = [q.qid for q in shared_lme.questions]  # the file's question_id, one per question, in file order
    assert len(qids) == len(set(qids)) == 363
    assert check(load_manifest(), qids) == []


def _tiny_ds(name: str, conv_ids: list[str]) -> Dataset:
    from app.locomo import Conversation

    return Dataset(name, [Conversation(c, []) for c in conv_ids],
                   [Question(f"{c}:0", c, "q?", "single_hop", ("e",)) for c in conv_ids])


def test_select_keeps_the_split_in_order():
    ds = _tiny_ds("locomo", ["conv-26", "conv-43", "conv-47", "conv-99"])
    val = select(ds, "validation")
    assert [c.id for c in val.conversations] == ["conv-43", "conv-47"]
    assert [q.conversation_id for q in val.questions] == ["conv-43", "conv-47"]
    assert [c.id for c in select(ds, "train").conversations] == ["conv-26"]
    everything = select(ds, "all")
    assert len(everything.conversations) == 4 and any("conv-99" in n for n in everything.notes)
    with pytest.raises(ValueError, match="unknown split"):
        select(ds, "test")


def test_harness_refuses_a_named_conversation_outside_the_split(tmp_path):
    from bench.harness import RunOptions, select_questions

    ds = _tiny_ds("locomo", ["conv-26", "conv-43"])
    opts = RunOptions(benchmark="locomo", data_dir=tmp_path, only=("conv-26",))
    with pytest.raises(ValueError, match="not in the validation split"):
        select_questions(opts, ds)
    opts.split = "all"
    assert [c.id for c in select_questions(opts, ds).conversations] == ["conv-26"]


# ---------------------------------------------------------------- LongMemEval loader

def _write_lme(path: Path) -> None:
    sessions = {
        "s_late": [{"role": "user", "content": "I moved to Lisbon."},
                   {"role": "assistant", "content": "Lisbon is lovely.", "has_answer": True}],
        "s_early": [{"role": "user", "content": "My dog is called Biscuit.", "has_answer": True},
                    {"role": "assistant", "content": "What a name!"},
                    {"role": "user", "content": "He is a greyhound."}],
        "s_noise": [{"role": "user", "content": "Recipe for soup?"}, {"role": "assistant", "content": " \n"}],
    }
    questions = [
        {"question_id": "q1", "question_type": "single-session-user", "question": "What is my dog called?",
         "question_date": "2023/06/01 (Thu) 10:00", "answer": 3, "answer_session_ids": ["s_early", "s_late"],
         # upstream order is not time order, and s_noise is listed twice (kept once, at its first date)
         "haystack_session_ids": ["s_late", "s_noise", "s_early", "s_noise"],
         "haystack_dates": ["2023/05/20 (Sat) 21:44", "2023/05/20 (Sat) 07:47", "2023/05/19 (Fri) 09:00",
                            "2023/05/21 (Sun) 08:00"]},
        {"question_id": "q2_abs", "question_type": "multi-session", "question": "What is my cat called?",
         "question_date": "2023/06/02 (Fri) 11:30", "answer": "You never said.", "answer_session_ids": ["s_early"],
         "haystack_session_ids": ["s_early", "s_noise"],
         "haystack_dates": ["2023/05/19 (Fri) 09:00", "2023/05/19 (Fri) 09:00"]},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump({"sessions": sessions, "questions": questions}, fh)


def test_longmemeval_loader_events_gold_dates_and_sessions(tmp_path):
    _write_lme(tmp_path / LME_FILE)
    ds = load_longmemeval(tmp_path)
    assert ds.name == "longmemeval" and ds.apart == ("abstention",)
    c1 = ds.conversation("q1")
    assert [t.event_id for t in c1.turns] == ["s_early:0", "s_early:1", "s_early:2", "s_noise:0", "s_late:0",
                                              "s_late:1"]
    assert [t.role for t in c1.turns] == ["user", "assistant", "user", "user", "user", "assistant"]
    assert all(t.speaker == t.role for t in c1.turns)
    assert c1.turns[0].occurred_at == datetime(2023, 5, 19, 9, 0, tzinfo=UTC)
    assert c1.turns[2].occurred_at == datetime(2023, 5, 19, 9, 0, 2, tzinfo=UTC)
    assert c1.turns[3].occurred_at == datetime(2023, 5, 20, 7, 47, tzinfo=UTC)
    assert c1.turns[5].occurred_at == datetime(2023, 5, 20, 21, 44, 1, tzinfo=UTC)
    assert c1.turns[4].metadata == {"session_id": "s_late", "turn": 0}
    assert "has_answer" not in json.dumps([t.to_event("q1") for t in c1.turns])  # gold never reaches the service
    assert any("s_noise listed twice" in n for n in ds.notes)
    # an empty turn is left out (the service refuses empty content), and the notes say so
    assert "s_noise:1" not in [t.event_id for t in c1.turns]
    assert any("s_noise:1: empty content, left out" in n for n in ds.notes)
    q1, q2 = ds.questions
    assert q1.conversation_id == "q1" and q1.category == "single-session-user" and q1.answer == "3"
    assert q1.gold == ("s_early:0", "s_late:1") and q1.gold_sessions == ("s_early", "s_late")
    assert q1.as_of == datetime(2023, 6, 1, 10, 0, tzinfo=UTC)
    assert not q1.abstention
    # same-minute sessions still come out strictly in order, one second apart
    c2 = ds.conversation("q2_abs")
    times = [t.occurred_at for t in c2.turns]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert q2.abstention and q2.category == "abstention" and q2.gold == () and q2.gold_sessions == ()
    assert {session_of(t.event_id) for t in c1.turns} == {"s_early", "s_noise", "s_late"}
    assert parse_lme_date("2023/05/20 (Sat) 00:31") == datetime(2023, 5, 20, 0, 31, tzinfo=UTC)


def test_longmemeval_limit_counts_questions_not_per_conversation(tmp_path):
    _write_lme(tmp_path / LME_FILE)
    ds = load_longmemeval(tmp_path)
    assert [q.qid for q in subset(ds, limit=1, per_conversation=False).questions] == ["q1"]
    assert len(subset(ds, limit=1).questions) == 2  # per conversation: one question each anyway


@pytest.mark.skipif(not LME_DATA.exists(), reason=f"test_longmemeval_loads_shared_data: no shared data at {LME_DATA}")
def test_longmemeval_loads_shared_data(shared_lme):
    ds = shared_lme
    assert len(ds.questions) == 363 and len(ds.conversations) == 363
    assert sum(q.abstention for q in ds.questions) == 17
    assert all(q.gold for q in ds.questions if not q.abstention)
    for c in ds.conversations[:20]:
        assert len({t.event_id for t in c.turns}) == len(c.turns)
        assert [t.occurred_at for t in c.turns] == sorted(t.occurred_at for t in c.turns)


# ---------------------------------------------------------------- session-level recall

def test_session_recall_counts_a_session_when_any_of_its_turns_is_in_the_top_k():
    sess = {"a:0": "a", "a:1": "a", "b:0": "b", "c:0": "c"}
    ranked = ["c:0", "a:1", "a:0", "b:0"]
    assert session_recall(ranked, ["a"], sess, 1) == 0.0
    assert session_recall(ranked, ["a"], sess, 2) == 1.0
    assert session_recall(ranked, ["a", "b"], sess, 3, every=True) == 0.0  # k counts turns, not sessions
    assert session_recall(ranked, ["a", "b"], sess, 4, every=True) == 1.0
    assert session_recall(ranked, [], sess, 10) == 0.0
    assert session_recall(["zz"], ["a"], sess, 10) == 0.0  # a turn of no session
    assert session_metrics(ranked, ["b"], sess, ks=(1, 4), all_k=4) == {"sR@1": 0.0, "sR@4": 1.0, "sall@4": 1.0}


def test_distinct_session_recall_ranks_sessions_by_their_best_turn():
    sess = {f"a:{i}": "a" for i in range(6)} | {"b:0": "b", "c:0": "c"}
    ranked = ["a:0", "a:1", "a:2", "a:3", "a:4", "c:0", "a:5", "b:0"]
    assert ranked_sessions(ranked, sess) == ["a", "c", "b"]
    got = session_metrics(ranked[:5], ["b"], sess, ks=(2, 3), all_k=5, full=ranked)
    # five turns of one session fill sR@k; as sessions, b is the third retrieved
    assert got == {"sR@2": 0.0, "sR@3": 0.0, "sall@5": 0.0, "dsR@2": 0.0, "dsR@3": 1.0}
    assert "dsR@2" not in session_metrics(ranked, ["b"], sess, ks=(2,), all_k=2)  # only with the full ranking


def test_summary_has_session_metrics_only_where_there_is_session_gold(tmp_path):
    _write_lme(tmp_path / LME_FILE)
    ds = load_longmemeval(tmp_path)
    ans = {"q1": SystemAnswer(ranked=["s_noise:0", "s_late:0", "s_early:1"], in_context={}, ctx_tokens={}),
           "q2_abs": SystemAnswer(ranked=["s_early:0"], in_context={}, ctx_tokens={})}
    summ = summarize(ds, ans, budgets=[], top_k=10)
    row = summ["table"]["overall"]
    assert row["n"] == 1 and row["r@10"] == 0.0  # no has_answer turn in the list
    assert row["sR@5"] == 1.0 and row["sall@10"] == 1.0  # but both answer sessions are reached
    assert summ["abstention"]["n"] == 1
    from bench.report import headline_table

    lines = headline_table({"apart": ["abstention"], "budgets": [2000],
                            "systems": {"bm25": {"table": {"overall": {**row, "er@2k": 0.5}}}}})
    assert "sR@5" in lines[0] and "w/o" not in lines[0]


def test_headline_shows_all_and_without_adversarial_side_by_side():
    from bench.report import headline_table

    t = {"overall": {"n": 3, "r@10": 0.9}, "all": {"n": 4, "r@10": 0.8}}
    lines = headline_table({"apart": ["adversarial"], "budgets": [2000], "systems": {"service": {"table": t}}})
    assert "r@10 all | r@10 w/o adversarial" in lines[0]
    assert "| service | " in lines[2] and "0.800 | 0.900" in lines[2]


# ---------------------------------------------------------------- training overlap

def test_overlap_refusal_and_its_override(tmp_path):
    model = tmp_path / "reranker"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights")
    write_training_manifest(model, {"locomo": ["conv-26", "conv-43"], "longmemeval": ["q1"]}, splits="bench/splits.json")
    info = model_info(model)
    import hashlib

    assert info["weights"] == {"file": "model.safetensors", "bytes": 7, "sha256": hashlib.sha256(b"weights").hexdigest()}
    assert info["training"]["datasets"]["locomo"] == ["conv-26", "conv-43"]
    models = {"embedder": model_info(None), "reranker": info}
    assert check_overlap(models, "locomo", ["conv-44", "conv-47"]) == {}
    with pytest.raises(TrainOverlapError, match="conv-43"):
        check_overlap(models, "locomo", ["conv-43", "conv-44"])
    assert check_overlap(models, "locomo", ["conv-43"], allow=True) == {"reranker": ["conv-43"]}
    assert check_overlap(models, "beam", ["beam-1"]) == {}


def test_legacy_training_report_is_read_as_a_manifest(tmp_path):
    (tmp_path / "training_report.json").write_text(json.dumps(
        {"config": {"train_conversations": ["conv-26"], "beam_conversations": ["beam-1", "beam-2"]}}))
    m = training_manifest(tmp_path)
    assert m["datasets"] == {"locomo": ["conv-26"], "beam": ["beam-1", "beam-2"]}
    assert training_manifest(tmp_path / "nothing") is None


def test_harness_refuses_before_any_work(tmp_path, monkeypatch):
    from bench import harness

    model = tmp_path / "rr"
    model.mkdir()
    write_training_manifest(model, {"beam": ["beam-15"]})
    monkeypatch.setattr(harness, "embedder_info", lambda: model_info(None))
    monkeypatch.delenv("PALIMPSEST_RERANKER_MODEL_PATH", raising=False)
    opts = harness.RunOptions(benchmark="beam", url="http://127.0.0.1:1", reranker=model)
    with pytest.raises(TrainOverlapError, match="beam-15"):
        harness.measured_models(opts, ["beam-15", "beam-16"])
    opts.allow_train_overlap = True
    models, found = harness.measured_models(opts, ["beam-15"])
    assert found == {"reranker": ["beam-15"]} and models["reranker"]["path"] == str(model)


@pytest.mark.skipif(not LME_DATA.exists(), reason="needs the shared LongMemEval_S file")
def test_load_split_names_the_data_sets_and_keeps_the_split():
    from bench.splits import load_split

    sets = load_split("validation", names=("longmemeval",))
    assert list(sets) == ["longmemeval"]
    qids = {q.qid for q in sets["longmemeval"].questions}
    assert qids == set(validation_ids("longmemeval"))
    assert not qids & set(train_ids("longmemeval"))
    assert list(load_split("train")) == ["locomo", "beam"]  # the default: what the fusion is fitted on
