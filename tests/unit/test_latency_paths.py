"""The query's shortcuts give the answers of the long way (issue #17, latency): the abstain features'
stem search, the token lower bound, and context assembly that skips lines the bound rules out."""
from __future__ import annotations

import random
from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.retrieval.abstain import question_terms, stem, stems_found, text_stems
from app.domain.retrieval.assemble import AssemblyPlan, ContextItem, assemble, render_line
from app.domain.retrieval.tokens import wordpiece_floor

# letters that stem or lower-case unusually (final sigma, dotted I, curly apostrophes), words ending
# in "ies" / "'s", punctuation, digits, controls, spaces of several kinds
PIECES = ["Σ", "ς", "σ", "İ", "ß", "é", "’", "'", "-", "&", ".", ",", "!", "?", "[", "]", "ies", "'s", "s", "ed",
          "ing", "y", "Y", "\x0b", "\x1c", "\u200b", "\u0301", "\xa0", "\t", "\n", " ", " ", " ", "7", "2023",
          "ana", "Ana", "LIES", "stories", "story", "cities", "city", "teams", "team's", "art", "start", "Party",
          "ΣΟΦΙΑΣ", "σοφίας", "naïve", "x" * 7, "中文", "🙂"]
text_st = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(text_st, max_size=6), query=text_st, extra=st.lists(text_st, max_size=3))
def test_stems_found_is_the_stems_every_word_would_give(texts, query, extra):
    stems = question_terms(query) + sorted(text_stems(extra)) + sorted(text_stems(texts))[:3]
    assert stems_found(stems, texts) == {s for s in stems if s in text_stems(texts)}


def test_stems_found_on_plain_sentences():
    texts = ["Ana: The stories of two cities.", "Ben: my team's colours", "", "Σοφίας: ΣΟΦΙΑΣ"]
    greek = stem("σοφίας")  # the final sigma: "ΣΟΦΙΑΣ" lower-cased inside the text ends in "ς" too
    assert stems_found(["story", "city", "team", "colour", "lake", greek], texts) == {
        "story", "city", "team", "colour", greek}
    assert stems_found(["story"], ["a history lesson"]) == set()  # "history" holds "stor", stems to "histor"
    assert stems_found([], texts) == set() and stems_found(["team"], []) == set()


@settings(max_examples=300, deadline=None)
@given(text=text_st)
def test_the_floor_never_exceeds_the_tokenizer(embedder, text):
    assert wordpiece_floor(text) <= embedder.count_tokens(text)


def test_the_floor_on_characters_the_normaliser_drops(embedder):
    # a vertical tab or separator splits for Python, but BERT drops it and joins the two words
    for text in ["a\x0bb", "a\x1cb", "7\x0c7", "a\u200bb", "e\u0301 x", "x\x85y", "\x00", "", "ok ! ?"]:
        assert wordpiece_floor(text) <= embedder.count_tokens(text), repr(text)


@settings(max_examples=300, deadline=None)
@given(text=text_st, at=st.integers(0, 200), label=st.sampled_from(["15 April 2023", "Σ 2", "x", "-"]))
def test_inserting_a_spaced_note_never_lowers_the_floor(text, at, label):
    at = min(at, len(text))
    assert wordpiece_floor(text[:at] + f" [{label}]" + text[at:]) >= wordpiece_floor(text)


def test_the_embedder_offers_the_floor_for_its_bert_tokenizer(embedder):
    assert embedder.token_floor is wordpiece_floor
    line = "[2023-05-08 14:00] Ana: I went there last Saturday, with Ben."
    assert 0 < wordpiece_floor(line) <= embedder.count_tokens(line)


def _items(rng: random.Random, n: int) -> list[ContextItem]:
    start = datetime(2023, 4, 1, 9)
    out = []
    for i in range(n):
        words = rng.randint(1, 120)
        content = " ".join(rng.choice(["we", "went", "there", "last", "Saturday", "yesterday", "2 days ago",
                                       "lake", "in", "June", "—", "ok!"]) for _ in range(words))
        newer = rng.choice([None, None, None, rng.randint(1, n)])
        out.append(ContextItem(i + 1, rng.choice(["Ana", "Ben", ""]), content, start + timedelta(hours=7 * i),
                               newer, start + timedelta(days=30) if newer else None))
    return out


def test_assembly_with_the_floor_chooses_what_it_chooses_without(embedder):
    rng = random.Random(7)
    for trial in range(40):
        items = _items(rng, rng.randint(1, 60))
        ranked = rng.sample(items, len(items))
        near = {it.id: rng.sample(items, min(2, len(items))) for it in ranked[:5]}
        budget = rng.choice([0, 30, 200, 600, 2000])
        plan = AssemblyPlan(direct=rng.choice([3, 10]), neighbour_of=rng.choice([0, 5]), notice=trial % 2 == 0)
        fast = assemble(ranked, budget, embedder.count_tokens, neighbours=near, plan=plan, at_least=wordpiece_floor)
        slow = assemble(ranked, budget, lambda t: embedder.count_tokens(t), neighbours=near, plan=plan)
        assert (fast.text, fast.tokens, fast.included, fast.reasons, fast.left_out) == \
            (slow.text, slow.tokens, slow.included, slow.reasons, slow.left_out)
        assert fast.tokens == embedder.count_tokens(fast.text) <= budget


def test_lines_the_floor_rules_out_are_never_rendered_and_counted():
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return len(text.split()) + 5  # at least the floor of a plain line

    short = ContextItem(1, "Ana", "a short line", datetime(2023, 5, 1))
    long = ContextItem(2, "Ben", "word " * 300, datetime(2023, 5, 2))
    ctx = assemble([short, long], 60, count, plan=AssemblyPlan(notice=False), at_least=wordpiece_floor)
    assert ctx.included == frozenset({1}) and ctx.text == render_line(short)
    assert render_line(long) not in counted
    exact = wordpiece_floor(render_line(short))  # a line that fills the room to the token still fits
    assert assemble([short], exact, wordpiece_floor, plan=AssemblyPlan(notice=False),
                    at_least=wordpiece_floor).included == frozenset({1})


def test_a_changed_turn_is_counted_again_not_remembered_by_its_id():
    def count(text: str) -> int:
        return len(text.split())

    short = ContextItem(9, "Ana", "fine", datetime(2023, 5, 1))
    longer = ContextItem(9, "Ana", "fine " * 40, datetime(2023, 5, 1))  # the same event, corrected
    plan = AssemblyPlan(notice=False)
    assert assemble([short], 10, count, plan=plan, at_least=wordpiece_floor).included == frozenset({9})
    assert assemble([longer], 10, count, plan=plan, at_least=wordpiece_floor).included == frozenset()
    assert assemble([longer], 10, count, plan=plan).included == frozenset()
