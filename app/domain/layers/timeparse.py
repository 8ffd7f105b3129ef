"""Time expressions in an event, resolved against the event's own time (PRISM App. C.1: temporal
annotations "normalised to ISO-8601 when explicit; otherwise ... a best-effort absolute-date estimate
from the ... conversation time").

"I went there last Saturday", said on 8 May 2023, is stored as 2023-05-06 next to its surface text,
so a "when" question can match a date nobody wrote. Resolution uses dateparser with
RELATIVE_BASE = event time and PREFER_DATES_FROM = 'past' (conversations mostly report what
happened); sentences with future markers ("will", "next", "going to") prefer the future for the
ambiguous forms (a bare weekday or month). dateparser does not know weekends, seasons or fuzzy
counts ("a few weeks ago"); those few are computed here, weekends and seasons by the calendar the
query shares (`app.domain.timeexpr`). Each resolution carries its granularity and the calendar range
it covers ("last month" is the whole month, not one day), half-open like every span there:
[range_start, range_end), so "May 2023" is 2023-05-01 .. 2023-06-01.
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Iterable, Literal

import dateparser

from app.domain.timeexpr import MONTH_RE, ORD_RE, SEASON_MONTHS, grain_span, relative_season, relative_weekend, year_span

LAYER_VERSION = "timeparse/2"  # 2: ranges are half-open [range_start, range_end)

Granularity = Literal["day", "week", "month", "season", "year"]

_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of|a couple|few|several)"
_UNIT = r"(?:days?|weeks?|months?|years?)"
# abbreviations only when capitalised: "sat" is a verb, "Sat" a day
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|(?-i:Mon|Tues?|Wed|Thur?s?|Fri|Sat)\b\.?)"
_SEASON = r"(?:summer|winter|spring|fall|autumn)"
_MONTH_CAP = MONTH_RE
_ORD = ORD_RE

# (regex, kind). Order = priority when spans overlap (longer, more specific patterns first).
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_ORD}\s+(?:of\s+)?{_MONTH_CAP}(?:,?\s+(?:19|20)\d\d)?\b"), "absolute"),
    (re.compile(rf"\b(?:on\s+)?{_MONTH_CAP}\s+{_ORD}\b(?:,?\s+(?:19|20)\d\d\b)?"), "absolute"),
    (re.compile(rf"\b(?:in|during|since|by|until|of|early|late|mid|mid-|end of|last|next|this)\s+{_MONTH_CAP}(?:,?\s+(?:19|20)\d\d)?\b"), "relative"),
    (re.compile(rf"\b{_MONTH_CAP}\s+(?:19|20)\d\d\b"), "absolute"),
    (re.compile(r"\b(?:in|since|back in|during|by|until|of)\s+(?:19|20)\d\d\b", re.I), "absolute"),
    (re.compile(r"\b(?:the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening))\b", re.I), "relative"),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|back|earlier)\b", re.I), "relative"),
    (re.compile(rf"\b(?:in|within)\s+(?:the\s+next\s+)?{_NUM}\s+{_UNIT}\b", re.I), "relative"),
    (re.compile(rf"\b(?:last|this past|this|next|past)\s+(?:week|weekend|month|year|{_SEASON}|{_WD})\b", re.I), "relative"),
    (re.compile(rf"\b(?:on\s+)?{_WD}\b", re.I), "relative"),
    (re.compile(r"\b(?:the other (?:day|week|night)|a while (?:ago|back)|some time ago|not long ago)\b", re.I), "vague"),
]

_FUTURE_RE = re.compile(
    r"\b(will|'ll|going to|gonna|plan(ning)? to|planning|can't wait|looking forward|hope to|next|see you|"
    r"tomorrow|soon|upcoming|intend|want to|would like to|'d like to|"
    r"(?:am|are|is|'m|'re|'s)\s+(?:going|heading|flying|driving|leaving|moving|starting|visiting))\b",
    re.I,
)
_WD_FULL = {d[:3]: d for d in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")}
_FUZZY = {"a few": "3", "few": "3", "several": "3", "a couple of": "2", "a couple": "2"}


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


def find_time_expressions(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, surface, kind) for every time expression, non-overlapping, in text order."""
    taken: list[tuple[int, int, str, str]] = []
    for rx, kind in _PATTERNS:
        for m in rx.finditer(text):
            s, e = m.span()
            if any(s < te and ts < e for ts, te, _, _ in taken):
                continue
            taken.append((s, e, m.group(0), kind))
    return sorted(taken)


def _label(d: date, gran: Granularity) -> str:
    if gran == "day":
        return f"{d.day} {calendar.month_name[d.month]} {d.year}"
    if gran == "week":
        return f"week of {d.day} {calendar.month_name[d.month]} {d.year}"
    if gran == "month":
        return f"{calendar.month_name[d.month]} {d.year}"
    return str(d.year)


def _granularity(expr: str) -> Granularity:
    low = expr.lower()
    if re.search(r"\bweeks?\b", low) and "weekend" not in low:
        return "week"
    if re.search(r"\bmonths?\b", low):
        return "month"
    if re.search(r"\byears?\b", low):
        return "year"
    if re.fullmatch(r"(?:in|since|back in|during|by|until|of)\s+(19|20)\d\d", low):
        return "year"
    has_month = re.search(_MONTH_CAP, expr) is not None
    has_day = re.search(r"\b\d{1,2}(st|nd|rd|th)?\b", re.sub(r"(19|20)\d\d", "", expr)) is not None
    if has_month and not has_day:
        return "month"
    return "day"


@lru_cache(maxsize=32768)
def _resolve_cached(expr: str, base_day: date, prefer: str) -> tuple[date, date, date, Granularity] | None:
    low = expr.lower().strip()
    low = re.sub(r"^(on|the)\s+", "", low)
    m = re.fullmatch(r"(last|this past|this|next|past)\s+(weekend|" + _SEASON + ")", low)
    if m:
        which, what = m.groups()
        if what == "weekend":
            s, e = relative_weekend(base_day, which)
            return s, s, e, "week"
        s, e = relative_season(base_day, which, what)
        return s, s, e, "season"
    text = expr.strip()
    for fuzzy, digit in _FUZZY.items():
        text = re.sub(rf"\b{fuzzy}\b", digit, text, flags=re.I)
    text = re.sub(r"\b(back|earlier)$", "ago", text, flags=re.I)
    text = re.sub(r"^(in|within)\s+(the\s+next\s+)?(?=\d|a\b|an\b|one|two|three|four|five|six|seven|eight|nine|ten)", "in ", text, flags=re.I)
    text = re.sub(r"^(since|back in|during|by|until|of|early|late|mid-?|end of)\s+", "", text, flags=re.I)
    text = re.sub(r"^(on|the)\s+", "", text, flags=re.I)
    text = re.sub(r"\bthis past\b", "last", text, flags=re.I)
    text = re.sub(r"^past\s+(?=week|month|year)", "last ", text, flags=re.I)
    text = re.sub(r"^(\d{1,2})(st|nd|rd|th)\s+of\s+", r"\1 ", text)
    text = re.sub(r"\b(this (morning|afternoon|evening))\b", "today", text, flags=re.I)
    text = re.sub(r"\b(Mon|Tues?|Wed|Thur?s?|Fri|Sat)\b\.?", lambda m: _WD_FULL[m.group(1)[:3].lower()], text)
    gran = _granularity(expr)
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


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(c, 0, start) for c in ".!?\n") + 1
    rights = [i for i in (text.find(c, end) for c in ".!?\n") if i >= 0]
    return text[left : min(rights) if rights else len(text)]


def resolve_time_expressions(text: str, base: datetime) -> list[TimeMention]:
    """Every time expression in `text` with its absolute date(s) relative to `base` (event time)."""
    out: list[TimeMention] = []
    for s, e, surface, kind in find_time_expressions(text):
        if kind == "vague":
            out.append(TimeMention(surface, s, e, kind))
            continue
        low = surface.lower()
        if re.search(r"\b(ago|last|past|yesterday|back|earlier)\b", low) or "last night" in low:
            prefer = "past"
        elif re.search(r"\b(next|tomorrow|in \S+ (days?|weeks?|months?|years?))\b", low):
            prefer = "future"
        else:  # a bare weekday or month: the tense of its own sentence decides
            prefer = "future" if _FUTURE_RE.search(_sentence_around(text, s, e)) else "past"
        res = _resolve_cached(surface, base.date(), prefer)
        if res is None:
            out.append(TimeMention(surface, s, e, kind))
            continue
        d, rs, re_, gran = res
        if gran == "season":
            label = f"{[k for k, v in SEASON_MONTHS.items() if v == rs.month][0]} {rs.year}"
        elif gran == "week" and (re_ - rs).days == 2:
            label = f"weekend of {rs.day} {calendar.month_name[rs.month]} {rs.year}"
        else:
            label = _label(d if gran == "day" else rs, gran)
        out.append(TimeMention(surface, s, e, kind, True, d.isoformat(), rs.isoformat(), re_.isoformat(), gran, label))
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
