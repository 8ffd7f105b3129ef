"""`palimpsest query`'s text: at 80 columns (or 40) every line fits, the content is wrapped whole, and
each item says which signals found it at which rank."""
from __future__ import annotations

from app.commands.query import render

LONG = ("We moved to Denver last spring, after my sister Leah found a job there and the kids wanted snow; "
        "the house is small but close to the park, and https://example.org/a-very-long-link-without-spaces-at-all "
        "is where the listing was.")
OUT = {
    "items": [
        {"score": 0.81234, "occurred_at": "2024-03-02T10:00:00Z", "speaker": "Ana", "in_context": True,
         "content": LONG, "signals": {"dense": {"rank": 1, "score": 0.532}, "lexical": {"rank": 3, "score": 4.11}}},
        {"score": 0.5, "occurred_at": "2024-03-03T09:30:00Z", "speaker": "Ben", "in_context": False,
         "content": "My dog Rex loves the snow.\nHe digs all day.", "signals": {"graph": {"rank": 2, "score": 0.1}}},
    ],
    "context_tokens": 230, "intent": {"label": "temporal"},
    "context": "[2 Mar 2024] Ana: " + LONG,
}


def test_fits_80_columns_and_keeps_every_word():
    text = render("Which city did Ana relocate to?", OUT, 80, show_context=True)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80
    body = " ".join(line.strip() for line in lines)
    assert "We moved to Denver last spring, after my sister Leah found a job there" in body
    assert "close to the park" in body and "He digs all day." in body
    assert lines[0] == "Which city did Ana relocate to?"
    assert "2 items, 230 context tokens, intent temporal" in lines[1]
    first = next(line for line in lines if line.startswith(" 1. "))
    assert first == " 1. 0.8123  2024-03-02 10:00  Ana  [in context]"
    assert "    dense #1 (0.532) · lexical #3 (4.110)" in lines
    assert "    graph #2 (0.100)" in lines
    assert lines[lines.index("context:") + 2].startswith("[2 Mar 2024] Ana: We moved")


def test_narrow_terminal():
    lines = render("Which city did Ana relocate to?", OUT, 40).splitlines()
    assert max(map(len, lines)) <= 40
    item = lines.index(next(line for line in lines if line.startswith(" 1. ")))
    block = lines[item + 1:lines.index("", item)]
    assert block and all(line.startswith("    ") for line in block)  # the item's lines sit indented under it
    assert "https://example.org/a-very" in " ".join(block)  # a word longer than the line is broken, not lost


def test_no_items():
    assert render("anything?", {"items": [], "context_tokens": 0, "abstain": True}, 80).splitlines()[1] == \
        "0 items, 0 context tokens, abstain"
