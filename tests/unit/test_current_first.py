"""`current_first`: a question asking for a current value gets the statement that replaced a
candidate just above it (issue #19 item 4: knowledge-update questions prefer the current value)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from app.domain.retrieval.ranking import RankedItem, current_first, newest_in_chain

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


@dataclass
class Ev:
    id: int
    conversation_id: str = "c"
    speaker: str = "Ana"
    role: str | None = None
    content: str = ""
    occurred_at: datetime = T0


@dataclass
class Sig:
    superseded_by: int | None = None


@dataclass
class Scope:
    speakers: tuple[str, ...] | None = None
    start: datetime | None = None
    end: datetime | None = None


def ranked(*ids: int) -> list[RankedItem]:
    return [RankedItem(Ev(i, occurred_at=T0 + timedelta(days=i)), 10.0 - n) for n, i in enumerate(ids)]


def order(items: list[RankedItem]) -> list[int]:
    return [r.event.id for r in items]


def test_the_newer_statement_moves_just_above_the_one_it_replaced():
    out = current_first(ranked(1, 2, 3, 4), signals_of={1: Sig(superseded_by=4)}, events={}, scope=Scope(), depth=100)
    assert order(out) == [4, 1, 2, 3]
    assert out[0].stages["current_first"] == {"supersedes": 1, "rank_before": 4}
    scores = [r.score for r in out]
    assert scores == sorted(scores, reverse=True)  # still in rank order


def test_a_chain_brings_its_newest_statement_and_an_unretrieved_one_is_brought_in():
    sig = {1: Sig(superseded_by=5), 5: Sig(superseded_by=7)}
    events = {7: Ev(7, occurred_at=T0 + timedelta(days=7))}
    assert newest_in_chain(1, sig) == 7
    out = current_first(ranked(1, 2), signals_of=sig, events=events, scope=Scope(), depth=100)
    assert order(out) == [7, 1, 2]
    assert out[0].stages["current_first"]["rank_before"] is None


def test_nothing_moves_when_the_newer_one_already_ranks_higher_or_is_out_of_scope():
    sig = {3: Sig(superseded_by=1)}
    assert order(current_first(ranked(1, 2, 3), signals_of=sig, events={}, scope=Scope(), depth=100)) == [1, 2, 3]
    events = {9: Ev(9, speaker="Ben")}
    out = current_first(ranked(1, 2), signals_of={1: Sig(superseded_by=9)}, events=events,
                        scope=Scope(speakers=("Ana",)), depth=100)
    assert order(out) == [1, 2]  # the scope asks for Ana's turns only


def test_only_the_head_moves():
    out = current_first(ranked(1, 2, 3), signals_of={3: Sig(superseded_by=1)}, events={}, scope=Scope(), depth=2)
    assert order(out) == [1, 2, 3]
    out = current_first(ranked(1, 2, 3), signals_of={2: Sig(superseded_by=3)}, events={}, scope=Scope(), depth=1)
    assert order(out) == [1, 2, 3]
