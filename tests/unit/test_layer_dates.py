"""A turn's dates as the graph layer read them (graph/5): the fold hands back each turn's time mentions, read
with every turn before it; its signal row keeps them; a query's context shows them beside the words without
reading the turn again, and reads it itself when the row is another version's or does not fit the turn."""
from __future__ import annotations

from datetime import datetime, timezone

from app.domain.layers import timeparse
from app.domain.layers.events import LayerEvent
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.graph_fold import FactFold
from app.domain.layers.graph_model import LAYER_VERSION
from app.domain.layers.graph_rows import mention_dict, signal_row, turn_mentions
from app.domain.layers.timeparse import TimeMention
from app.domain.layers.timeturns import resolve_turns
from app.domain.retrieval.assemble import ContextItem, annotate_dates, render_line

AT = datetime(2025, 9, 28, 20, 0, tzinfo=timezone.utc)
TURNS = [
    ("Anouk", "Mum turns seventy on the 22nd of November. Party or no party?"),
    ("Theo", "Party, obviously. Somewhere small, she hates a fuss."),
    ("Anouk", "The 22nd is a Saturday, so lunch at the Olive Tree?"),
    ("Theo", "Lunch works. Aunt Odile flies in the night before."),
]
VERSION = f"{LAYER_VERSION}+assertions/13+{timeparse.LAYER_VERSION}+graph_extract/14"


def events() -> list[LayerEvent]:
    return [LayerEvent(str(i), who, text, AT.replace(minute=i), "party", seq=i) for i, (who, text) in enumerate(TURNS)]


def test_the_fold_hands_back_each_turn_read_with_the_turns_before_it():
    fold = FactFold(3, RuleExtractor())
    got = [fold.add(e) for e in events()]
    want = [ms for _, ms in resolve_turns((e.content, e.occurred_at) for e in events())]
    assert got == want
    lunch, odile = got[2], got[3]
    assert [(m.surface, m.label) for m in lunch] == [("The 22nd", "22 November 2025")]  # alone: 22 October
    assert TURNS[2][1][lunch[0].start:lunch[0].end] == "The 22nd"  # offsets into the whole turn
    assert [(m.surface, m.label) for m in odile] == [("the night before", "21 November 2025")]


def test_the_signal_row_keeps_the_turn_mentions_and_they_read_back():
    ms = [m for _, found in resolve_turns((e.content, e.occurred_at) for e in events()) for m in found]
    lunch = [m for m in ms if m.surface == "The 22nd"]
    row = signal_row(3, "Anouk", [], [], VERSION, [mention_dict(m) for m in lunch])
    assert row["time_mentions"][0]["label"] == "22 November 2025"
    assert turn_mentions(VERSION, TURNS[2][1], row["time_mentions"]) == tuple(lunch)
    # without a turn's mentions the row keeps the facts' (a clause's offsets), as before graph/5
    assert signal_row(3, "Anouk", [], lunch, VERSION)["time_mentions"] == [mention_dict(lunch[0])]


def test_a_row_of_another_version_or_that_does_not_fit_the_turn_is_read_again():
    data = [{"surface": "The 22nd", "start": 0, "end": 8, "kind": "relative", "resolved": True,
             "date": "2025-11-22", "granularity": "day", "label": "22 November 2025"}]
    text = TURNS[2][1]
    assert turn_mentions(VERSION, text, data) is not None
    assert turn_mentions(VERSION.replace(LAYER_VERSION, "graph/4"), text, data) is None
    assert turn_mentions(VERSION.replace(timeparse.LAYER_VERSION, "timeparse/1"), text, data) is None
    assert turn_mentions(None, text, data) is None
    assert turn_mentions(VERSION, "Lunch works. " + text, data) is None  # offsets of another content
    assert turn_mentions(VERSION, text, [{**data[0], "colour": "red"}]) is None  # a field it does not know
    assert turn_mentions(VERSION, "Nothing dated here.", []) == ()


def test_the_context_shows_the_stored_dates_not_a_reading_of_the_turn_alone():
    text = TURNS[2][1]
    stored = (TimeMention("The 22nd", 0, 8, "relative", True, "2025-11-22", None, None, "day", "22 November 2025"),)
    alone = annotate_dates(text, AT)
    assert alone.startswith("The 22nd [22 October 2025]")  # read alone: the nearest 22nd
    assert annotate_dates(text, AT, mentions=stored).startswith("The 22nd [22 November 2025] is a Saturday")
    line = render_line(ContextItem(1, "Anouk", text, AT, mentions=stored), form="none")
    assert line == "Anouk: The 22nd [22 November 2025] is a Saturday, so lunch at the Olive Tree?"
    assert annotate_dates(text, AT, mentions=()) == text  # the layers found no date: none is added
