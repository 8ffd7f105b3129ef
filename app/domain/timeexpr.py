"""Time expressions: the one calendar that the ingest and the query resolve against.

One convention for every span: half-open, [start, end). "May 2023" is [1 May 2023, 1 June 2023),
"6 May 2023" is [6 May, 7 May), "before June" is (None, 1 June). The ingest (the layers'
`app.domain.layers.timeparse`) writes the spans its mentions resolve to with this convention, and the
query (the intent router) asks with it, so a date written at ingest and a window asked at query time
compare without an off-by-one day.

Here: the shared tables, the spans of a day, week, month, season, year and decade ("the nineties"),
the relative seasons and weekends ("last summer", "this weekend") both sides resolve alike, and the
question's window ("in May 2023", "between March and June", "before 2022") against a reference time,
with the tests of a time or a span against it. Pure functions; no I/O.
"""
from __future__ import annotations

import calendar
import re
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

Span = tuple[date, date]  # half-open [start, end)
Window = tuple[datetime | None, datetime | None]  # half-open [start, end); None for an open end

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
# Month names only when capitalised ("may" is also a verb, "march" a noun).
MONTH_RE = (
    r"(?:(?:January|February|March|April|May|June|July|August|September|October|November|December)\b|"
    r"(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\b\.?)"  # "Mar" but not "Marine"; "Mar." but not "March."
)
ORD_RE = r"\d{1,2}(?:st|nd|rd|th)?"
YEAR_RE = r"(?:19|20)\d\d"
SEASON_MONTHS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # the first month of each
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2,
                "a few": 3, "few": 3, "several": 3}
_PAST = ("last", "past", "this past", "previous")


# ------------------------------------------------------------------ spans


def next_weekday(ref: date, wd: int) -> date:
    """"next Friday" (`wd`: Monday 0) said on `ref`: the coming one when it falls in the next week (Monday to
    Sunday), else the one a week after it ("next Thursday" said on a Monday is ten days on, "this Thursday" three)."""
    d = ref + timedelta(days=(wd - ref.weekday()) % 7 or 7)
    return d + timedelta(days=7) if d.isocalendar()[:2] == ref.isocalendar()[:2] else d


def day_span(d: date) -> Span:
    return d, d + timedelta(days=1)


def week_span(d: date) -> Span:
    """The Monday-to-Sunday week holding `d`."""
    start = d - timedelta(days=d.weekday())
    return start, start + timedelta(days=7)


def month_span(y: int, m: int) -> Span:
    return date(y, m, 1), date(y, m, calendar.monthrange(y, m)[1]) + timedelta(days=1)


def shift_month(y: int, m: int, k: int) -> tuple[int, int]:
    """(year, month) `k` months after month `m` of year `y` (before it when `k` < 0)."""
    y2, m0 = divmod(y * 12 + m - 1 + k, 12)
    return y2, m0 + 1


def year_span(y: int) -> Span:
    return date(y, 1, 1), date(y + 1, 1, 1)


def grain_span(d: date, granularity: str) -> Span:
    """The day, week, month or year holding `d`."""
    if granularity == "week":
        return week_span(d)
    if granularity == "month":
        return month_span(d.year, d.month)
    if granularity == "year":
        return year_span(d.year)
    return day_span(d)


def season_span(y: int, name: str) -> Span:
    """Three months from the season's first month; winter runs into the next year."""
    m0 = SEASON_MONTHS[name.lower()]
    em, ey = (m0 + 2 - 1) % 12 + 1, y + (1 if m0 + 2 > 12 else 0)
    return date(y, m0, 1), month_span(ey, em)[1]


def relative_season(ref: date, which: str, name: str) -> Span:
    """"last/past summer": the latest that ended by `ref`; "coming" ("this coming summer", or a season said of
    a plan): the first that starts after it; "this": the one of `ref`'s year (winter before March: the one that
    began the year before); "next": the one after "this" ("next summer" said in May is a year on: the coming
    one is "this summer"); "in" ("in the summer"): the latest that has begun."""
    which = re.sub(r"\s+", " ", which.lower())
    if which in _PAST:
        y = ref.year
        while season_span(y, name)[1] > ref:
            y -= 1
        return season_span(y, name)
    if which == "next":
        return season_span(relative_season(ref, "this", name)[0].year + 1, name)
    if which == "coming":
        y = ref.year - 1
        while season_span(y, name)[0] <= ref:
            y += 1
        return season_span(y, name)
    if which == "this":
        return season_span(ref.year - 1 if (name.lower() == "winter" and ref.month < 3) else ref.year, name)
    y = ref.year
    while season_span(y, name)[0] > ref:
        y -= 1
    return season_span(y, name)


def relative_weekend(ref: date, which: str) -> Span:
    """Saturday and Sunday: "last/past" the latest whole one before `ref`'s week-day (on a Sunday, the
    one before), "this" the one of `ref`'s week, "next" the coming one (from a weekend, the one after)."""
    which = re.sub(r"\s+", " ", which.lower())
    sat = ref - timedelta(days=ref.weekday()) + timedelta(days=5)  # this week's Saturday
    if which in _PAST:
        sat -= timedelta(weeks=1)
    elif which == "next" and sat <= ref:
        sat += timedelta(weeks=1)
    return sat, sat + timedelta(days=2)


_DECADE_WORDS = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
                 "eighties": 80, "nineties": 90, "noughties": 0, "aughts": 0}
# "the nineties", "the '90s", "the 1990s", "the early 2000s"; "her thirties" is an age: words need "the"
DECADE_RE = (r"(?:(?:the\s+)?(?:(?:early|mid|late)[\s-]+)?(?:19|20)\d0['’]?s\b|the\s+(?:(?:early|mid|late)[\s-]+)?"
             r"(?:['’]?\d0['’]?s\b|(?:" + "|".join(_DECADE_WORDS) + r")\b))")


def decade_span(expr: str, ref: date) -> tuple[date, date, str] | None:
    """[start, end) of a decade and its label; without its century, the latest before the reference's
    own ("the twenties" said in 2025: the 1920s); early / mid / late: its first, middle, last 4 years."""
    low = expr.lower().replace("’", "'")
    m, m2 = re.search(r"((?:19|20)\d0)'?s\b", low), re.search(r"'?(\d0)'?s\b", low)
    yy = int(m2.group(1)) if m2 else next((v for k, v in _DECADE_WORDS.items() if re.search(rf"\b{k}\b", low)), None)
    if m is None and yy is None:
        return None
    start = int(m.group(1)) if m else 2000 + yy if 2000 + yy < ref.year - ref.year % 10 else 1900 + yy  # type: ignore[operator]
    s, e = start, start + 10
    part = re.search(r"\b(early|mid|late)\b", low)
    if part:
        s, e = {"early": (s, s + 4), "mid": (s + 3, s + 7), "late": (s + 6, s + 10)}[part.group(1)]
    return date(s, 1, 1), date(e, 1, 1), f"{part.group(1) + ' ' if part else ''}{start}s"


# ------------------------------------------------------------------ a question's window

_NUM = r"(?:\d+|a couple of|a couple|a few|several|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MON = MONTH_RE
_YEAR = YEAR_RE

# Atomic expressions: (kind, regex), in priority order when they overlap.
_ATOMS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(rf"\b({_YEAR})-(\d\d)-(\d\d)\b")),
    ("day_month", re.compile(rf"\b(?:the\s+)?({ORD_RE})\s+(?:of\s+)?({_MON})(?:,?\s+({_YEAR}))?\b")),
    ("month_day", re.compile(rf"\b({_MON})\s+({ORD_RE})\b(?!\s*(?:am|pm|:))(?:,?\s+({_YEAR}))?")),
    ("part_month", re.compile(rf"\b(early|mid|middle\s+of|late|end\s+of|beginning\s+of|start\s+of)[\s-]+({_MON})(?:,?\s+({_YEAR}))?\b", re.I)),
    ("rel_month", re.compile(rf"\b(last|this|next|this\s+past|past)\s+({_MON})(?!\s*{_YEAR})\b")),
    ("month_year", re.compile(rf"\b({_MON}),?\s+({_YEAR})\b")),
    ("in_month", re.compile(rf"\b(?:in|during|of|for)\s+({_MON})(?!\s*\d)\b")),
    ("season_year", re.compile(rf"\b(?:the\s+)?(spring|summer|fall|autumn|winter)\s+(?:of\s+)?({_YEAR})\b", re.I)),
    ("rel_season", re.compile(r"\b(last|this|next|this\s+past|past)\s+(spring|summer|fall|autumn|winter)\b", re.I)),
    ("in_season", re.compile(r"\b(?:in|during|over)\s+(?:the\s+)?(spring|summer|fall|autumn|winter)\b", re.I)),
    ("day_word", re.compile(r"\b(the\s+day\s+before\s+yesterday|yesterday|today|tonight|last\s+night|"
                            r"this\s+(?:morning|afternoon|evening)|tomorrow)\b", re.I)),
    ("ago", re.compile(rf"\b({_NUM})\s+(day|week|fortnight|month|year)s?\s+(?:ago|back|earlier)\b", re.I)),
    ("decade", re.compile(DECADE_RE, re.I)),
    ("rel_unit", re.compile(r"\b(last|this|next|past|this\s+past|previous)\s+(week|weekend|month|year)\b", re.I)),
    ("weekday", re.compile(r"\b(last|this\s+past|past|this|next|on)\s+(monday|tuesday|wednesday|thursday|friday|"
                           r"saturday|sunday)\b", re.I)),
    ("year", re.compile(rf"\b(?:in|during|of|since|by|until|before|after|from|for)\s+(?:the\s+year\s+)?({_YEAR})\b|^\s*({_YEAR})\b|\b({_YEAR})\s*\??$", re.I)),
]

_MONTH_RANGE = re.compile(
    rf"\b(?:between|from)\s+({_MON})(?:,?\s+({_YEAR}))?\s+(?:and|to|until|till|through|-)\s+({_MON})(?:,?\s+({_YEAR}))?\b"
)


def _month_num(tok: str) -> int:
    return MONTHS[tok.lower().rstrip(".")]


# A question about what is planned or coming reads a month, a season or a day named without a year
# forward: "Where is she going in the fall?" asked in June is about the coming fall.
_FUTURE_Q = re.compile(
    r"\b(will|shall|going to|gonna|plan|plans|planning|planned to|intend|intends|upcoming|hope to|hoping to|"
    r"about to|scheduled|expect|expecting)\b|'ll\b",
    re.I,
)


def asks_about_future(question: str) -> bool:
    """Does the question ask about something planned or still to come?"""
    return _FUTURE_Q.search(question) is not None


def _resolve_atom(kind: str, m: re.Match[str], ref: date, future: bool = False) -> Span | None:
    g = m.groups()
    try:
        if kind == "iso":
            return day_span(date(int(g[0]), int(g[1]), int(g[2])))
        if kind in ("day_month", "month_day"):
            day, mon = (g[0], g[1]) if kind == "day_month" else (g[1], g[0])
            mo, dd = _month_num(mon), int(re.sub(r"\D", "", day))
            if g[2]:
                y = int(g[2])
            elif future:  # no year, a plan: the first such day not before the reference
                y = ref.year if (mo, dd) >= (ref.month, ref.day) else ref.year + 1
            else:  # no year: the most recent such day not after the reference
                y = ref.year if (mo, dd) <= (ref.month, ref.day) else ref.year - 1
            return day_span(date(y, mo, dd))
        if kind == "part_month":
            part, mo = g[0].lower(), _month_num(g[1])
            if g[2]:
                y = int(g[2])
            elif future:  # the current month counts: "end of May" asked in May is this May
                y = ref.year if mo >= ref.month else ref.year + 1
            else:
                y = ref.year if mo <= ref.month else ref.year - 1
            s, e = month_span(y, mo)
            if part == "early" or part.startswith(("beginning", "start")):
                return s, date(y, mo, 11)
            if part.startswith("mid"):
                return date(y, mo, 11), date(y, mo, 21)
            return date(y, mo, 21), e
        if kind == "rel_month":
            which, mo = re.sub(r"\s+", " ", g[0].lower()), _month_num(g[1])
            if which in _PAST:
                y = ref.year if mo < ref.month else ref.year - 1
            elif which == "next":
                y = ref.year if mo > ref.month else ref.year + 1
            else:
                y = ref.year
            return month_span(y, mo)
        if kind == "month_year":
            return month_span(int(g[1]), _month_num(g[0]))
        if kind == "in_month":
            mo = _month_num(g[0])
            if future:
                return month_span(ref.year if mo >= ref.month else ref.year + 1, mo)
            return month_span(ref.year if mo <= ref.month else ref.year - 1, mo)
        if kind == "season_year":
            return season_span(int(g[1]), g[0])
        if kind == "rel_season":
            return relative_season(ref, g[0], g[1])
        if kind == "in_season":
            span = relative_season(ref, "in", g[0])
            if future and span[1] <= ref:  # over already: the coming one
                span = relative_season(ref, "coming", g[0])
            return span
        if kind == "day_word":
            w = re.sub(r"\s+", " ", g[0].lower())
            off = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1}.get(w, 0)
            return day_span(ref + timedelta(days=off))
        if kind == "ago":
            n = NUMBER_WORDS.get(g[0].lower()) or int(g[0])
            unit = g[1].lower()
            if unit == "day":
                return day_span(ref - timedelta(days=n))
            if unit in ("week", "fortnight"):
                return week_span(ref - timedelta(weeks=n * (2 if unit == "fortnight" else 1)))
            if unit == "month":
                return month_span(*shift_month(ref.year, ref.month, -n))
            return year_span(ref.year - n)
        if kind == "rel_unit":
            which, unit = re.sub(r"\s+", " ", g[0].lower()), g[1].lower()
            step = -1 if which in _PAST else 1 if which == "next" else 0
            if unit == "week":
                return week_span(ref + timedelta(weeks=step))
            if unit == "weekend":
                return relative_weekend(ref, which)
            if unit == "month":
                return month_span(*shift_month(ref.year, ref.month, step))
            return year_span(ref.year + step)
        if kind == "weekday":
            which, wd = re.sub(r"\s+", " ", g[0].lower()), WEEKDAYS[g[1].lower()]
            if which == "next":
                d = next_weekday(ref, wd)
            else:  # last / past / this / on: the most recent one before the reference
                d = ref - timedelta(days=(ref.weekday() - wd) % 7 or 7)
            return day_span(d)
        if kind == "year":
            return year_span(int(next(x for x in g if x)))
        if kind == "decade":
            dec = decade_span(m.group(0), ref)
            return None if dec is None else dec[:2]
    except (ValueError, KeyError, StopIteration):
        return None
    return None


def _atoms(text: str, ref: date) -> list[tuple[int, int, str, date, date]]:
    """Non-overlapping resolved atoms (start, end, surface, from, to) in text order."""
    future = asks_about_future(text)
    taken: list[tuple[int, int, str, date, date]] = []
    for kind, rx in _ATOMS:
        for m in rx.finditer(text):
            s, e = m.span()
            if any(s < te and ts < e for ts, te, *_ in taken):
                continue
            span = _resolve_atom(kind, m, ref, future)
            if span is not None:
                taken.append((s, e, m.group(0).strip(), span[0], span[1]))
    return sorted(taken)


def _as_dt(d: date, tz: Any) -> datetime:
    return datetime.combine(d, time.min).replace(tzinfo=tz)


def resolve_time_window(question: str, reference_time: datetime | None = None) -> tuple[Window, str] | None:
    """The half-open window [start, end) the question names, relative to `reference_time` (default:
    now, UTC), and the expression it came from; None when it names none.

    "between A and B" / "from A to B" span both; "before/until/by A" -> (None, start of A);
    "after A" -> (end of A, None); "since A" -> (start of A, None). Several unrelated expressions: the
    narrowest wins.
    """
    ref_dt = reference_time or datetime.now(timezone.utc)
    tz = ref_dt.tzinfo
    ref = ref_dt.date()
    m = _MONTH_RANGE.search(question)
    if m:  # "between March and June 2023": month names, the year from either side or the past
        a_mon, a_year, b_mon, b_year = m.groups()
        ma, mb = _month_num(a_mon), _month_num(b_mon)
        if b_year:
            yb = int(b_year)
        elif a_year:
            yb = int(a_year) + (1 if mb < ma else 0)
        else:
            yb = ref.year if mb <= ref.month else ref.year - 1
        ya = int(a_year) if a_year else (yb if ma <= mb else yb - 1)
        start, end = month_span(ya, ma)[0], month_span(yb, mb)[1]
        if start < end:
            return (_as_dt(start, tz), _as_dt(end, tz)), m.group(0)
    atoms = _atoms(question, ref)
    if not atoms:
        return None
    # ranges first: "between A and B", "from A to/until B"
    for i in range(len(atoms) - 1):
        a, b = atoms[i], atoms[i + 1]
        gap = question[a[1]:b[0]].strip().lower()
        pre = question[max(0, a[0] - 10):a[0]].lower()
        if gap in ("and", "to", "until", "till", "through", "-", "–") and re.search(r"(between|from)\s*$", pre):
            start, end = a[3], b[4]
            if end <= start:  # "between November and February": the end is in the next year
                end = date(end.year + 1, end.month, 1) if end.month != 12 else end
                if end <= start:
                    continue
            return (_as_dt(start, tz), _as_dt(end, tz)), question[a[0]:b[1]]
    best = None
    for s, e, surface, d0, d1 in atoms:
        pre = question[max(0, s - 12):s].lower()
        low_surface = surface.lower()
        if re.search(r"\b(before|until|till|by|prior\s+to)\s*$", pre) or re.match(r"(before|until|by)\b", low_surface):
            win: Window = (None, _as_dt(d0, tz))
            width = 10**6
        elif re.search(r"\bafter\s*$", pre) or low_surface.startswith("after"):
            win, width = (_as_dt(d1, tz), None), 10**6
        elif re.search(r"\bsince\s*$", pre) or low_surface.startswith("since"):
            win, width = (_as_dt(d0, tz), None), 10**6
        else:
            win, width = (_as_dt(d0, tz), _as_dt(d1, tz)), (d1 - d0).days
        if best is None or width < best[0]:
            best = (width, win, surface)
    assert best is not None
    return best[1], best[2]


def _utc(when: datetime | date) -> datetime:
    """Naive datetimes are taken as UTC; dates as midnight UTC."""
    if isinstance(when, datetime):
        return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return datetime.combine(when, time.min).replace(tzinfo=timezone.utc)


def in_window(when: datetime | date | None, window: Window | None) -> bool:
    """Is `when` inside the half-open window? Naive datetimes are taken as UTC; dates as midnight."""
    if when is None or window is None:
        return False
    start, end = window
    w = _utc(when)
    if start is not None and w < _utc(start):
        return False
    if end is not None and w >= _utc(end):
        return False
    return True


def overlaps_window(span: tuple[datetime | date, datetime | date], window: Window | None) -> bool:
    """Does a half-open span (a resolved day [6 May, 7 May), a month [1 May, 1 June)) share any time
    with the half-open window?"""
    if window is None:
        return False
    lo, hi = _utc(span[0]), _utc(span[1])
    if lo >= hi:  # a single instant
        return in_window(lo, window)
    start, end = window
    return (end is None or lo < _utc(end)) and (start is None or hi > _utc(start))
