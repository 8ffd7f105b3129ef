"""Heat and decay: Cortex §4.4.1 (thermodynamic decay) with the §4.2.1 consolidation stages.

Activation is ACT-R's base level, B = ln(Σ_j t_j^(-d)) with d = 0.5, where t_j is the (stage-clock)
time since the j-th presentation (creation counts as the first; every retrieval is another). Cortex's closed form
B = ln(n) - d·ln(L) is the same quantity when presentations are spread evenly over the lifetime L
(`base_level_approx`). Heat squashes B into [0, 1] with a logistic, shifted by importance, and never
falls below its stage's floor:

    heat = max(floor(stage), σ(B + IMPORTANCE_GAIN·(importance - 0.5)))

The stage sets the decay rate and the floor (Cortex's table). The rate is applied as the speed of the
memory's own clock: an hour spent LABILE ages a presentation by 2 hours, an hour CONSOLIDATED by half
an hour, so decay slows as the memory consolidates and heat never jumps up at a stage change:

    stage         age       decay ×   floor
    LABILE        0-1 h     2.0       0.00
    EARLY_LTP     1-6 h     1.2       0.00
    LATE_LTP      6-24 h    0.8       0.05
    CONSOLIDATED  > 24 h    0.5       0.10   (permastore: nothing decays to zero)

Advancement may come early (§4.2.1 criteria): importance > 0.6 leaves LABILE, importance > 0.7 or
one replay leaves EARLY_LTP, three replays leave LATE_LTP: the stage starts when its condition is
first met. Replays here are retrievals after creation.

Times are in hours (one access an hour ago gives B = 0, heat 0.5 at neutral importance).
Only the most recent MAX_KEPT access times are kept per event; older ones are folded into a count
and a time span, and contribute through Petrov's (2006) approximation of the tail of the sum.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from typing import Iterable, Sequence

from app.domain.layers.events import as_utc

LAYER_VERSION = "heat/1"

DECAY = 0.5
HOUR_S = 3600.0
MIN_AGE_H = 1.0 / 60.0  # one minute: a presentation "now" does not make the sum infinite
IMPORTANCE_GAIN = 2.0
MAX_KEPT = 32


class Stage(str, Enum):
    LABILE = "labile"
    EARLY_LTP = "early_ltp"
    LATE_LTP = "late_ltp"
    CONSOLIDATED = "consolidated"


@dataclass(frozen=True)
class StageSpec:
    max_age_h: float
    decay_multiplier: float
    floor: float


STAGES: dict[Stage, StageSpec] = {
    Stage.LABILE: StageSpec(1.0, 2.0, 0.00),
    Stage.EARLY_LTP: StageSpec(6.0, 1.2, 0.00),
    Stage.LATE_LTP: StageSpec(24.0, 0.8, 0.05),
    Stage.CONSOLIDATED: StageSpec(math.inf, 0.5, 0.10),
}
_ORDER = [Stage.LABILE, Stage.EARLY_LTP, Stage.LATE_LTP, Stage.CONSOLIDATED]


@dataclass(frozen=True)
class HeatRecord:
    """What heat is computed from; store it per event (JSON-friendly with `to_dict`)."""

    created_at: datetime
    importance: float = 0.5
    accesses: tuple[datetime, ...] = ()  # most recent presentations, oldest first (creation included)
    folded: int = 0  # older presentations no longer listed
    folded_oldest: datetime | None = None
    folded_newest: datetime | None = None

    @property
    def presentations(self) -> int:
        return len(self.accesses) + self.folded

    @property
    def replays(self) -> int:
        return max(0, self.presentations - 1)

    def to_dict(self) -> dict[str, object]:
        return {
            "created_at": self.created_at.isoformat(),
            "importance": self.importance,
            "accesses": [a.isoformat() for a in self.accesses],
            "folded": self.folded,
            "folded_oldest": self.folded_oldest.isoformat() if self.folded_oldest else None,
            "folded_newest": self.folded_newest.isoformat() if self.folded_newest else None,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "HeatRecord":
        def ts(v: str | None) -> datetime | None:
            return as_utc(datetime.fromisoformat(v)) if v else None

        return cls(
            created_at=ts(d["created_at"]),  # type: ignore[arg-type]
            importance=float(d.get("importance", 0.5)),
            accesses=tuple(ts(a) for a in d.get("accesses", [])),  # type: ignore[misc]
            folded=int(d.get("folded", 0)),
            folded_oldest=ts(d.get("folded_oldest")),
            folded_newest=ts(d.get("folded_newest")),
        )


@dataclass(frozen=True)
class HeatState:
    heat: float
    activation: float  # B with the stage's decay rate
    stage: Stage
    floor: float
    presentations: int
    layer_version: str = LAYER_VERSION


def _hours(later: datetime, earlier: datetime) -> float:
    return max(MIN_AGE_H, (as_utc(later) - as_utc(earlier)).total_seconds() / HOUR_S)


def base_level_activation(
    access_times: Iterable[datetime],
    now: datetime,
    d: float = DECAY,
    folded: int = 0,
    folded_oldest: datetime | None = None,
    folded_newest: datetime | None = None,
) -> float:
    """B = ln(Σ t_j^-d), t_j in hours since each presentation (-inf with no presentation)."""
    total = sum(_hours(now, t) ** -d for t in access_times)
    if folded > 0 and folded_oldest is not None:
        t_new = _hours(now, folded_newest or folded_oldest)
        t_old = _hours(now, folded_oldest)
        if t_old - t_new > 1e-9 and abs(1 - d) > 1e-9:
            # k presentations spread evenly between the two ages: ∫ t^-d dt / (t_old - t_new) per presentation
            total += folded * (t_old ** (1 - d) - t_new ** (1 - d)) / ((1 - d) * (t_old - t_new))
        else:
            total += folded * t_new**-d
    return math.log(total) if total > 0 else float("-inf")


def base_level_approx(n: int, lifetime_h: float, d: float = DECAY) -> float:
    """Cortex's closed form, B = ln(n) - d·ln(L) (Anderson & Lebiere's optimised learning equation)."""
    return math.log(max(1, n)) - d * math.log(max(MIN_AGE_H, lifetime_h))


def _presentation_time(record: "HeatRecord", i: int) -> datetime | None:
    """The i-th presentation (0 = creation), oldest first; folded ones are spread evenly over their span."""
    if i < record.folded:
        if record.folded_oldest is None:
            return None
        if record.folded <= 1 or record.folded_newest is None:
            return record.folded_oldest
        return record.folded_oldest + (record.folded_newest - record.folded_oldest) * (i / (record.folded - 1))
    j = i - record.folded
    return record.accesses[j] if j < len(record.accesses) else None


def stage_entries(record: "HeatRecord") -> dict[Stage, float]:
    """Hours after creation at which each stage starts: by age, or earlier by the §4.2.1 criteria."""
    created = record.created_at
    imp = record.importance

    def replay_h(k: int) -> float:
        t = _presentation_time(record, k)  # replay k is presentation k (0 is creation)
        return (as_utc(t) - as_utc(created)).total_seconds() / HOUR_S if t is not None else math.inf

    early = 0.0 if imp > 0.6 else STAGES[Stage.LABILE].max_age_h
    late = max(early, 0.0 if imp > 0.7 else min(STAGES[Stage.EARLY_LTP].max_age_h, replay_h(1)))
    late = min(late, max(early, STAGES[Stage.EARLY_LTP].max_age_h))
    cons = max(late, min(STAGES[Stage.LATE_LTP].max_age_h, replay_h(3)))
    return {Stage.LABILE: 0.0, Stage.EARLY_LTP: early, Stage.LATE_LTP: late, Stage.CONSOLIDATED: cons}


def _stage_at(entries: dict[Stage, float], age_h: float) -> Stage:
    current = Stage.LABILE
    for s in _ORDER:
        if age_h >= entries[s]:
            current = s
    return current


def _clock(entries: dict[Stage, float], age_h: float) -> float:
    """Stage-clock hours elapsed from creation to `age_h`: Σ multiplier × time spent in each stage."""
    total = 0.0
    bounds = [entries[s] for s in _ORDER] + [math.inf]
    for k, s in enumerate(_ORDER):
        lo, hi = bounds[k], max(bounds[k], bounds[k + 1])
        if age_h > lo:
            total += STAGES[s].decay_multiplier * (min(age_h, hi) - lo)
    return total


def consolidation_stage(created_at: datetime, now: datetime, importance: float = 0.5, replays: int = 0) -> Stage:
    """The stage by age, advanced early by importance or replays (Cortex §4.2.1); replays are taken
    as having happened at creation when only their count is known."""
    rec = HeatRecord(as_utc(created_at), importance, (as_utc(created_at),) * (1 + max(0, replays)))
    return _stage_at(stage_entries(rec), (as_utc(now) - as_utc(created_at)).total_seconds() / HOUR_S)


def _sigmoid(x: float) -> float:
    if x == float("-inf"):
        return 0.0
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def compute_heat(record: HeatRecord, now: datetime) -> HeatState:
    """Heat of one event at `now`."""
    entries = stage_entries(record)

    def age(t: datetime) -> float:
        return max(0.0, (as_utc(t) - record.created_at).total_seconds() / HOUR_S)

    now_age = age(now)
    stage = _stage_at(entries, now_age)
    spec = STAGES[stage]
    clock_now = _clock(entries, now_age)
    total = 0.0
    for t in record.accesses or (record.created_at,):
        total += max(MIN_AGE_H, clock_now - _clock(entries, age(t))) ** -DECAY
    if record.folded > 0 and record.folded_oldest is not None:
        t_old = max(MIN_AGE_H, clock_now - _clock(entries, age(record.folded_oldest)))
        t_new = max(MIN_AGE_H, clock_now - _clock(entries, age(record.folded_newest or record.folded_oldest)))
        if t_old - t_new > 1e-9:  # Petrov: presentations spread evenly between the two ages
            total += record.folded * (t_old ** (1 - DECAY) - t_new ** (1 - DECAY)) / ((1 - DECAY) * (t_old - t_new))
        else:
            total += record.folded * t_new**-DECAY
    b = math.log(total) if total > 0 else float("-inf")
    raw = _sigmoid(b + IMPORTANCE_GAIN * (record.importance - 0.5))
    return HeatState(round(max(spec.floor, raw), 6), round(b, 6), stage, spec.floor, record.presentations or 1)


def memory_created_at(occurred_at: datetime, ingested_at: datetime) -> datetime:
    """When a memory formed: when it happened, but never after it was stored."""
    return min(occurred_at, ingested_at)


def new_record(created_at: datetime, importance: float = 0.5) -> HeatRecord:
    """A fresh event: creation is its first presentation."""
    return HeatRecord(as_utc(created_at), min(1.0, max(0.0, importance)), (as_utc(created_at),))


def record_access(record: HeatRecord, at: datetime) -> HeatRecord:
    """One retrieval: a new presentation; the oldest listed ones fold once MAX_KEPT is exceeded."""
    accesses = tuple(sorted(record.accesses + (as_utc(at),)))
    folded, oldest, newest = record.folded, record.folded_oldest, record.folded_newest
    if len(accesses) > MAX_KEPT:
        spill, accesses = accesses[: len(accesses) - MAX_KEPT], accesses[len(accesses) - MAX_KEPT :]
        folded += len(spill)
        oldest = min([t for t in (oldest, spill[0]) if t is not None])
        newest = max([t for t in (newest, spill[-1]) if t is not None])
    return replace(record, accesses=accesses, folded=folded, folded_oldest=oldest, folded_newest=newest)


def heat_now(
    access_times: Sequence[datetime], importance: float, now: datetime, created_at: datetime | None = None
) -> float:
    """Heat from raw timestamps: `created_at` (default: the earliest access) plus every access."""
    times = sorted(as_utc(t) for t in access_times)
    created = as_utc(created_at) if created_at is not None else (times[0] if times else as_utc(now))
    rec = new_record(created, importance)
    for t in times:
        if t != created:
            rec = record_access(rec, t)
    return compute_heat(rec, now).heat


def bump(record: HeatRecord, at: datetime) -> tuple[HeatRecord, HeatState]:
    """Retrieval touched the event at `at`: the new record and its heat right then."""
    rec = record_access(record, at)
    return rec, compute_heat(rec, at)


def retrieved(record: HeatRecord | None, created_at: datetime, importance: float | None,
              at: datetime) -> tuple[HeatRecord, HeatState]:
    """`bump` for an event that may have no record yet: a new one starts at its creation with the
    known importance, 0.5 until the surprise layer sets it."""
    if record is None:
        record = new_record(created_at, importance if importance is not None else 0.5)
    return bump(record, at)


def with_importance(record: HeatRecord | None, created_at: datetime, importance: float) -> HeatRecord:
    """The record with a (re)computed importance: its presentations are kept, a new one starts at creation."""
    return replace(record, importance=importance) if record is not None else new_record(created_at, importance)


def refresh(records: Sequence[HeatRecord], now: datetime) -> list[HeatState]:
    """The periodic (Celery beat) pass: every record's heat at `now`."""
    return [compute_heat(r, now) for r in records]
