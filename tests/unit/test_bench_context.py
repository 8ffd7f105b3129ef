"""The benchmark's baseline context packing at a token budget, and the baselines' tokenizer and RRF.
Token counts use the real (cheap) tokenizer only."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench.baselines import rrf, tokenize
from bench.context import build_context, count_tokens, count_tokens_batch, render_turn
from bench.metrics import evidence_recall, pack_by_budget


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


def test_tokenize_drops_stop_words_and_lowercases():
    assert tokenize("When did Caroline go to the LGBTQ support group?") == ["caroline", "go", "lgbtq", "support", "group"]
    assert tokenize("I'm at Mel’s place") == ["i'm", "mel's", "place"]


def test_rrf_fuses_full_rankings():
    fused = rrf([["a", "b", "c", "d"], ["d", "b", "c", "a"]])
    assert fused[:2] == ["b", "a"]  # 2/(60+2) beats 1/61 + 1/64; a ties d and comes first
    assert set(fused) == {"a", "b", "c", "d"}
    assert rrf([["a", "b", "c"], ["c", "b", "a"]])[0] == "a"  # 1/61 + 1/63 edges out 2/62
    assert rrf([["a", "b"], ["a", "b"]]) == ["a", "b"]
