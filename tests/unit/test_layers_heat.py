"""Heat and decay (Cortex §4.4.1): ACT-R base-level activation, importance, stages and floors."""
from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.heat import (
    MAX_KEPT,
    STAGES,
    HeatRecord,
    Stage,
    base_level_activation,
    base_level_approx,
    bump,
    compute_heat,
    consolidation_stage,
    heat_now,
    memory_created_at,
    new_record,
    record_access,
    refresh,
    retrieved,
    with_importance,
)

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def h(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def test_base_level_is_the_actr_sum():
    times = [h(0), h(10), h(19)]
    expected = math.log(20 ** -0.5 + 10 ** -0.5 + 1 ** -0.5)
    assert base_level_activation(times, h(20)) == pytest.approx(expected)
    # the closed form agrees for one presentation
    assert base_level_activation([h(0)], h(16)) == pytest.approx(base_level_approx(1, 16))


def test_stages_follow_age_and_advance_early():
    assert consolidation_stage(T0, h(0.5)) is Stage.LABILE
    assert consolidation_stage(T0, h(2)) is Stage.EARLY_LTP
    assert consolidation_stage(T0, h(7)) is Stage.LATE_LTP
    assert consolidation_stage(T0, h(30)) is Stage.CONSOLIDATED
    assert consolidation_stage(T0, h(0.5), importance=0.65) is Stage.EARLY_LTP
    assert consolidation_stage(T0, h(0.5), importance=0.8) is Stage.LATE_LTP
    assert consolidation_stage(T0, h(2), replays=1) is Stage.LATE_LTP
    assert consolidation_stage(T0, h(7), replays=3) is Stage.CONSOLIDATED


def test_heat_decays_monotonically_and_stops_at_the_floor():
    rec = new_record(T0)
    series = [compute_heat(rec, h(x)) for x in (0.1, 0.5, 1, 3, 6, 12, 24, 48, 24 * 30, 24 * 3650)]
    heats = [s.heat for s in series]
    assert all(a >= b for a, b in zip(heats, heats[1:]))  # no jump up at a stage change
    assert heats[0] > 0.6  # six minutes old: still hot
    assert series[-1].stage is Stage.CONSOLIDATED and heats[-1] == STAGES[Stage.CONSOLIDATED].floor == 0.10
    late = compute_heat(replace(rec, importance=0.0), h(23))
    assert late.stage is Stage.LATE_LTP and late.heat >= 0.05


def test_labile_memories_cool_faster_than_consolidated_ones():
    rec = new_record(T0)
    drop_labile = compute_heat(rec, h(0.1)).heat - compute_heat(rec, h(0.9)).heat
    drop_consolidated = compute_heat(rec, h(30.1)).heat - compute_heat(rec, h(30.9)).heat
    assert drop_labile > 10 * drop_consolidated


def test_importance_and_access_raise_heat():
    now = h(48)
    assert compute_heat(new_record(T0, 0.9), now).heat > compute_heat(new_record(T0, 0.5), now).heat > compute_heat(new_record(T0, 0.1), now).heat
    rec = new_record(T0)
    cold = compute_heat(rec, now).heat
    rec2, at_bump = bump(rec, h(47))
    assert at_bump.presentations == 2
    assert compute_heat(rec2, now).heat > cold
    assert heat_now([T0, h(47)], 0.5, now) == pytest.approx(compute_heat(rec2, now).heat)


def test_folded_history_approximates_the_full_sum():
    rec_full = new_record(T0)
    for k in range(1, 120):
        rec_full = record_access(rec_full, h(k))
    assert rec_full.folded == 120 - MAX_KEPT and len(rec_full.accesses) == MAX_KEPT
    exact = HeatRecord(T0, 0.5, tuple(h(k) for k in range(120)))  # everything listed
    approx, full = compute_heat(rec_full, h(200)), compute_heat(exact, h(200))
    assert approx.activation == pytest.approx(full.activation, rel=0.02)
    assert approx.presentations == full.presentations == 120


def test_records_round_trip_and_refresh_in_batch():
    rec = record_access(new_record(T0, 0.7), h(3))
    assert HeatRecord.from_dict(rec.to_dict()) == rec
    states = refresh([rec, new_record(T0)], h(10))
    assert len(states) == 2 and states[0].heat > states[1].heat


def test_a_retrieval_of_an_event_without_a_record_starts_one_at_its_creation():
    assert memory_created_at(h(5), h(2)) == h(2)  # said "later" than stored: formed when stored
    rec, state = retrieved(None, T0, None, h(3))
    assert rec.importance == 0.5 and rec.accesses == (T0, h(3))
    assert state == compute_heat(rec, h(3))
    known = new_record(T0, 0.9)
    assert retrieved(known, h(1), 0.1, h(3)) == bump(known, h(3))  # a stored record wins


def test_a_new_importance_keeps_the_presentations():
    rec = record_access(new_record(T0, 0.2), h(1))
    again = with_importance(rec, h(9), 0.8)
    assert again.importance == 0.8 and again.accesses == rec.accesses
    assert with_importance(None, T0, 0.8) == new_record(T0, 0.8)
