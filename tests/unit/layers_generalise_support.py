"""What the layer rules' test modules share: a conversation of turns a week apart from a Monday, its timeline
(the rule extractor, then consolidation), its claims as the service reads them (the rules and the shipped span
model), one entry of a timeline, found or named as missing, the time spans a text's expressions resolve to, and
the one span of given words, said at noon on a given day."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from app.adapters.span_model import installed_span_model
from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.events import LayerEvent
from app.domain.layers.timeparse import resolve_time_expressions


T0 = datetime(2024, 2, 5, 9, 0, tzinfo=timezone.utc)  # a Monday


def events(*turns: tuple[str, str], days: int = 7) -> list[LayerEvent]:
    return [LayerEvent(str(i), sp, text, T0 + timedelta(days=days * i), "c", seq=i)
            for i, (sp, text) in enumerate(turns)]


def timeline(*turns: tuple[str, str], days: int = 7):
    return build_timeline(extract_all(events(*turns, days=days)))[0]


def span_claims(*turns: tuple[str, str]) -> set[tuple[str, str, str]]:
    """(entity, attribute, value) of every claim the rules and the shipped span model read off the turns."""
    model = installed_span_model()
    assert model is not None
    return {(a.entity, a.attribute, a.value) for a in extract_all(events(*turns), spans=model)}


def entry(tl, attribute: str, value: str, negated: bool = False):
    hits = [a for a in tl if a.attribute == attribute and a.value == value and a.negated == negated]
    assert hits, f"no {attribute} = {'NOT ' if negated else ''}{value} in {[(a.attribute, a.value, a.negated) for a in tl]}"
    return hits[0]


def time_spans(text: str, at: datetime) -> list[tuple[str, str | None, str | None]]:
    """(words, range start, range end) of every time expression of `text` said at `at`."""
    return [(m.surface, m.range_start, m.range_end) for m in resolve_time_expressions(text, at)]


def at(y: int, m: int, d: int) -> datetime:
    """Noon UTC of a day: when a test's sentence is said."""
    return datetime(y, m, d, 12, tzinfo=timezone.utc)


def span_of(words: str, text: str, when: datetime) -> tuple[str | None, str | None]:
    """The resolved span of the first expression of `text` whose words hold `words` (case aside); fails when none does."""
    got = [(s, e) for w, s, e in time_spans(text, when) if words.lower() in w.lower()]
    assert got, f"{words!r} not read in {text!r}: {time_spans(text, when)}"
    return got[0]
