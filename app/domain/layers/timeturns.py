"""A conversation's time expressions read in order (`resolve_turns`): each turn against its own time
and what the turns before it settled (`timediscourse.Discourse`). The labelled set's time spans are
scored from this (`palimpsest bench layers`), and a query's context dates its items so
(`discourses`), from the turns of the same conversation that the query holds, and for a bare day number
the days named with their month or weekday before it in any sitting (`remembered_before`, from the mentions the
layers' build stored). Pure, no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Hashable, Iterable, Mapping, Sequence

from app.domain.layers.timediscourse import FEW_DAYS, NO_DISCOURSE, SITTING, THAT_RE, Discourse, few_days, is_explicit
from app.domain.layers.timeparse import TimeMention, resolve_time_expressions
from app.domain.layers.timeyear import WEEKDAY_WORD


NAMED_KEPT = 12  # days named with their month or weekday that a later sitting's bare day number may take up
LOOKBACK = 6  # a query's context reads a leaning turn with at most this many turns before it

# the forms a turn's words leave to the turns before it (timediscourse): a bare day number, "the Friday
# before" / "the night after" / "the following Saturday", "the Monday" (of the stretch named before), a range
# of days without its month, "that week" / "the same day" / "all weekend"
_LEANS = re.compile(r"\bthe\s+\d{1,2}(?:st|nd|rd|th)\b(?!\s+of\b)|\bthe\s+(?:day|night|weekend|week)\s+(?:before|after)\b|"
                    r"\b(?:the|that)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|"
                    rf"\bthe\s+(?:following\s+\w+|next\s+(?:day|morning))\b|{THAT_RE}", re.I)
# what a turn needs to name a day or a month a later turn can lean on (a month in either case, a weekday,
# "today" and its neighbours, "the 19th", a numeric date, a holiday): a cheap test before the full reading, for
# the turns a query only reads as context (digits alone are not enough: code and figures are full of them)
_MAY_DATE = re.compile(r"(?:\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d|\d\s*(?:st|nd|rd|th)?\s+"
                       r"(?:of\s+)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec))|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|"
                       r"\b(?:today|tonight|tomorrow|yesterday)\b|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}/\d{1,2}\b|"
                       r"\b\d{4}-\d\d-\d\d\b|\b(?:christmas|easter|halloween|new year)", re.I)


@lru_cache(maxsize=16384)
def _leans(text: str) -> bool:  # scanning a BEAM-size turn costs ~0.1 ms; a query holds ~60, mostly the last query's
    return _LEANS.search(text) is not None


@lru_cache(maxsize=16384)
def _may_date(text: str) -> bool:
    return _MAY_DATE.search(text) is not None


@lru_cache(maxsize=16384)
def resolved_mentions(text: str, at: datetime, discourse: Discourse = NO_DISCOURSE) -> tuple[TimeMention, ...]:
    """`resolve_time_expressions`, kept per (text, time, discourse): a turn is read again by every query
    that holds it (the context's dates, `discourses`), mostly with the same discourse."""
    return tuple(resolve_time_expressions(text, at, discourse))


@dataclass
class DateThread:
    """What a conversation has said about dates so far, read one turn at a time (`read`), and kept as
    JSON data between builds (`to_dict` / `from_dict`: a layer that folds the log event by event)."""
    anchor: tuple[date, date, datetime] | None = None  # [start, end) of the last date named with its month, when
    last: tuple[date, datetime] | None = None  # the last single day named, when
    stretch: tuple[date, date, datetime] | None = None  # [start, end) of a few days named after it, when
    named: tuple[date, ...] = ()  # single days named with their month or weekday, the last NAMED_KEPT, any sitting

    def read(self, text: str, at: datetime) -> tuple[Discourse, list[TimeMention]]:
        """The discourse the turn is read with, and its mentions; then what the turn adds."""
        discourse = self.before(at)
        mentions = list(resolved_mentions(text, at, discourse))
        self.learn(mentions, at)
        return discourse, mentions

    def before(self, at: datetime) -> Discourse:
        """What a turn said at `at` is read with (an anchor from another sitting no longer holds)."""
        if self.anchor is not None and abs(at - self.anchor[2]) > SITTING:
            self.anchor = None
        if self.last is not None and abs(at - self.last[1]) > SITTING:
            self.last = None
        if self.stretch is not None and abs(at - self.stretch[2]) > SITTING:
            self.stretch = None
        return Discourse(self.anchor[:2] if self.anchor else None, self.last[0] if self.last else None,
                         self.stretch[:2] if self.stretch else None, self.named)

    def learn(self, mentions: Iterable[TimeMention], at: datetime) -> None:
        """What a turn said at `at` settles for the turns after it."""
        for m in mentions:
            if not (m.resolved and m.range_start and m.range_end):
                continue
            span = (date.fromisoformat(m.range_start), date.fromisoformat(m.range_end))
            one_day = m.granularity == "day" and span[1] - span[0] == timedelta(days=1)
            if is_explicit(m.surface) and (span[1] - span[0]).days <= FEW_DAYS:  # a day, a stretch, a third of a month
                self.anchor = (*span, at)
            if (day := named_day(m)) is not None:
                self.named = keep_named(self.named, (day,))
            if one_day:
                self.last, self.stretch = (span[0], at), None
            elif few_days(m) is not None:
                self.stretch = (*span, at)

    def to_dict(self) -> dict:
        return {"anchor": [self.anchor[0].isoformat(), self.anchor[1].isoformat(), self.anchor[2].isoformat()]
                if self.anchor else None,
                "last": [self.last[0].isoformat(), self.last[1].isoformat()] if self.last else None,
                "stretch": [x.isoformat() for x in self.stretch] if self.stretch else None,
                "named": [d.isoformat() for d in self.named]}

    @classmethod
    def from_dict(cls, d: dict) -> "DateThread":
        a, last, st = d.get("anchor"), d.get("last"), d.get("stretch")  # "stretch": since timeparse/8
        return cls((date.fromisoformat(a[0]), date.fromisoformat(a[1]), datetime.fromisoformat(a[2])) if a else None,
                   (date.fromisoformat(last[0]), datetime.fromisoformat(last[1])) if last else None,
                   (date.fromisoformat(st[0]), date.fromisoformat(st[1]), datetime.fromisoformat(st[2])) if st else None,
                   tuple(date.fromisoformat(x) for x in d.get("named") or ()))  # "named": since timeparse/17


# a day number with the weekday it falls on ("Thursday the 17th", "Sat 13th"): the weekday picks its month
_WEEKDAY_DAY = re.compile(rf"(?i)\b{WEEKDAY_WORD}\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\b")


def named_day(m: TimeMention) -> date | None:
    """The day a mention names with its month ("the 20th of April", "April 20") or with its weekday ("Thursday
    the 17th": the month the weekday falls in), else None: what a later bare "the 17th" may take up
    (`Discourse.named`). Since timeparse/20 the weekday's too: on dev 536 that fixed 4 spans and broke none."""
    if not (m.resolved and m.range_start and m.range_end and m.granularity == "day"
            and (is_explicit(m.surface) or _WEEKDAY_DAY.search(m.surface))):
        return None
    start = date.fromisoformat(m.range_start)
    return start if date.fromisoformat(m.range_end) - start == timedelta(days=1) else None


def keep_named(named: tuple[date, ...], days: Iterable[date]) -> tuple[date, ...]:
    """`named` with `days` named after it: each day once, at its latest naming, the last NAMED_KEPT."""
    for day in days:
        named = (*[d for d in named if d != day], day)
    return named[-NAMED_KEPT:]


# a bare day number ("the 20th", "20th works"), the one form that takes up a day named in an earlier sitting
_BARE_DAY = re.compile(r"(?:\bthe\s+|(?:^|(?<=\s)))\d{1,2}(?:st|nd|rd|th)\b(?!\s+of\b)", re.I)


_ORDINAL = re.compile(r"\d(?:st|nd|rd|th)\b", re.I)  # a cheap needle before the pattern


@lru_cache(maxsize=16384)  # a query holds ~60 turns, mostly the last query's; a BEAM-size turn costs ~0.1 ms to scan
def may_take_up(text: str) -> bool:
    """Whether a turn holds a bare day number, which may take up a day the conversation named before with its
    month in another sitting (`Discourse.remembered`): the turns a query needs `remembered_before` for."""
    return _ORDINAL.search(text) is not None and _BARE_DAY.search(text) is not None


def remembered_before(history: Iterable[tuple[datetime, Iterable[TimeMention]]], times: Iterable[datetime]
                      ) -> dict[datetime, tuple[date, ...]]:
    """For each of `times`, the days named with their month before it in `history` (a conversation's turns in time
    order, each with its mentions as the layers resolved them), the last NAMED_KEPT: what the build's `DateThread`
    kept for a turn said then. One pass over the history."""
    wanted = sorted(set(times))
    out: dict[datetime, tuple[date, ...]] = {}
    named: tuple[date, ...] = ()
    k = 0
    for when, mentions in history:
        while k < len(wanted) and wanted[k] <= when:
            out[wanted[k]], k = named, k + 1
        if k == len(wanted):
            break
        named = keep_named(named, [d for m in mentions if (d := named_day(m)) is not None])
    out |= {t: named for t in wanted[k:]}
    return out


def discourse_to_dict(d: Discourse) -> dict:
    return {"span": [d.span[0].isoformat(), d.span[1].isoformat()] if d.span else None,
            "last_day": d.last_day.isoformat() if d.last_day else None,
            "stretch": [d.stretch[0].isoformat(), d.stretch[1].isoformat()] if d.stretch else None,
            "named": [x.isoformat() for x in d.named]}


def discourse_from_dict(d: dict) -> Discourse:
    span = d.get("span")
    st = d.get("stretch")
    return Discourse((date.fromisoformat(span[0]), date.fromisoformat(span[1])) if span else None,
                     date.fromisoformat(d["last_day"]) if d.get("last_day") else None,
                     (date.fromisoformat(st[0]), date.fromisoformat(st[1])) if st else None,
                     tuple(date.fromisoformat(x) for x in d.get("named") or ()))


def resolve_turns(turns: Iterable[tuple[str, datetime]]) -> list[tuple[Discourse, list[TimeMention]]]:
    """`resolve_time_expressions` for a conversation's turns in order, each read with what the turns
    before it settled (`DateThread`): per turn, that discourse and its mentions."""
    thread = DateThread()
    return [thread.read(text, at) for text, at in turns]


def discourses(turns: Sequence[tuple[Hashable, str, str, datetime]],
               named: Mapping[Hashable, tuple[date, ...]] | None = None) -> dict[Hashable, Discourse]:
    """(id, conversation, text, time) -> what the turns before each one (among these, in its
    conversation, in time order, in its sitting) settled about dates, for the turns whose words lean on
    it ("The 22nd", "the night before", "the 17th and 18th"); a turn left out has no discourse. The turns
    before are read on their own (each against its own time; cached per turn, since a query's turns are
    mostly the next query's too), and only the `LOOKBACK` before a turn that leans on them, in its sitting.
    `named`: id -> the days the whole conversation named with their month before that turn, as the layers'
    build kept them (any sitting; `remembered_before`), for a bare day number that takes one up."""
    by_conv: dict[str, list[tuple[Hashable, str, datetime]]] = {}
    for key, conv, text, at in turns:
        by_conv.setdefault(conv, []).append((key, text, at))
    out: dict[Hashable, Discourse] = {}
    for rows in by_conv.values():
        rows.sort(key=lambda r: r[2])
        leans = {i for i, (_, text, _) in enumerate(rows) if _leans(text)}
        read = {j for i in leans for j in range(max(0, i - LOOKBACK), i)
                if timedelta(0) <= rows[i][2] - rows[j][2] <= SITTING}
        thread = DateThread()
        for i, (key, text, at) in enumerate(rows):
            said = thread.before(at)
            if i in leans:
                if named and key in named:  # what the build kept from every sitting before it, and what these turns add
                    said = replace(said, named=keep_named(named[key], said.named))
                out[key] = said
            if i in read and _may_date(text):  # most turns name no day: they cannot anchor one
                # a leaning turn is learnt as the context shows it ("The 22nd" of November, so "the night
                # before" after it is the 21st); any other turn reads the same with or without a discourse
                thread.learn(resolved_mentions(text, at, said if i in leans else NO_DISCOURSE), at)
    return out


def resolution_stats(mentions: Iterable[TimeMention]) -> dict[str, float]:
    """Counts and the share of relative expressions resolved (vague ones count as unresolved)."""
    ms = list(mentions)
    rel = [m for m in ms if m.kind in ("relative", "vague")]
    resolved_rel = sum(m.resolved for m in rel)
    return {
        "mentions": len(ms),
        "relative": len(rel),
        "relative_resolved": resolved_rel,
        "relative_resolved_share": round(resolved_rel / len(rel), 4) if rel else 0.0,
        "absolute": sum(m.kind == "absolute" for m in ms),
        "absolute_resolved": sum(m.resolved for m in ms if m.kind == "absolute"),
    }
