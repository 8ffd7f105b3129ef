"""The benchmark's pure parts: metrics, loaders' parsing, baseline context packing, aggregation.

No service and no model: token counts use the real (cheap) tokenizer only.
"""
from __future__ import annotations

import itertools
import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from app.locomo import Conversation, Turn, locomo_conversation, locomo_turn_content, parse_locomo_datetime
from bench.baselines import rrf, tokenize
from bench.context import build_context, count_tokens, count_tokens_batch, render_turn
from bench.datasets import (
    Dataset,
    Question,
    beam_turns,
    clean_locomo_evidence,
    load_beam,
    load_locomo,
    parse_beam_anchor,
    parse_source_chat_ids,
    spread,
    subset,
)
from bench.evaluate import SystemAnswer, score_question, summarize
from bench.metrics import (
    abstain_rate,
    aggregate,
    budget_label,
    er_key,
    evidence_recall,
    first_gold_rank,
    pack_by_budget,
    percentile,
    rank_metrics,
    recall_all,
    recall_any,
    reciprocal_rank,
)
from bench.runner import parse_overrides, pending_total

# ---------------------------------------------------------------- rank metrics

def test_single_gold_found_at_rank_3():
    m = rank_metrics(["a", "b", "g", "c"], ["g"])
    assert m == {"r@5": 1.0, "r@10": 1.0, "all@10": 1.0, "mrr": pytest.approx(1 / 3)}


def test_gold_at_rank_7_counts_for_r10_but_not_r5():
    ranked = [f"x{i}" for i in range(6)] + ["g"] + ["y"] * 3
    m = rank_metrics(ranked, ["g"])
    assert m["r@5"] == 0.0 and m["r@10"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 7)


def test_multi_evidence_any_versus_all():
    ranked = ["a", "g1", "b", "c", "d", "e", "f", "h", "i", "j", "g2"]  # g2 at rank 11
    gold = ["g1", "g2"]
    assert recall_any(ranked, gold, 10) == 1.0
    assert recall_all(ranked, gold, 10) == 0.0
    assert recall_all(ranked, gold, 11) == 1.0
    assert reciprocal_rank(ranked, gold) == pytest.approx(0.5)
    assert rank_metrics(ranked, gold)["all@10"] == 0.0


def test_duplicate_gold_ids_do_not_change_all_at_k():
    assert recall_all(["g", "x"], ["g", "g"], 10) == 1.0


def test_no_gold_found():
    m = rank_metrics(["a", "b", "c"], ["g"])
    assert m == {"r@5": 0.0, "r@10": 0.0, "all@10": 0.0, "mrr": 0.0}
    assert first_gold_rank(["a"], ["g"]) is None


def test_empty_gold_never_counts_as_found():
    assert rank_metrics(["a", "b"], []) == {"r@5": 0.0, "r@10": 0.0, "all@10": 0.0, "mrr": 0.0}
    assert evidence_recall(["a"], []) == 0.0


def test_empty_ranking():
    assert rank_metrics([], ["g"])["mrr"] == 0.0


def test_evidence_recall_is_a_fraction_of_distinct_gold():
    assert evidence_recall(["a", "g1", "g3"], ["g1", "g2", "g3", "g4"]) == 0.5
    assert evidence_recall(["g1", "g1"], ["g1", "g2"]) == 0.5
    assert evidence_recall(["g1", "g2"], ["g1", "g2"]) == 1.0


def test_budget_labels():
    assert [budget_label(b) for b in (512, 1000, 2000, 1500, 4000)] == ["512", "1k", "2k", "1500", "4k"]
    assert er_key(1000) == "er@1k"


# ---------------------------------------------------------------- context packing at a budget

def test_pack_stops_at_first_turn_that_does_not_fit():
    tokens = {"a": 300, "b": 250, "c": 100, "d": 50}
    chosen, used = pack_by_budget(["a", "b", "c", "d"], tokens, 512)
    assert chosen == ["a"] and used == 300  # b does not fit; c and d would, but packing stops


def test_pack_exact_fit_and_first_turn_too_big():
    tokens = {"a": 256, "b": 256, "c": 1}
    assert pack_by_budget(["a", "b", "c"], tokens, 512) == (["a", "b"], 512)
    assert pack_by_budget(["big", "a"], {"big": 600, "a": 10}, 512) == ([], 0)


def test_pack_with_separator_cost():
    tokens = {"a": 100, "b": 100}
    assert pack_by_budget(["a", "b"], tokens, 200, separator_tokens=1) == (["a"], 100)
    assert pack_by_budget(["a", "b"], tokens, 201, separator_tokens=1) == (["a", "b"], 201)


def test_build_context_counts_match_the_fixed_tokenizer_and_budget_cuts():
    t0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = {
        "D1:1": render_turn("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", t0),
        "D1:2": render_turn("Melanie", "That's great! " * 40, t0 + timedelta(seconds=1)),
        "D1:3": render_turn("Caroline", "Thanks, Mel.", t0 + timedelta(seconds=2)),
    }
    tokens = dict(zip(turns, count_tokens_batch(list(turns.values()))))
    assert tokens == {k: count_tokens(v) for k, v in turns.items()}
    ranked = ["D1:1", "D1:2", "D1:3"]
    # Joining with a newline costs no word piece: the context's count is the sum of its lines.
    ids, text = build_context(ranked, turns, tokens, sum(tokens.values()))
    assert ids == ranked and count_tokens(text) == sum(tokens.values())
    # A budget that fits the first turn but not the long second one: the short third is not added.
    budget = tokens["D1:1"] + tokens["D1:2"] - 1
    ids, text = build_context(ranked, turns, tokens, budget)
    assert ids == ["D1:1"] and count_tokens(text) <= budget
    # Gold = the third turn: present only when the budget reaches it.
    assert evidence_recall(ids, ["D1:3"]) == 0.0
    assert evidence_recall(build_context(ranked, turns, tokens, 10_000)[0], ["D1:3"]) == 1.0


def test_render_turn_format():
    line = render_turn("Melanie", "Hi!", datetime(2023, 5, 8, 13, 56, 7, tzinfo=UTC))
    assert line == "[2023-05-08 13:56] Melanie: Hi!"


def test_token_count_is_word_pieces_without_special_tokens():
    assert count_tokens("") == 0
    assert count_tokens("hello") == 1
    assert count_tokens("hello world") == 2


# ---------------------------------------------------------------- question scoring and aggregation

def _q(qid, gold, cat="single_hop", conv="c1"):
    return Question(qid, conv, f"question {qid}?", cat, tuple(gold))


def test_score_question_per_budget_cutoff():
    q = _q("q1", ["g1", "g2"])
    ans = SystemAnswer(ranked=["x", "g1", "y", "g2"],
                       in_context={512: ["g1"], 1000: ["g1", "x"], 2000: ["x", "g1", "g2"]},
                       ctx_tokens={512: 480, 1000: 990, 2000: 1500})
    rec = score_question(q, ans, [512, 1000, 2000])
    assert rec["r@5"] == 1.0 and rec["all@10"] == 1.0 and rec["mrr"] == 0.5
    assert (rec["er@512"], rec["er@1k"], rec["er@2k"]) == (0.5, 0.5, 1.0)
    assert rec["ctx@2k"] == 1500.0


def test_score_question_truncates_ranking_to_top_k():
    q = _q("q1", ["g"])
    ans = SystemAnswer(ranked=["a", "b", "g"], in_context={}, ctx_tokens={})
    assert score_question(q, ans, [], top_k=2)["mrr"] == 0.0
    assert score_question(q, ans, [], top_k=3)["mrr"] == pytest.approx(1 / 3)


def test_aggregate_sets_categories_apart():
    recs = [
        {"category": "single_hop", "r@10": 1.0},
        {"category": "single_hop", "r@10": 0.0},
        {"category": "temporal", "r@10": 1.0},
        {"category": "adversarial", "r@10": 0.0},
    ]
    t = aggregate(recs, ["r@10"], apart=["adversarial"])
    assert t["single_hop"] == {"n": 2, "r@10": 0.5}
    assert t["overall"]["n"] == 3 and t["overall"]["r@10"] == pytest.approx(2 / 3)
    assert t["all"]["n"] == 4 and t["all"]["r@10"] == 0.5
    assert "all" not in aggregate(recs, ["r@10"])


def test_abstention_rate():
    assert abstain_rate([{"abstain": True, "items": [1]}, {"items": []}, {"items": [1]}, {"abstain": False, "items": [1]}]) == 0.5
    assert abstain_rate([{"items": [1]}]) == 0.0  # a missing field counts as not abstaining
    assert math.isnan(abstain_rate([]))


def test_summarize_scores_gold_questions_and_abstention_apart():
    ds = Dataset("beam", [Conversation("c1", [])], [
        _q("q1", ["g"], cat="information_extraction"),
        _q("q2", ["g", "h"], cat="event_ordering"),
        _q("q3", [], cat="abstention"),
        _q("q4", [], cat="abstention"),
    ], apart=("abstention",))
    answers = {
        "q1": SystemAnswer(["g"], {2000: ["g"]}, {2000: 100}),
        "q2": SystemAnswer(["a", "h"], {2000: ["h"]}, {2000: 300}),
        "q3": SystemAnswer([], {2000: []}, {2000: 0}),  # nothing returned: counts as abstaining
        "q4": SystemAnswer(["a"], {2000: ["a"]}, {2000: 40}, abstain=False),
    }
    s = summarize(ds, answers, [2000])
    assert s["table"]["overall"]["n"] == 2
    assert s["table"]["overall"]["er@2k"] == pytest.approx((1.0 + 0.5) / 2)
    assert s["table"]["overall"]["mrr"] == pytest.approx((1.0 + 0.5) / 2)
    assert "abstention" not in s["table"]
    assert s["abstention"]["n"] == 2 and s["abstention"]["abstain_rate"] == 0.5
    assert s["abstention"]["false_abstain_rate"] == 0.0


def test_percentile():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10], 95) == 10
    assert percentile(list(range(101)), 95) == 95
    assert math.isnan(percentile([], 50))


# ---------------------------------------------------------------- baselines

def test_tokenize_drops_stop_words_and_lowercases():
    assert tokenize("When did Caroline go to the LGBTQ support group?") == ["caroline", "go", "lgbtq", "support", "group"]
    assert tokenize("I'm at Mel’s place") == ["i'm", "mel's", "place"]


def test_rrf_fuses_full_rankings():
    fused = rrf([["a", "b", "c", "d"], ["d", "b", "c", "a"]])
    assert fused[:2] == ["b", "a"]  # 2/(60+2) beats 1/61 + 1/64; a ties d and comes first
    assert set(fused) == {"a", "b", "c", "d"}
    assert rrf([["a", "b", "c"], ["c", "b", "a"]])[0] == "a"  # 1/61 + 1/63 edges out 2/62
    assert rrf([["a", "b"], ["a", "b"]]) == ["a", "b"]


# ---------------------------------------------------------------- LoCoMo parsing

@pytest.mark.parametrize("text,expected", [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
    ("12:30 pm on 1 January, 2022", datetime(2022, 1, 1, 12, 30, tzinfo=UTC)),
    ("10:04 am on 19 December, 2023", datetime(2023, 12, 19, 10, 4, tzinfo=UTC)),
])
def test_parse_locomo_datetime(text, expected):
    assert parse_locomo_datetime(text) == expected


def test_parse_locomo_datetime_rejects_garbage():
    with pytest.raises(ValueError):
        parse_locomo_datetime("yesterday")


def test_photo_caption_goes_into_content_and_metadata():
    content, meta = locomo_turn_content({"speaker": "Melanie", "dia_id": "D1:14", "text": "Look at this!",
                                         "blip_caption": "a photo of a sunset over a lake", "query": "sunset"})
    assert content == "Look at this! [shares a photo of a photo of a sunset over a lake]"
    assert meta["blip_caption"] == "a photo of a sunset over a lake" and meta["dia_id"] == "D1:14"
    plain, meta2 = locomo_turn_content({"speaker": "A", "dia_id": "D1:1", "text": " Hi "})
    assert plain == "Hi" and "blip_caption" not in meta2


def test_locomo_conversation_orders_turns_by_seconds_within_a_session():
    sample = {"sample_id": "conv-x", "conversation": {
        "speaker_a": "A", "speaker_b": "B",
        "session_2_date_time": "9:00 am on 2 June, 2023",
        "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "later"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"},
                      {"speaker": "B", "dia_id": "D1:2", "text": "hey", "blip_caption": "a dog"}],
    }}
    conv = locomo_conversation(sample)
    assert [t.event_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conv.turns[1].occurred_at - conv.turns[0].occurred_at == timedelta(seconds=1)
    assert conv.turns[2].occurred_at == datetime(2023, 6, 2, 9, 0, tzinfo=UTC)
    ev = conv.turns[1].to_event(conv.id)
    assert ev["conversation_id"] == "conv-x" and ev["event_id"] == "D1:2" and ev["speaker"] == "B"
    assert ev["content"] == "hey [shares a photo of a dog]" and ev["metadata"]["blip_caption"] == "a dog"
    assert datetime.fromisoformat(ev["occurred_at"]) == datetime(2023, 5, 8, 13, 56, 1, tzinfo=UTC)


def test_clean_locomo_evidence():
    known = {"D8:6", "D9:17", "D11:26", "D1:3"}
    ids, rejected = clean_locomo_evidence(["D8:6; D9:17", "D:11:26", "D", "D4:36", "D1:3", "D1:3"], known)
    assert ids == ["D8:6", "D9:17", "D11:26", "D1:3"]
    assert rejected == ["D", "D4:36"]


# ---------------------------------------------------------------- BEAM parsing

def test_source_chat_ids_list_and_dict_forms():
    assert parse_source_chat_ids("[28, 29]") == [28, 29]
    assert parse_source_chat_ids("{'first_statement': [58], 'second_statement': [24]}") == [58, 24]
    assert parse_source_chat_ids("{'original_info': [86, 90], 'updated_info': [114, 86]}") == [86, 90, 114]
    assert parse_source_chat_ids([6, 62, 118, 118, 120]) == [6, 62, 118, 120]  # already parsed, duplicates
    assert parse_source_chat_ids({"a": [1], "b": [[2, 3]]}) == [1, 2, 3]
    assert parse_source_chat_ids(None) == [] and parse_source_chat_ids("") == [] and parse_source_chat_ids("[]") == []


def test_clip_utf8_keeps_whole_characters():
    from bench.datasets import clip_utf8

    assert clip_utf8("abc", 10) == ("abc", False)
    assert clip_utf8("aé" * 3, 4) == ("aéa", True)
    assert clip_utf8("aé" * 3, 5) == ("aéa", True)  # "é" is 2 bytes: the cut never splits it
    assert clip_utf8("aéb", 2) == ("a", True)


def test_parse_beam_anchor():
    assert parse_beam_anchor("March-15-2024") == datetime(2024, 3, 15, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_beam_anchor("the 15th")


def test_beam_turns_inherit_the_last_anchor_and_keep_order():
    chat = [
        {"batch_number": 1, "time_anchor": None, "turns": [
            [{"role": "user", "id": 0, "time_anchor": "March-15-2024", "content": "a"},
             {"role": "assistant", "id": 1, "content": "b"}],
            [{"role": "user", "id": 2, "content": "c"}, {"role": "assistant", "id": 3, "content": "d"}],
        ]},
        {"batch_number": 2, "time_anchor": None, "turns": [
            [{"role": "user", "id": 4, "time_anchor": "April-05-2024", "content": "e"}],
        ]},
    ]
    turns = beam_turns(chat)
    assert [t.event_id for t in turns] == ["0", "1", "2", "3", "4"]
    assert [t.speaker for t in turns[:2]] == ["user", "assistant"]
    assert turns[3].occurred_at == datetime(2024, 3, 15, 0, 0, 3, tzinfo=UTC)
    assert turns[4].occurred_at == datetime(2024, 4, 5, tzinfo=UTC)
    assert all(a.occurred_at < b.occurred_at for a, b in itertools.pairwise(turns))


def test_load_beam_from_files(tmp_path):
    d = tmp_path / "beam100k" / "1"
    d.mkdir(parents=True)
    (d / "chat.json").write_text(json.dumps([{"batch_number": 1, "time_anchor": None, "turns": [[
        {"role": "user", "id": 0, "time_anchor": "March-15-2024", "content": "My sprint ends March 29."},
        {"role": "assistant", "id": 1, "content": "Noted."}]]}]))
    (d / "probing_questions.json").write_text(json.dumps({
        "abstention": [{"question": "What did my boss say?", "ideal_response": "No information."}],
        "knowledge_update": [{"question": "When does it end?", "answer": "March 29",
                              "source_chat_ids": "{'original_info': [0], 'updated_info': [1]}"}],
    }))
    ds = load_beam(tmp_path)
    assert [c.id for c in ds.conversations] == ["beam-1"]
    # each turn is posted with its role, which the asker factor reads
    assert [t.to_event("beam-1")["role"] for t in ds.conversations[0].turns] == ["user", "assistant"]
    q = {x.category: x for x in ds.questions}
    assert q["knowledge_update"].gold == ("0", "1") and q["knowledge_update"].conversation_id == "beam-1"
    assert q["abstention"].gold == () and q["abstention"].abstention


def test_load_locomo_from_file(tmp_path):
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo_dev7.json").write_text(json.dumps([{
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
                         "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
        "qa": [{"question": "Q?", "answer": "x", "evidence": ["D1:1"], "category": 4},
               {"question": "Adv?", "adversarial_answer": "y", "evidence": ["D1:1"], "category": 5}],
    }]))
    ds = load_locomo(tmp_path)
    assert "role" not in ds.conversations[0].turns[0].to_event("conv-1")  # two people, no roles
    assert [(q.category, q.gold) for q in ds.questions] == [("single_hop", ("D1:1",)), ("adversarial", ("D1:1",))]
    assert ds.apart == ("adversarial",)


# ---------------------------------------------------------------- subsets and CLI helpers

def test_spread_and_subset():
    assert spread(list(range(10)), 3) == [0, 3, 6]
    assert spread([1, 2], 5) == [1, 2]
    convs = [Conversation(f"c{i}", [Turn("1", "a", "x", datetime(2024, 1, 1, tzinfo=UTC))]) for i in range(3)]
    qs = [_q(f"c{i}:{j}", ["1"], conv=f"c{i}") for i in range(3) for j in range(10)]
    small = subset(Dataset("t", convs, qs), limit=2, conversations=2)
    assert [c.id for c in small.conversations] == ["c0", "c1"]
    assert [q.qid for q in small.questions] == ["c0:0", "c0:5", "c1:0", "c1:5"]
    named = subset(Dataset("t", convs, qs), only=("c2", "c0"))
    assert [c.id for c in named.conversations] == ["c0", "c2"] and len(named.questions) == 20
    with pytest.raises(ValueError, match="c9"):
        subset(Dataset("t", convs, qs), only=("c9",))


def test_parse_pipeline_overrides():
    assert parse_overrides(["rerank=false", "fusion.k=30", "intent=temporal", "weights={\"dense\": 2}"]) == {
        "rerank": False, "fusion": {"k": 30}, "intent": "temporal", "weights": {"dense": 2}}
    with pytest.raises(ValueError):
        parse_overrides(["novalue"])


def test_pending_total():
    assert pending_total({"events": 5, "pending": {"embed": 2, "graph": 1}}) == 3
    assert pending_total({"events": 5, "pending": {}}) == 0
    assert pending_total({"events": 5, "pending": {"embed": 0, "graph": 7}}, ["embed"]) == 0


def test_result_json_is_strict_and_columnar():
    from bench.report import to_json

    result = {"benchmark": "locomo", "systems": {"bm25": {
        "table": {"overall": {"n": 2, "r@10": float("nan")}},
        "records": [{"qid": "a", "r@10": 1.0, "mrr": 1 / 3}, {"qid": "b", "r@10": 0.0, "mrr": 0.0}]}}}
    back = json.loads(to_json(result))
    assert back["systems"]["bm25"]["table"]["overall"]["r@10"] is None
    assert back["systems"]["bm25"]["records"] == {"columns": ["qid", "r@10", "mrr"],
                                                  "rows": [["a", 1, 0.3333], ["b", 0, 0]]}


def test_markdown_tables_show_service_beside_baselines_with_ratios():
    from bench.report import category_table, metric_table

    def summ(v):
        return {"table": {"single_hop": {"n": 3, "r@10": v}, "overall": {"n": 3, "r@10": v}}}

    result = {"budgets": [], "systems": {"service": summ(0.9), "bm25": summ(0.6), "dense": summ(0.0)}}
    lines = category_table(result, "r@10")
    assert lines[0] == "| category (n) | service | bm25 | dense | service/bm25 | service/dense |"
    assert lines[2] == "| single_hop (3) | 0.900 | 0.600 | 0.000 | 1.50× | — |"
    assert any(line.startswith("| r@10 | 0.900 | 0.600 |") for line in metric_table(result, "overall"))


def test_one_embedded_run_per_var_dir(tmp_path):
    from bench.harness import exclusive

    with exclusive(tmp_path), pytest.raises(RuntimeError, match="another benchmark"), exclusive(tmp_path):
        pass
    with exclusive(tmp_path):  # released
        pass


def test_calibrate_floor_separates_and_respects_the_false_abstain_cap():
    from bench.metrics import calibrate_floor

    no_answer = [0.1, 0.2, 0.3, 0.6]
    answerable = [0.25, 0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.99]
    f = calibrate_floor(no_answer, answerable, max_false_abstain=0.10)
    assert f["floor"] == 0.5 and f["abstain_rate"] == 0.75 and f["false_abstain_rate"] == 0.1
    assert calibrate_floor(no_answer, answerable, max_false_abstain=0.0)["floor"] == 0.25
    assert calibrate_floor([], answerable)["floor"] == 0.0


def test_ablation_table_shows_each_stage_change_per_category():
    from bench.ablate import markdown as ablation_md, variants

    assert variants(["rerank", "neighbours"]) == [("all on", {}), ("-rerank", {"rerank": False}),
                                                   ("-neighbours", {"neighbours": 0})]
    assert variants(["derived"], default_off=["derived"]) == [("all on", {}), ("+derived", {"derived": True})]

    def svc(r10: float, er: float) -> dict:
        row = {"r@5": 0.5, "r@10": r10, "all@10": 0.4, "mrr": 0.3, "er@2k": er}
        return {"service": {"table": {"overall": row, "temporal": row}, "latency": {"p50_ms": 80.0, "p95_ms": 120.0}}}

    md = ablation_md({"benchmark": "locomo", "budgets": [2000], "only": ["conv-43"], "limit": None, "variants": {
        "all on": {"pipeline": {}, "run_id": "a", "systems": svc(0.70, 0.80)},
        "-rerank": {"pipeline": {"rerank": False}, "run_id": "b", "systems": svc(0.65, 0.81)}}})
    assert "| -rerank | 0.500 | 0.650 |" in md
    assert "| -rerank | -0.050 | -0.050 |" in md and "| -rerank | +0.010 | +0.010 |" in md
