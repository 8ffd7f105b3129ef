"""The context shows what the layers resolved: dates beside the words, superseded turns marked, and
the superseding turn brought in next to the one it replaced."""
from __future__ import annotations

from datetime import datetime

from app.domain.retrieval.assemble import AssemblyPlan, ContextItem, annotate_dates, assemble, render_line

TUE_18_APR = datetime(2023, 4, 18, 10, 0)


def words(text: str) -> int:
    return len(text.split())


def test_relative_dates_get_their_absolute_date_beside_the_words():
    assert annotate_dates("We hiked last Saturday and I fly out next week.", TUE_18_APR) == (
        "We hiked last Saturday [15 April 2023] and I fly out next week [week of 24 April 2023].")
    assert annotate_dates("I'm moving at the end of May.", datetime(2023, 5, 20)) == (
        "I'm moving at the end of May [late May 2023].")


def test_dates_that_name_their_year_and_vague_ones_are_left_alone():
    text = "We met on 3 March 2021, and the other day I saw her again."
    assert annotate_dates(text, TUE_18_APR) == text


def test_a_superseded_turn_says_so_with_the_date_of_the_newer_one():
    old = ContextItem(1, "Rosa", "I work on the billing team.", datetime(2023, 1, 5, 9), superseded_by=2,
                      superseded_at=datetime(2023, 3, 2, 9))
    assert render_line(old) == "[2023-01-05 09:00] Rosa: I work on the billing team. [superseded by a later statement of 2023-03-02]"
    assert render_line(ContextItem(2, "Rosa", "I moved to search.", datetime(2023, 3, 2, 9))).endswith("search.")


def test_the_superseding_turn_joins_the_context_beside_the_one_it_replaced():
    old = ContextItem(1, "Rosa", "I work on the billing team.", datetime(2023, 1, 5, 9), superseded_by=3)
    filler = [ContextItem(10 + i, "Ama", f"unrelated chatter {i}", datetime(2023, 2, 1 + i, 9)) for i in range(5)]
    new = ContextItem(3, "Rosa", "I switched to the search team.", datetime(2023, 3, 2, 9))
    ranked = [old, *filler, new]  # the newer turn ranks last, past the direct evidence
    ctx = assemble(ranked, 1000, words, plan=AssemblyPlan(direct=2, neighbour_of=0, notice=False))
    assert 3 in ctx.included and ctx.reasons[3] == "supersedes #1"
    lines = ctx.text.splitlines()
    assert lines[0].endswith("[superseded by a later statement]") and lines[-1].endswith("search team.")
