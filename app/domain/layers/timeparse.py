"""Time expressions in an event, resolved against the event's own time (PRISM App. C.1: temporal
annotations "normalised to ISO-8601 when explicit; otherwise ... a best-effort absolute-date estimate
from the ... conversation time").

"I went there last Saturday", said on 8 May 2023, is stored as 2023-05-06 next to its surface text, so a "when"
question can match a date nobody wrote. Resolution uses dateparser with RELATIVE_BASE = event time and
PREFER_DATES_FROM = 'past' (conversations mostly report what happened); sentences with future markers ("will", "next",
"going to") prefer the future for the ambiguous forms (a bare weekday or month). dateparser does not know weekends,
seasons or fuzzy counts ("a few weeks ago"); those few are computed here, weekends and seasons by the calendar the
query shares (`app.domain.timeexpr`). Each resolution carries its granularity and the calendar range it covers ("last
month" is the whole month, not one day), half-open like every span there: [range_start, range_end), so "May 2023" is
2023-05-01 .. 2023-06-01. The calendar forms live in `timecal` (parts of a month, holidays, the tense) and `timeforms`
(decades, "the second Saturday in January", fortnights, "the Friday after next", recurring expressions, which name no
one day and are dropped), and `timewords` (the talk of chat and offices: "in july", "in Q3", "the day after Boxing
Day", "Spring it is").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from functools import lru_cache

import dateparser

from app.domain.layers.timecal import (
    _FUZZY,
    _HOLIDAY,
    _MONTH_CAP,
    _NUM,
    _ORD,
    _PART,
    _SPAN_VERB,
    _SEASON,
    _UNIT,
    _WD,
    Granularity,
    calendar_span,
    label,
    nth_day,
    pick_year,
    sentence_tense,  # noqa: F401  (re-exported: the tense rule callers read from here)
    tense_around,
    weekday_near,
    weekday_num,
    weekend_label,
)
from app.domain.layers.timeforms import (
    AFTER_DAY_RE,
    DAY_WORD_RE,
    ORD_WORD_RE,
    DECADE_RE,
    FOLLOWING_RE,
    NTH_WEEKDAY_RE,
    SECOND_MONTH_RE,
    RECURRING_RE,
    SHIFTED_FORMS,
    SHIFTED_RE,
    YEAR_PART_RE,
    decade_span,
    following_span,
    fortnights_to_weeks,
    full_years,
    granularity,
    numbers_to_digits,
    nth_weekday,
    ordinals_to_digits,
    shifted_span,
    year_part_span,
)
from app.domain.layers.timediscourse import (BEFORE_RE, NO_DISCOURSE, RANGE_RE, THAT_RE, Discourse, appositions,
                                             before_span, day_reference, is_range, joined_ranges, named_before,
                                             range_days, range_span, that_span, weekday_named_before)
from app.domain.layers.timewords import (LATE_PATTERNS, LOWER_ALONE_RE, MONTH_ALONE_RE, SEASON_EVENTS, WORD_PATTERNS,
                                         cap_months, told_as_past, word_span)
from app.domain.layers.timeyear import far_past, pick_reading, weekday_in_view
from app.domain.timeexpr import SEASON_MONTHS, grain_span, next_weekday, relative_season, relative_weekend, year_span

_YEAR_WORD = r"\s+(?i:next|last|this)\s+year\b"  # "on 14 June next year"
FROM_YEAR_RE = r"\b(?:from|till|around)\s+(?:19|20)\d\d\b(?!\s*(?:[-–/]|to\b|until\b|till\b|and\b)\s*(?:19|20)?\d\d)"

LAYER_VERSION = "timeparse/20"  # what each version changed: bench/data/layers/README.md, "Versions of the time resolver"


# (regex, kind). Order = priority when spans overlap (longer, more specific patterns first).
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(RANGE_RE), "range"),
    *[(re.compile(rx, flags), kind) for rx, kind, flags, _ in WORD_PATTERNS],  # quarters, "the day after Boxing Day", ...
    (re.compile(NTH_WEEKDAY_RE, re.I), "relative"),
    (re.compile(SHIFTED_RE, re.I), "relative"),
    (re.compile(FOLLOWING_RE, re.I), "relative"),
    (re.compile(BEFORE_RE, re.I), "relative"),
    (re.compile(THAT_RE, re.I), "that"),  # "that week": of the day named before it
    (re.compile(YEAR_PART_RE, re.I), "relative"),
    (re.compile(RECURRING_RE, re.I), "recurring"),  # taken so its weekday is not read as a date, then dropped
    (re.compile(DAY_WORD_RE), "absolute"),
    (re.compile(DECADE_RE, re.I), "absolute"),
    # a holiday named by its month, before the months take the month ("the August bank holiday")
    (re.compile(r"\b(?:on\s+)?(?:early\s+may|late\s+may|august|spring)\s+bank\s+holiday\b(?!\s+weekend)", re.I), "relative"),
    (re.compile(rf"\b(?:on\s+)?{_WD},?\s+(?:(?:the\s+)?{_ORD}\s+(?:of\s+)?{_MONTH_CAP}|{_MONTH_CAP}\s+{_ORD}\b|the\s+{_ORD}\b|\d{{1,2}}(?:st|nd|rd|th)\b)(?:,?\s+(?:19|20)\d\d\b)?", re.I), "absolute"),
    (re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b"), "absolute"),
    (re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_ORD}\s+(?:of\s+)?{_MONTH_CAP}(?:,?\s+(?:19|20)\d\d\b|{_YEAR_WORD})?\b"), "absolute"),
    (re.compile(rf"\b(?:on\s+)?{_MONTH_CAP}\s+(?:the\s+)?{_ORD}\b(?:,?\s+(?:19|20)\d\d\b|{_YEAR_WORD})?"), "absolute"),
    (re.compile(rf"\b(?i:(?:(?:at|by|until|in|from)\s+)?(?:the\s+)?(?:{_PART}))[\s-]*{_MONTH_CAP}(?:,?\s+(?:19|20)\d\d)?\b"), "relative"),
    (re.compile(rf"\b(?i:in|during|since|by|until|till|of|last|next|this|for|to|from|before|after|around)\s+{_MONTH_CAP}(?:,?\s+(?:19|20)\d\d\b|{_YEAR_WORD})?\b"), "relative"),
    (re.compile(rf"\b{_MONTH_CAP}\s+(?:19|20)\d\d\b"), "absolute"),
    (re.compile(rf"\b{_MONTH_CAP}{_YEAR_WORD}"), "relative"),  # "August next year"
    # a day and month in figures where the day cannot be a month ("14/04", "31/1/2025"): day first
    (re.compile(r"(?<![\d/.])(?:1[3-9]|2\d|3[01])/(?:0?[1-9]|1[0-2])(?:/(?:19|20)\d\d)?(?![\d/])(?<!\b24/7)"), "absolute"),
    (re.compile(rf"\b(?i:your|the|my|our|their|his|her|{_SPAN_VERB})\s+{_MONTH_CAP}(?!\s+\d)"), "relative"),
    (re.compile(rf"\b(?:the\s+)?{_SEASON}\s+(?:of\s+)?(?:(?:19|20)\d\d\b|['’]\d\d\b(?!s))", re.I), "absolute"),
    (re.compile(r"\b(?:in|since|back in|during|by|until|of)\s+(?:(?:19|20)\d\d\b|['’]\d\d\b(?!s))", re.I), "absolute"),
    # ... and after "from", "till", "around", but not opening a stretch of years ("from 1990 to 2020", "from 2018-2023")
    (re.compile(FROM_YEAR_RE, re.I), "absolute"),
    (re.compile(r"\b(?:(?:at|by|until|before|from)\s+)?(?:the\s+)?(?:end|beginning|start|middle)\s+of\s+(?:the|this|next|last)\s+month\b|"
                r"\b(?:early|mid|late)[\s-]+(?:this|next|last)\s+month\b", re.I), "relative"),
    (re.compile(r"\b(?:the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening))\b", re.I), "relative"),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|back|earlier)\b", re.I), "relative"),
    (re.compile(rf"\b(?:in|within)\s+(?:the\s+next\s+)?{_NUM}\s+{_UNIT}\b", re.I), "relative"),
    (re.compile(rf"\b(?:last|this past|this coming|the coming|this|next|past)\s+(?:week|weekend|month|year|{_SEASON}|{_WD})\b", re.I), "relative"),
    (re.compile(r"\b(?:(?:over|at|on|during|since|for|by|until|till)\s+)?the\s+weekend\b(?!\s+(?-i:[A-Z])|\s+of\b)", re.I), "relative"),
    (re.compile(rf"\b(?:in|during|over|by|for|until|till|since)\s+(?:the\s+)?{_SEASON}\b(?!\s+(?:of\s+)?(?:(?:19|20)\d\d|['’]\d\d))", re.I), "relative"),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+from\s+(?:now|today)\b", re.I), "relative"),
    # "the 10th" but not "the 10th floor" / "her 5th birthday": a word after it must be a function word
    (re.compile(rf"\b(?:on\s+)?the\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?!{AFTER_DAY_RE}\b)[A-Za-z])", re.I), "relative"),
    (re.compile(rf"(?:(?<=\bby\s)|(?<=\buntil\s)|(?<=\btill\s)|(?<=\bfrom\s)|(?<=\bbefore\s)|(?<=\bafter\s)|(?<=\bsince\s)|\bon\s+)"
                rf"the\s+{ORD_WORD_RE}\b(?!\s+(?:of\s+)?(?!{AFTER_DAY_RE}\b)[A-Za-z])(?!-)", re.I), "relative"),
    (re.compile(rf"\b(?:on\s+)?(?:{_HOLIDAY})\b(?:\s+(?:19|20)\d\d\b)?", re.I), "relative"),
    (re.compile(rf"(?<!\ba\s)\b(?:on\s+)?{_WD}\b(?:\s+(?:night|morning|afternoon|evening|lunchtime)\b)?", re.I), "relative"),
    # a month named alone ("Shall I look at September?"), not one that is also a name or a verb (April,
    # June, August, May, March: those need a preposition or a determiner), nor a month before a day or a name;
    # "September's definitely on" is the month
    (re.compile(r"\b(?:January|February|July|September|October|November|December)\b(?!\s*\d)(?!\s+(?!I\b)[A-Z])"), "relative"),
    # ... and one that is also a name or a verb, joined to a month before it ("in July or August", "June and July")
    (re.compile(SECOND_MONTH_RE), "relative"),
    # ... a month opening a stretch or closing one after a dash ("August to October", "(April - June)": joined_ranges)
    (re.compile(rf"\b{_MONTH_CAP}(?=\s*(?:to|until|till|through|[-–])\s*(?:(?:early|mid|late)[\s-]+)?{_MONTH_CAP})|(?<=[-–]\s){_MONTH_CAP}\b"), "relative"),
    # a bare season only where it stands for a time ("summer trip", "see you in spring.", "the spring concert": before
    # an event, `SEASON_EVENTS`); "fall" only as "the fall" (a verb otherwise); never before a thing ("winter tyres")
    (re.compile(r"(?<![\w-])(?:the\s+(?:summer|winter|spring|fall|autumn)|summer|winter|spring|autumn)"
                rf"(?=\s*(?:[.,!?;:]|$)|\s+(?-i:{SEASON_EVENTS})\b)", re.I), "relative"),
    (re.compile(r"\b(?:the other (?:day|week|night)|a while (?:ago|back)|some time ago|not long ago)\b", re.I), "vague"),
    *[(re.compile(rx, flags), kind) for rx, kind, flags, _ in LATE_PATTERNS],  # "13th is good": after every other form
]

# a month's name, capitalised, in patterns that read case (the month is the only way they can match)
_MONTH_WORD = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)")
_MONTH_PATTERNS = {rx.pattern for rx, _ in _PATTERNS if not rx.flags & re.I and (
    _MONTH_CAP in rx.pattern or "January|February|July" in rx.pattern)} - {RANGE_RE}  # a range needs no month
_UNIT_PATTERNS = {rx.pattern for rx, _ in _PATTERNS if _UNIT in rx.pattern}  # "N days ago", "in N weeks": need a unit
_WD_FULL = {d[:3]: d for d in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")}


@dataclass(frozen=True)
class TimeMention:
    surface: str
    start: int  # character offsets in the text
    end: int
    kind: str  # relative | absolute | vague
    resolved: bool = False
    date: str | None = None  # ISO date, the representative day
    range_start: str | None = None  # ISO dates of the half-open range [range_start, range_end)
    range_end: str | None = None
    granularity: Granularity | None = None
    label: str | None = None  # "6 May 2023", "week of 1 May 2023", "April 2023", "summer 2022"


# A pattern whose needle a text lacks cannot match it; the needles are cheap, the patterns are not.
_UNIT_WORD = re.compile(r"(?:day|week|fortnight|month|year)s?\b", re.I)
_NEEDLES: dict[str, re.Pattern[str]] = {  # read in the text in lower case (quicker than re.I)
    NTH_WEEKDAY_RE: re.compile(r"day\s+(?:in|of)\b"),
    SHIFTED_RE: re.compile(r"week|fortnight|month|after\s+next|before\s+last|year|(?:summer|winter|spring|fall|autumn)s|this\s+time"),
    FOLLOWING_RE: re.compile(r"following|next\s+(?:day|morning)|before\s+last|\bago\b|\bafter\b"),
    YEAR_PART_RE: re.compile(r"(?:19|20)\d\d|\byear\b"),
    RECURRING_RE: re.compile(r"every|days\b|day\s+(?:morning|afternoon|evening|night)s"),
    DAY_WORD_RE: re.compile(r"(?:first|second|third|[a-z]th)\b"),
    DECADE_RE: re.compile(r"\d0['’]?s\b|ties\b|noughties|aughts"),
    RANGE_RE: re.compile(r"\d\s*(?:st|nd|rd|th)?\s*(?:[-–]|\s(?:to|till|until|through|thru|and)\s)|\d(?:st|nd|rd|th)\s*/"),
    BEFORE_RE: re.compile(r"\b(?:before|after)\b"),
    SECOND_MONTH_RE: re.compile(r"\b(?:or|and) (?:april|june|august|march|may)\b"),
    FROM_YEAR_RE: re.compile(r"(?:from|till|around)\s+(?:19|20)\d\d"),
    THAT_RE: re.compile(r"\b(?:that|same|all)\s+(?:that\s+|whole\s+|entire\s+)?(?:day|night|morning|afternoon|evening|week)"),
}
_NEEDLES.update({rx: re.compile(needle) for rx, _, _, needle in WORD_PATTERNS + LATE_PATTERNS})
_NEEDLES.update({rx.pattern: re.compile("weekend" if "weekend" in rx.pattern else r"\bmonth\b") for rx, _ in _PATTERNS
                 if ("the\\s+weekend" in rx.pattern or rx.pattern.endswith(r"month\b")) and rx.pattern not in _NEEDLES})


@lru_cache(maxsize=8192)  # a turn is read by the claims, the timeline, the graph and queries' contexts: scanned once
def find_time_expressions(text: str) -> tuple[tuple[int, int, str, str], ...]:
    """(start, end, surface, kind) for every time expression, non-overlapping, in text order. A month in lower
    case ("in july") is read as if capitalised (`cap_months`); the surface is as written."""
    taken: list[tuple[int, int, str, str]] = []
    raw, text = text, cap_months(text)
    low = text.lower()
    has_unit = _UNIT_WORD.search(text) is not None
    has_month = _MONTH_WORD.search(text) is not None
    for rx, kind in _PATTERNS:
        needle = _NEEDLES.get(rx.pattern)
        if (needle is not None and not needle.search(low)) or (not has_unit and rx.pattern in _UNIT_PATTERNS) \
                or (not has_month and rx.pattern in _MONTH_PATTERNS):
            continue
        for m in rx.finditer(raw if rx.pattern in (LOWER_ALONE_RE, MONTH_ALONE_RE) else text):  # as written
            s, e = m.span()
            if any(s < te and ts < e for ts, te, _, _ in taken) or (kind == "range" and not is_range(m.group(0))):
                continue
            taken.append((s, e, raw[s:e], kind))
    return tuple(sorted(taken))


@lru_cache(maxsize=32768)
def _resolve_cached(expr: str, base_day: date, prefer: str) -> tuple[date, date, date, Granularity] | tuple[date, date, date, Granularity, str] | None:
    if re.fullmatch(NTH_WEEKDAY_RE, expr.strip(), re.I):  # "the second Saturday in January"
        nd = nth_weekday(expr, base_day, lambda mo: pick_year(mo, 0, base_day, prefer))
        return None if nd is None else (nd, nd, nd + timedelta(days=1), "day", label(nd, "day"))
    if any(re.fullmatch(rx, expr.strip(), re.I) for rx in SHIFTED_FORMS):  # "the Friday after next", "Wednesday last week"
        sh = shifted_span(expr, base_day, "past" if prefer == "past" else "future")
        return None if sh is None else (sh[0], sh[0], sh[1], sh[2])  # type: ignore[return-value]
    if re.fullmatch(YEAR_PART_RE, expr.strip(), re.I):  # "mid-2024": a third of the year
        yp = year_part_span(expr, base_day)
        return None if yp is None else (yp[0] + (yp[1] - yp[0]) // 2, yp[0], yp[1], "month", yp[2])
    if re.fullmatch(DECADE_RE, expr.strip(), re.I):  # "the nineties"
        dec = decade_span(expr, base_day)
        return None if dec is None else (dec[0], dec[0], dec[1], "year", dec[2])
    expr = full_years(fortnights_to_weeks(ordinals_to_digits(numbers_to_digits(expr))), base_day)
    expr = re.sub(rf"({_MONTH_CAP})\s+the\s+(?=\d)", r"\1 ", expr)  # "March the 22nd"
    expr = re.sub(rf"^((?:on\s+)?{_WD})\s+(?:night|morning|afternoon|evening|lunchtime)$", r"\1", expr.strip(), flags=re.I)
    cal = word_span(expr, base_day, prefer) or calendar_span(expr, base_day, prefer)
    if cal is not None:
        return cal
    low = re.sub(r"\s+", " ", expr.lower().strip())
    low = re.sub(r"^(?:(?:over|at|on|during|since|for|by|until|till) )?the weekend$", "the weekend", low)
    if low == "the weekend":  # by the tense: the coming one (the one under way), else the latest
        past = base_day.weekday() < 5 and (prefer == "past" or (prefer == "nearest" and base_day.weekday() < 3))
        s, e = relative_weekend(base_day, "last" if past else "this")  # no tense: the nearer one
        return s, s, e, "week"
    if prefer == "nearest":
        prefer = "past"
    nw = re.fullmatch(rf"(?:on\s+)?next\s+({_WD})", low)
    if nw:  # "next Thursday" said on a Monday: next week's (`next_weekday`); "this coming Thursday" is the coming one
        d = next_weekday(base_day, weekday_num(nw.group(1)))
        return d, d, d + timedelta(days=1), "day"
    low = re.sub(r"^(?:this|the) coming ", "coming ", low)  # "this coming Friday": the coming one
    expr = re.sub(r"(?i)^(?:this|the)\s+coming\s+", "next ", expr.strip())
    low = re.sub(r"^(on|the)\s+", "", low)
    m = re.fullmatch(r"(last|this past|this|next|past|coming)\s+(weekend|" + _SEASON + ")", low)
    if m:
        which, what = m.groups()
        if what == "weekend":
            s, e = relative_weekend(base_day, "next" if which == "coming" else which)
            return s, s, e, "week"
        s, e = relative_season(base_day, which, what)
        return s, s, e, "season"
    text = expr.strip()
    for fuzzy, digit in _FUZZY.items():
        text = re.sub(rf"\b{fuzzy}\b", digit, text, flags=re.I)
    text = re.sub(r"\b(back|earlier)$", "ago", text, flags=re.I)
    text = re.sub(r"^(in|within)\s+(the\s+next\s+)?(?=\d|a\b|an\b|one|two|three|four|five|six|seven|eight|nine|ten)", "in ", text, flags=re.I)
    text = re.sub(r"^(since|back in|during|by|until|of|early|late|mid-?|end of|(?:till|from|around)(?=\s+(?:19|20)\d\d\b))\s+", "",
                  text, flags=re.I)
    text = re.sub(r"^(on|the)\s+", "", text, flags=re.I)
    text = re.sub(r"\bthis past\b", "last", text, flags=re.I)
    text = re.sub(r"^past\s+(?=week|month|year)", "last ", text, flags=re.I)
    text = re.sub(r"^(\d{1,2})(st|nd|rd|th)\s+of\s+", r"\1 ", text)
    text = re.sub(r"\b(this (morning|afternoon|evening))\b", "today", text, flags=re.I)
    text = re.sub(r"\b(Mon|Tues?|Wed|Thur?s?|Fri|Sat|Sun)\b\.?", lambda m: _WD_FULL[m.group(1)[:3].lower()], text)
    gran = granularity(expr)
    settings = {
        "RELATIVE_BASE": datetime.combine(base_day, datetime.min.time()).replace(hour=12),
        "PREFER_DATES_FROM": prefer,
        "RETURN_AS_TIMEZONE_AWARE": False,
        "PREFER_DAY_OF_MONTH": "first",
    }
    if re.fullmatch(r"(19|20)\d\d", text):
        return (date(int(text), 7, 1), *year_span(int(text)), "year")
    parsed = dateparser.parse(text, languages=["en"], settings=settings)
    if parsed is None:
        return None
    d = parsed.date()
    # "last May" said in May means a year back; dateparser's 'past' preference already picks that.
    s, e = grain_span(d, gran)
    return d, s, e, gran


# A holiday named with no tense either way a few weeks after it is that one ("A vet. On Valentine's Day!", "one page
# on New Year's Day", said in the days after), not next year's; any other is the coming one. Fitted on dev.
JUST_PAST_DAYS = 31


_HOLIDAY_ALONE = re.compile(rf"(?i)(?:on\s+)?(?:{_HOLIDAY})|(?:(?:over|at|on|during)\s+)?(?:the\s+)?(?:whole\s+)?easter\s+weekend")


def just_past_holiday(surface: str, today: date) -> bool:
    """A holiday (or the Easter weekend) whose last occurrence is at most JUST_PAST_DAYS before `today`."""
    if not _HOLIDAY_ALONE.fullmatch(surface.strip()):
        return False
    past = _resolve_cached(surface, today, "past")
    return past is not None and 0 < (today - past[1]).days <= JUST_PAST_DAYS


def resolve_time_expressions(text: str, base: datetime, discourse: Discourse = NO_DISCOURSE) -> list[TimeMention]:
    """Every time expression in `text` with its absolute date(s) relative to `base` (event time), and
    to what earlier turns settled (`discourse`; `resolve_turns` threads it through a conversation)."""
    out: list[TimeMention] = []
    raw, text = text, cap_months(text)  # "in july" is read as "in July"; the mentions keep the words as written
    for s, e, _, kind in find_time_expressions(raw):
        surface = text[s:e]
        if kind == "recurring" or (kind == "unless past" and told_as_past(text, s, e)):
            continue  # "every other Sunday", "on Thursdays": no one day to store; "a dunk in the fourth quarter"
        kind = "relative" if kind == "unless past" else kind
        if kind == "range":
            first = range_days(surface)
            prefer = tense_around(text, s, e) or "future"
            anchor = discourse.anchored(first[0]) if first else None
            own = None if anchor else range_span(surface, base.date(), prefer, None)  # its own reading
            anchor = anchor or day_reference(text[:s], own[0] if own else None, base.date(), out, any_explicit=True)
            rng = range_span(surface, base.date(), prefer, anchor) if anchor else own
            if rng is not None and prefer == "past" and first and first[2] is not None:  # "... the 9th to the 11th of May"
                ahead = range_span(surface, base.date(), "future", None)
                rng = ahead if ahead is not None and far_past(base.date(), rng[0], ahead[0]) else rng
            if rng is not None:
                out.append(TimeMention(surface, s, e, "absolute", True, rng[0].isoformat(), rng[0].isoformat(),
                                       rng[1].isoformat(), "day", rng[2]))
            continue
        if kind == "that":
            got = that_span(surface, text[:s], out, discourse)
            if got is not None:
                out.append(TimeMention(surface, s, e, "relative", True, *(x.isoformat() for x in got[:3]), *got[3:]))
            continue
        if kind == "vague":
            out.append(TimeMention(surface, s, e, kind))
            continue
        low = surface.lower()
        wd_only = re.fullmatch(rf"(?:on\s+)?({_WD})(?:\s+\w+)?", surface.strip(), re.I)
        if wd_only and re.search(r"(?i)\b(?:happy|good|lovely|great)\s+$", text[max(0, s - 12):s]):
            day = weekday_near(base.date(), weekday_num(wd_only.group(1)))  # "Happy Sunday!": the day it is said
            out.append(TimeMention(surface, s, e, kind, True, day.isoformat(), day.isoformat(),
                                   (day + timedelta(days=1)).isoformat(), "day", label(day, "day")))
            continue
        if wd_only and re.search(r"(?i)\b(?:the|that)\s+$", text[max(0, s - 6):s]):
            day = weekday_named_before(out, discourse, weekday_num(wd_only.group(1)))
            if day is not None:
                out.append(TimeMention(surface, s, e, kind, True, day.isoformat(), day.isoformat(),
                                       (day + timedelta(days=1)).isoformat(), "day", label(day, "day")))
                continue
        if re.fullmatch(NTH_WEEKDAY_RE, surface.strip(), re.I):
            prefer = tense_around(text, s, e) or "future"
        elif re.search(r"\bweek(?:end)?s?\s+(?:of|in)\b|\s(?:summer|winter|spring|fall|autumn)s\s", low):  # "the last week of May"
            prefer = tense_around(text, s, e) or "future"
        elif re.fullmatch(r"(?:\w+\s+)?the\s+weekend", low) and not low.startswith("since"):  # "till the weekend": ahead
            prefer = tense_around(text, s, e) or ("future" if re.match(r"till|until|by", low) else "nearest")
        elif re.search(r"\b(ago|last|past|yesterday|back|earlier)\b|^since\b", low) or "last night" in low:
            prefer = "past"
        elif re.search(r"\b(next|tomorrow|from now|in \S+ (days?|weeks?|months?|years?))\b", low):
            prefer = "future"
        else:  # a bare weekday, month, season or holiday: the tense of its own sentence decides
            tense = tense_around(text, s, e)
            # no tense at all (present: "the demo is on Friday", "I start on June 12"): the coming one
            prefer = tense or ("past" if just_past_holiday(surface, base.date()) else "future")
        since = re.search(r"(?i)\bsince\s+$", text[max(0, s - 8):s]) is not None or low.startswith("since ")  # "since the 3rd", "since Friday", "since the autumn"
        nth = re.fullmatch(r"(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)", ordinals_to_digits(surface.strip()), re.I)
        if nth:  # "on August 10 and back on the 24th": the month of the day named before it
            day = int(nth.group(1))  # in the turn, a named date; else a restatement of the last one; else any day
            anchor = None if since else discourse.anchored(day)  # a restatement of the day last named
            own = None if anchor else nth_day(base.date(), day, prefer)  # its own reading
            if anchor is None and not since:
                anchor = day_reference(text[:s], own[0] if own else None, base.date(), out)
            if (anchor is None and not since and own is not None and (own[0] - base.date()).days > 0
                    and named_before(out) is None and (kept := discourse.remembered(day, base.date()))):
                # read ahead, with nothing in the turn to count from: a day an earlier sitting named with its month
                # ("the launch is on the 20th of April" ... weeks later: "can we still do the 20th?")
                anchor = kept
            res = nth_day(anchor, day, "future") if anchor else own
        elif re.fullmatch(FOLLOWING_RE, surface.strip(), re.I) or re.fullmatch(BEFORE_RE, surface.strip(), re.I):
            # "the following Saturday", "the Friday before": from the day named before it
            own = re.search(r"(?i)\b(?:before last|ago)$", surface.strip())  # counted from the day it is said
            ref = base.date() if own else (named_before(out) or discourse.last_day)
            fl = None if ref is None else (following_span(surface, ref) or before_span(surface, ref))
            res = None if fl is None else (fl[0], fl[0], fl[1], fl[2])  # type: ignore[assignment]
        else:
            res = weekday_in_view(surface, pick_reading(surface, text, s, e, base.date(), prefer, since, _resolve_cached),
                                  named_before(out, True, False) or (discourse.span and discourse.span[0]), base.date())
        if res is None:
            out.append(TimeMention(surface, s, e, kind))
            continue
        d, rs, re_, gran = res[:4]
        if len(res) == 5:
            out.append(TimeMention(surface, s, e, kind, True, d.isoformat(), rs.isoformat(), re_.isoformat(), gran,
                                   res[4]))  # type: ignore[misc]
            continue
        if gran == "season":
            said = f"{[k for k, v in SEASON_MONTHS.items() if v == rs.month][0]} {rs.year}"
        elif gran == "week" and (re_ - rs).days == 2:
            said = weekend_label(rs)
        else:
            said = label(d if gran == "day" else rs, gran)
        out.append(TimeMention(surface, s, e, kind, True, d.isoformat(), rs.isoformat(), re_.isoformat(), gran, said))
    out = joined_ranges(text, appositions(text, out))
    return out if raw == text else [replace(m, surface=raw[m.start:m.end]) for m in out]

