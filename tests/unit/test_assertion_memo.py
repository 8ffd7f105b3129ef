"""The rules read each event once per process (`assertions._memo`), for every layer that asks: the
answer is the same as reading it afresh, and a caller that changes its list changes no one else's."""
from __future__ import annotations

from datetime import datetime, timezone

from app.domain.layers import assertions
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 3, 4, 10, 0, tzinfo=timezone.utc)


def test_a_second_reading_gives_the_same_claims_and_its_own_list():
    ev = LayerEvent("e1", "Noor", "I moved to Porto last month and I work at Fernhill Labs now.", T0, "c")
    fresh = assertions._extract(ev, "", None)
    assert {(a.attribute, a.value) for a in fresh} >= {("lives_in", "Porto")}
    first = assertions.extract_assertions(ev)
    second = assertions.extract_assertions(ev)
    assert first == second == fresh
    first.clear()  # consolidation appends to the list it gets; no other layer may see that
    assert assertions.extract_assertions(ev) == fresh


def test_the_turn_before_is_part_of_the_key():
    ev = LayerEvent("e2", "Ana", "She works at Fernhill Labs now.", T0, "c")
    assert assertions.extract_assertions(ev) == []  # whom "she" means is unknown alone
    told = assertions.extract_assertions(ev, "My sister Leah called.")
    assert [(a.entity, a.attribute, a.value) for a in told] == [("Leah", "works_at", "Fernhill Labs")]
    assert assertions.extract_assertions(ev) == []  # the reading with context did not replace this one
