"""What a conversation's earlier turns settle about a time expression (`timeturns.resolve_turns`).

A turn is often dated only by what was said before it: "Mum turns seventy on the 22nd of November."
... "The 22nd is a Saturday, so lunch?" ... "I can't help the Friday before." Read alone, "the 22nd"
said on 28 September is the coming 22 October and "the Friday before" names nothing. Read in its
conversation, the first is 22 November and the second the Friday before it.

`Discourse` carries what holds from one turn to the next in a sitting (turns at most `SITTING` apart):
- `span`: the last date named with its month ("the 2nd of March", "December 14", "mid-April"). A bare
  "the 22nd" that restates its day is that date (`anchored`); any other bare day number is read against
  the turn's own time: on the labelled set, "until the 12th" said after "Saturday 13 December" meant
  the nearest 12th as often as December's.
- `last_day`: the last single day named however ("Thursday the 25th", "the 19th", "yesterday"): "the
  Friday before", "the night before", "the weekend after" count from it.
- `stretch`: a few days named after that ("the 28th to the 31st", "the weekend after next"): "the Monday",
  "that Saturday" are days of it.
- `named` (kept across sittings): the last days named with their month ("the 20th of April") or weekday ("Thursday
  the 17th"). A bare "the 20th" read ahead in a later turn that names no date before it is the latest of them still
  ahead (`remembered`).

Also here, the forms that only make sense with a month in view: ranges of days ("the 19th to the
21st", "the 4th to the 8th of May", "the 17th and 18th", "May 4-8"), and a weekday beside the date it
falls on (`appositions`). Pure functions, no I/O.
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any, TypeVar

from app.domain.layers.timecal import _WD, label, nth_day, pick_year, weekday_num, weekend_label
from app.domain.layers.timeforms import weekend_of
from app.domain.timeexpr import MONTH_RE, MONTHS, shift_month, week_span

M = TypeVar("M", bound=Any)  # timeparse.TimeMention (defined there; this module sits below it)

SITTING = timedelta(hours=6)  # turns this close belong to one sitting: an anchor holds across them
REMEMBERED_DAYS = 120  # how far ahead a day named in an earlier sitting is still taken up by its bare number

_WD_NAMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_SUF = r"(?:st|nd|rd|th)"

# "the Friday before", "the weekend before", "the day before" (not "the day before yesterday", "the
# Friday before last", nor "the day before the wedding": an event this layer does not date)
BEFORE_RE = (rf"\b(?:on\s+)?the\s+(?:{_WD_NAMES}|day|night|weekend|week)\s+before\b"
             r"(?!\s+(?:last|yesterday|the|that|this|my|our|his|her|their|your|its|it|we|I|you|he|she|they|\w+ing)\b)(?!\s+(?-i:[A-Z]))"
             r"|\bthe\s+(?:day|night|weekend|week)\s+after\b(?!\s+(?:tomorrow|next|that|the|this|my|our|his|her|their|your|its|it|"
             r"we|I|you|he|she|they|\w+ing)\b)(?!\s+(?-i:[A-Z]))")  # "the Saturday after Easter": an event's

# a time the sitting named before, taken up again: "that week", "the same day", "that night", "all weekend", chat's
# "same day?" ending a clause (not "all day": "I'm at a desk all day" names no day; nor "same day delivery")
THAT_RE = (r"\b(?:that|the\s+same)\s+(?:(?:whole|entire)\s+)?(?:day|night|morning|afternoon|evening|week|weekend)\b(?!\s+(?:before|after)\b)"
           r"|\ball\s+(?:that\s+)?(?:week|weekend)\b|(?<![\w-])same\s+(?:day|week|weekend)(?=\s*(?:[?.!,;]|$))")
# what "that day" after a weekly habit refers to ("Tuesdays ... leave early that day"): no one day
_HABIT = re.compile(r"(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\bevery\b|\bweekdays\b|\bweekends\b")

_WDS = r"(?:(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?-i:Mon|Tues?|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\.?)"
# ranges of days: "the 19th to the 21st", "from the 4th to the 8th of May", "the 17th and 18th",
# "between the 3rd and the 5th", "May 4-8", "4-8 May", "4 to 8 June"
RANGE_RE = (rf"\b(?:(?i:from|between)\s+)?(?i:the)\s+\d{{1,2}}{_SUF}\s*(?:(?i:to|till|until|through|thru)\s+(?i:the\s+)?|[-–]\s*)"
            rf"\d{{1,2}}{_SUF}(?:\s+(?i:of\s+)?{MONTH_RE}\b)?"
            rf"|\b(?i:the)\s+\d{{1,2}}{_SUF}\s+(?i:and)\s+\d{{1,2}}{_SUF}(?:\s+(?i:of\s+)?{MONTH_RE}\b)?"
            rf"|\b(?:(?i:between)\s+)(?i:the)\s+\d{{1,2}}{_SUF}\s+(?i:and)\s+(?i:the\s+)?\d{{1,2}}{_SUF}(?:\s+(?i:of\s+)?{MONTH_RE}\b)?"
            rf"|\b{MONTH_RE}\s+\d{{1,2}}{_SUF}?\s*(?:[-–]|\s(?i:to|till|until|through)\s)\s*\d{{1,2}}{_SUF}?\b(?!\s*[:.]\d)"
            rf"|\b(?=[MTWFSmtwfs]){_WDS}\s+\d{{1,2}}{_SUF}?\s*(?:[-–]|\s(?i:to|till|until|through)\s)\s*{_WDS}\s+"
            rf"\d{{1,2}}{_SUF}?\s+(?i:of\s+)?{MONTH_RE}\b"  # "Tue 11 to Thu 13 May"
            # the forms opening with a number, behind one look for a digit: "4-8 May", "30 and 31 May", "7th to the 16th
            # of May", "13th/14th"
            rf"|\b(?=\d)(?:\d{{1,2}}{_SUF}?\s*(?:[-–]|\s(?i:to|till|until|through)\s)\s*\d{{1,2}}{_SUF}?\s+(?i:of\s+)?{MONTH_RE}\b"
            rf"|\d{{1,2}}{_SUF}?\s+(?i:and)\s+\d{{1,2}}{_SUF}?\s+(?i:of\s+)?{MONTH_RE}\b"
            rf"|\d{{1,2}}{_SUF}\s+(?i:to|till|until|through)\s+(?i:the)\s+\d{{1,2}}{_SUF}\s+(?i:of\s+)?{MONTH_RE}\b"
            rf"|(?<![\w/])\d{{1,2}}{_SUF}\s*/\s*\d{{1,2}}{_SUF}\b(?!\s*/))")

# in a mention's own words, a month's name is one however it is written ("the 3rd of july")
_EXPLICIT = re.compile(rf"{MONTH_RE}|(?i:\b(?:{'|'.join(n.lower() for n in calendar.month_name if n)})\b)|\b\d{{4}}-\d\d-\d\d\b|\b\d{{1,2}}/\d{{1,2}}\b")


@dataclass(frozen=True)
class Discourse:
    """What the turns before this one said about dates (see the module's docstring)."""
    span: tuple[date, date] | None = None  # [start, end) of the last date named with its month in the sitting
    last_day: date | None = None  # the last single day named in the sitting, however ("Thursday the 25th")
    stretch: tuple[date, date] | None = None  # [start, end) of the last few days named after it ("the 28th to the 31st")
    named: tuple[date, ...] = ()  # single days named with their month (or weekday) earlier in the conversation, any sitting

    def remembered(self, day: int, today: date) -> date | None:
        """A bare "the `day`th" that takes up a day the conversation named with its month in an earlier
        sitting and that is still ahead: that day (the latest named, within REMEMBERED_DAYS)."""
        return next((d for d in reversed(self.named) if d.day == day and 0 < (d - today).days <= REMEMBERED_DAYS), None)

    def anchored(self, day: int) -> date | None:
        """A bare "the `day`th" that restates the date last named with its month ("the 22nd of November"
        ... "The 22nd is a Saturday"), the last day named, or a day of the few named ("the 10th and 11th of
        September" ... "I'm away on the 10th"): that date. Any other day number is read against the turn's own
        time: on the labelled set, "until the 12th" said after "Saturday 13 December" meant the nearest
        12th as often as the month named before it."""
        if self.span is not None and self.span[1] - self.span[0] == timedelta(days=1) and self.span[0].day == day:
            return self.span[0]
        if self.last_day is not None and self.last_day.day == day:  # "Saturday the 28th" ... "the 28th then"
            return self.last_day
        if self.stretch is not None:  # "the 10th and 11th of September" ... "on the 10th" (not "mid-June": a third)
            s, e = self.stretch
            return next((s + timedelta(days=k) for k in range((e - s).days) if (s + timedelta(days=k)).day == day), None)
        return None


NO_DISCOURSE = Discourse()


# A bare day number in the NEAR_DAYS before a date the turn named with its month is the turn's own month's ("keys
# from the 1st of March, and my pass lapses on the 28th", said on 25 February); otherwise it is of that date's month,
# however close to the turn ("Saturday the 7th of June free, or the 21st", said on 19 May: until stop 41 any day within
# NEAR_DAYS of the turn stayed its own, wrong 24 times on dev 281 and right 12). After a day named without its month it
# is its own within NEAR_DAYS of the turn. Fitted on dev. A month named in an earlier turn is not enough: on dev it was
# as often about something else.
NEAR_DAYS = 10
# words before a day number that carry on from the date named before it: "away from the 28th of March,
# back on the 2nd" is the 2nd after it, wherever the turn's own time falls
_CARRIES_ON = re.compile(r"(?i)\b(?:back|home|return(?:s|ing)?|until|till|through|thru|then)\b[^.!?]{0,12}$")
# words that set a day number against the month named before it: "off to Spain in August, but the plumber comes
# on the 15th" (`month_before`)
_CONTRAST = re.compile(r"(?i)\b(?:but|though|although|however|meanwhile|whereas)\b")


def day_reference(before: str, own: date | None, base: date, out: list[M], any_explicit: bool = False) -> date | None:
    """What a bare day number ("the 16th", "the 19th to the 21st") is counted from: None for its own
    reading `own` (the nearest such day in the turn's tense, from `base`); else a day, the number
    being the first such day on or after it. `before` is the turn's words up to the number and `out` the
    mentions before it; the day they name last counts (one naming its month first; `any_explicit`: of any
    length). Words that carry on from it ("back on the 2nd") count from it; otherwise the day is of that day's
    month unless it falls in the `NEAR_DAYS` before it, of the coming whole month the turn named before it
    (`month_before`), or, after a day named without its month, of that day's month unless close to the turn. A day the sitting's earlier turns named is no anchor here: tried at stop 37 (a
    far bare day inside or just after it), it fixed four spans on dev and broke one of twelve fresh conversations."""
    day = named_before(out, explicit=True, days_only=not any_explicit)
    month = None if day else month_before(out, base, before)
    named = day or month or named_before(out)
    if named is None:
        return None
    if _CARRIES_ON.search(before):
        return named
    if own is not None and (own == base or (0 < (named - own).days <= NEAR_DAYS if day else
                                            month is None and abs((own - base).days) <= NEAR_DAYS)):
        return None
    return named.replace(day=1)


def is_explicit(surface: str) -> bool:
    """A mention that names its month ("December 14", "mid-April", "14/12"): one a later "the 16th" or
    "the day before" leans on ("the 3rd of july" too, as chat writes it). "Saturday the 7th" or "the 28th" do
    not: their month was itself a guess."""
    return _EXPLICIT.search(surface) is not None


def before_span(expr: str, anchor: date) -> tuple[date, date, str] | None:
    """"the Friday before" (the last Friday before `anchor`), "the weekend before", "the week before",
    "the day before", "the day after": [start, end) and granularity."""
    low = re.sub(r"\s+", " ", expr.lower()).strip()
    low = re.sub(r"^on ", "", low)
    m = re.fullmatch(rf"the ({_WD_NAMES}|day|night|weekend|week) (before|after)", low)
    if not m:
        return None
    what, way = m.groups()
    if what in ("day", "night"):
        d = anchor + timedelta(days=-1 if way == "before" else 1)
        return d, d + timedelta(days=1), "day"
    if what == "week":
        s = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=-1 if way == "before" else 1)
        return s, s + timedelta(days=7), "week"
    if what == "weekend" and way == "after":  # the first Saturday and Sunday after the anchor day
        sat = anchor + timedelta(days=(5 - anchor.weekday()) % 7 or 7)
        if anchor.weekday() == 5:  # the anchor is a Saturday: the next weekend, not its own
            sat = anchor + timedelta(days=7)
        return sat, sat + timedelta(days=2), "week"
    if what == "weekend":  # the Saturday and Sunday before the anchor day
        sat = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
        if sat + timedelta(days=1) >= anchor:  # the anchor is that Sunday: the weekend a week before
            sat -= timedelta(weeks=1)
        return sat, sat + timedelta(days=2), "week"
    wd = list(calendar.day_name).index(what.capitalize())
    d = anchor - timedelta(days=(anchor.weekday() - wd) % 7 or 7)
    return d, d + timedelta(days=1), "day"


def range_days(expr: str) -> tuple[int, int, int | None, bool] | None:
    """(first day, last day, month or None, joined by "and") of a range form."""
    nums = [int(n) for n in re.findall(r"\d{1,2}", expr)]
    if len(nums) != 2 or not (1 <= nums[0] <= 31 and 1 <= nums[1] <= 31):
        return None
    mo = re.search(MONTH_RE, expr)
    month = MONTHS[mo.group(0).lower().rstrip(".")] if mo else None
    joined = re.search(r"(?i)\band\b|/", expr) is not None
    return nums[0], nums[1], month, joined


def named_before(out: list[M], explicit: bool = False, days_only: bool = True) -> date | None:
    """The last day named earlier in the turn (`explicit`: one naming its month; not `days_only`: any
    resolved mention, its representative day)."""
    m = next((m for m in reversed(out) if m.resolved and m.date and (m.granularity == "day" or not days_only)
              and (not explicit or is_explicit(m.surface))), None)
    return date.fromisoformat(m.date) if m is not None and m.date else None


def month_before(out: list[M], base: date, before: str) -> date | None:
    """The first day of the last whole month named earlier in the turn when it is still to come ("coming home
    in July, I land on the 20th"): a later bare day number is that month's (not a month told as past: "it never
    happened in December, so the 4th?"; nor a part of one: "closing at the end of May"; nor one set against
    it: "off to Spain in August, but the plumber comes on the 15th", `before` being the words up to the day)."""
    m = next((m for m in reversed(out) if m.resolved and m.range_start and m.range_end and m.granularity == "month"
              and is_explicit(m.surface)), None)
    if m is None or _CONTRAST.search(before[m.end:]):
        return None
    s, e = date.fromisoformat(m.range_start), date.fromisoformat(m.range_end)
    return s if s.day == 1 and e.day == 1 and 28 <= (e - s).days <= 31 and s > base else None


FEW_DAYS = 11  # the longest span a later mention leans on: a day, a stretch, a week, a third of a month


def few_days(m: M) -> tuple[date, date] | None:
    """[start, end) of a resolved mention of a day or a few days ("the 28th to the 31st", "the weekend of
    the 16th", "next week"), else None."""
    if not (m.resolved and m.range_start and m.range_end and m.granularity in ("day", "week")):
        return None
    span = (date.fromisoformat(m.range_start), date.fromisoformat(m.range_end))
    return span if (span[1] - span[0]).days <= FEW_DAYS else None


def _last_days(out: list[M]) -> tuple[M, tuple[date, date]] | None:
    """The last mention earlier in the turn that names a day or a few days, with their [start, end) (`few_days`)."""
    return next(((m, span) for m in reversed(out) if (span := few_days(m)) is not None), None)


def stretch_before(out: list[M]) -> date | None:
    """The first day of the last day or few days named earlier in the turn ("that week" is its week)."""
    named = _last_days(out)
    return named[1][0] if named is not None else None


def that_span(surface: str, before: str, out: list[M], discourse: Discourse) -> tuple[date, date, date, str, str] | None:
    """"that week", "the same day", "all weekend": the day, week or weekend of the day or few days named last,
    earlier in the turn or else in the sitting's earlier turns (`discourse`); None when nothing was named, or
    when a weekly habit was ("Tuesdays he needs collecting ... leave early that day"). (date, start, end,
    granularity, label)."""
    if _HABIT.search(before):
        return None
    ref = stretch_before(out) or (discourse.stretch[0] if discourse.stretch else discourse.last_day)
    if ref is None:
        return None
    unit = surface.lower().split()[-1]
    if unit == "week":
        s, e = week_span(ref)
        return ref, s, e, "week", label(s, "week")
    if unit == "weekend":
        s, e = weekend_of(ref)
        return s, s, e, "week", weekend_label(s)
    return ref, ref, ref + timedelta(days=1), "day", label(ref, "day")


def weekday_named_before(out: list[M], discourse: Discourse, wd: int) -> date | None:
    """"the Monday" (weekday `wd`) of the day or few days named last: earlier in the turn, else in the sitting's
    earlier turns (`discourse`); None when nothing was named. After a weekday said alone in the turn it is the first
    one from it ("get there on the Thursday and leave on the Monday"); otherwise `weekday_by`."""
    named = _last_days(out)
    if named is not None:
        m, span = named
        if re.fullmatch(rf"(?i)(?:on\s+)?(?:the\s+)?{_WD_NAMES}(?:\s+\w+)?", m.surface.strip()):
            return weekday_from(span[0], wd)
        return weekday_by(span, wd)
    last = discourse.last_day
    told = discourse.stretch or ((last, last + timedelta(days=1)) if last else None)
    return weekday_by(told, wd) if told is not None else None


def weekday_by(span: tuple[date, date], wd: int) -> date:
    """"the Monday" said of a day or a few days named before ([start, end)): the one inside them, else the nearer one
    either side ("on Tuesday 11 February ... I'll remind you on the Monday": the 10th; "a wedding on Saturday the 14th,
    we'll fly in on the Friday": the 13th; "the weekend of the 22nd ... back on the Monday": the 24th)."""
    first = weekday_from(span[0], wd)
    if first < span[1]:
        return first
    before = first - timedelta(days=7)
    return before if (span[0] - before) < (first - span[1] + timedelta(days=1)) else first


def weekday_from(ref: date, wd: int) -> date:
    """The first weekday `wd` on or after `ref` ("the Monday" of a stretch starting on `ref`)."""
    return ref + timedelta(days=(wd - ref.weekday()) % 7)


def appositions(text: str, mentions: list[M]) -> list[M]:
    """A weekday next to a date that falls on it is that date: "the Sunday flight, October 13"."""
    out = list(mentions)
    for i, m in enumerate(out):
        wd = re.fullmatch(rf"(?:on\s+)?({_WD})", m.surface.strip(), re.I)
        if not wd or not m.resolved:
            continue
        for n in out[max(0, i - 1):i + 2]:
            if n is m or not n.resolved or n.granularity != "day" or not n.date or n.date == m.date:
                continue
            gap = text[min(m.end, n.end):max(m.start, n.start)]
            if len(gap) <= 25 and not re.search(r"[.!?;]|\b(?:or|and|then|until|till|to)\b", gap) \
                    and date.fromisoformat(n.date).weekday() == weekday_num(wd.group(1)):
                out[i] = replace(m, date=n.date, range_start=n.range_start, range_end=n.range_end, label=n.label)
    return out


# what joins two dates into one stretch ("the 13th of May to the 2nd of June", "from June to September",
# "Wednesday to Friday", "Good Friday - Easter Monday"); the second's own words may hold it ("to September")
_JOIN = re.compile(r"(?i)\s*(?:-|–|to|until|till|through|thru)\s*")
_JOINED_BY = re.compile(r"(?i)(?:to|until|till|through|thru)\s")
_OPEN_ENDED = re.compile(r"(?i)(?:until|till|by|before|after|since)\s")  # "until May to ...": not a stretch's start
# a date moved to another is two dates, not a stretch: "the module's moving from the 26th to Tuesday 1 April"
# (the verbs' own forms: "Changeover is on Saturdays, so Saturday 31 July to Saturday 7 August" is a stretch)
_MOVED = re.compile(r"(?i)\b(?:mov(?:e|es|ed|ing)|chang(?:e|es|ed|ing)|push(?:es|ed|ing)?|shift(?:s|ed|ing)?|"
                    r"switch(?:es|ed|ing)?|swap(?:s|ped|ping)?|postpon(?:e|es|ed|ing)|reschedul(?:e|es|ed|ing)|"
                    r"delay(?:s|ed|ing)?|brought|bring(?:s|ing)?|put(?:ting)?\s+(?:it\s+)?back)\b[^.!?;,]*$")


def _a_year_on(d: date) -> date:
    return date(d.year + 1, 3, 1) if (d.month, d.day) == (2, 29) else d.replace(year=d.year + 1)


def joined_ranges(text: str, mentions: list[M]) -> list[M]:
    """Two days, or two months, joined by "to" / "until" / a dash are one stretch from the first to the end
    of the second (the second moved on by a week, or a year, when it would end before the first starts:
    "Friday to Monday", "November to January"), at most a year long; not a date moved to another ("moving from
    the 26th to Tuesday")."""
    out: list[M] = []
    for m in mentions:
        prev = out[-1] if out else None
        if (prev is not None and prev.resolved and m.resolved and prev.range_start and m.range_end
                and prev.granularity == m.granularity and m.granularity in ("day", "month")
                and not _OPEN_ENDED.match(prev.surface.strip()) and not _MOVED.search(text[:prev.start])
                and (_JOIN.fullmatch(text[prev.end:m.start]) or (not text[prev.end:m.start].strip()
                                                                 and _JOINED_BY.match(m.surface.strip())))):
            s, e = date.fromisoformat(prev.range_start), date.fromisoformat(m.range_end)
            if m.granularity == "day" and is_explicit(m.surface) and not is_explicit(prev.surface):
                last = e - timedelta(days=1)  # the first day is in the month the last names: "Friday the 13th to
                if re.search(r"\d", prev.surface) and s.day <= last.day:  # Sunday the 15th of December"
                    s = month_day(last.year, last.month, s.day) or s
                elif wd := re.fullmatch(rf"(?i)(?:from\s+|on\s+)?({_WD_NAMES})", prev.surface.strip()):
                    s = weekday_from(last - timedelta(days=6), weekday_num(wd.group(1)))  # "Friday to Sunday the 15th"
            weekday = re.search(rf"(?i)\b{_WD_NAMES}\s*$", m.surface) is not None
            bare = re.fullmatch(r"(?i)(?:(?:to|until|till|through|thru)\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)", m.surface.strip())
            if bare and (first := nth_day(s, int(bare.group(1)), "future")):  # "from Christmas Eve to the 2nd": the first
                e = first[2]  # such day after the stretch's start
            while e <= s:
                e = e + timedelta(days=7) if weekday else _a_year_on(e)
            if (e - s).days <= 366:
                moved = s.isoformat() != prev.range_start
                out[-1] = replace(prev, surface=text[prev.start:m.end], end=m.end, kind="absolute", range_end=e.isoformat(),
                                  range_start=s.isoformat(), date=s.isoformat() if moved else prev.date,
                                  label=f"{label(s, 'day') if moved else prev.label} – {m.label}")
                continue
        out.append(m)
    return out


def is_range(surface: str) -> bool:
    """A range form that is one stretch: not "the 5th and 12th" (two days, read one by one)."""
    got = range_days(surface)
    return got is not None and (not got[3] or got[1] == got[0] + 1)


def month_day(y: int, mo: int, day: int) -> date | None:
    try:
        return date(y, mo, day)
    except ValueError:
        return None


def range_span(surface: str, base: date, prefer: str, anchor: date | None) -> tuple[date, date, str] | None:
    """"the 19th to the 21st", "May 4-8": [first day, last day + 1) and a label. Without a month, the
    first day is a day of the month last named (`anchor`), else the next (or, told in the past, the
    latest) such day; "the 5th and 12th" is two days, not a stretch (None)."""
    got = range_days(surface)
    if got is None:
        return None
    first, last, mo, joined = got
    if mo is not None:
        y = pick_year(mo, last, base, prefer)
        d1 = month_day(y, mo, last)
        d0 = month_day(y, mo, first) if first <= last else month_day(*((y, mo - 1) if mo > 1 else (y - 1, 12)), first)
    else:
        start = nth_day(anchor or base, first, "future" if anchor else prefer)
        d0 = start[0] if start else None
        end = nth_day(d0, last, "future") if d0 else None
        d1 = end[0] if end else None
    if d0 is None or d1 is None or d1 < d0:
        return None
    lab = f"{d0.day}–{label(d1, 'day')}" if (d0.month, d0.year) == (d1.month, d1.year) else f"{label(d0, 'day')} – {label(d1, 'day')}"
    return d0, d1 + timedelta(days=1), lab
