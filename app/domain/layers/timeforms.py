"""More calendar forms for `app.domain.layers.timeparse`, resolved by the shared calendar
(`app.domain.timeexpr`): days of a month said in words ("the first of October", "May twenty-third"),
decades ("the nineties", "the '80s", "the early 2000s"), an ordinal weekday of a month ("the second
Saturday in January", "the last Friday of the month"), fortnights ("a fortnight ago" is two weeks ago),
movable holidays (Easter and the days around it) and the recurring forms that name no one day
("every other Sunday", "on Thursdays", "Saturday mornings"). Pure functions, no I/O.
"""
from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from dateutil.easter import easter

from app.domain.timeexpr import (DECADE_RE, MONTH_RE, MONTHS, NUMBER_WORDS, decade_span, month_span, relative_season,
                                 season_span, shift_month)

_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
_TEENS = ["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
          "eighteenth", "nineteenth"]
ORDINAL_WORDS: dict[str, int] = {w: i + 1 for i, w in enumerate(_UNITS)}
ORDINAL_WORDS.update({w: i + 10 for i, w in enumerate(_TEENS)})
ORDINAL_WORDS.update({"twentieth": 20, "thirtieth": 30})
ORDINAL_WORDS.update({f"{tens}{sep}{u}": base + i + 1 for tens, base in (("twenty", 20), ("thirty", 30))
                      for i, u in enumerate(_UNITS) for sep in ("-", " ") if base + i + 1 <= 31})
ORD_WORD_RE = "(?:" + "|".join(re.escape(w) for w in sorted(ORDINAL_WORDS, key=len, reverse=True)) + ")"
# what may follow "the 10th" or "the tenth" when it is a day (not "the 10th floor", "for the third time"): a
# function word, or a verb said of a date ("the 22nd works", "the 16th suits me", "on the 19th anyway")
AFTER_DAY_RE = (r"(?:for|to|and|or|at|in|on|until|till|through|with|but|so|because|when|if|then|we|I|you|he|she|they|it|"
                r"is|was|instead|already|too|please|anyway|now|still|though|also|again|as|while|than|like|before|after|"
                r"from|by|there|would|will|could|should|can|might|works?|suits?|fits?|clash(?:es)?|sounds?|looks?|went|"
                # an auxiliary, a negation or a sentence adverb after it: "the 3rd has no clashes", "the 10th won't work",
                # "can't do the 8th sadly", "the 7th free", "the 11th off work", "the 13th either", "the 7th btw"
                r"has|have|had|are|were|isn['’]t|wasn['’]t|won['’]t|wouldn['’]t|didn['’]t|doesn['’]t|don['’]t|can['’]t|"
                r"any|either|sadly|hopefully|btw|free|off|without|that|which|gives?)")

_WD_NAMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NTH = r"(?:first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)"
# "the second Saturday in January", "the last Friday of the month", "the first Monday of next month"
NTH_WEEKDAY_RE = (rf"\b(?:on\s+)?(?:the\s+)?{_NTH}\s+{_WD_NAMES}\s+(?:in|of)\s+(?:{MONTH_RE}(?:,?\s+(?:19|20)\d\d\b)?|"
                  r"(?:the|this|next|last)\s+month\b)")

# Days of a month in words: "the first of October", "October the first", "May twenty-third"
DAY_WORD_RE = (rf"\b(?i:on\s+)?(?:(?i:the\s+{ORD_WORD_RE}\s+of)\s+{MONTH_RE}|{MONTH_RE}\s+(?i:(?:the\s+)?{ORD_WORD_RE})\b)"
               r"(?:,?\s+(?:19|20)\d\d\b)?")

# What recurs names no one day; matched only to keep its weekday from being read as a date
RECURRING_RE = (rf"\b(?:the\s+{_NTH}\s+{_WD_NAMES}\s+(?:of|in)\s+(?:every|each)\s+month|every\s+(?:other\s+|second\s+|single\s+)?(?:{_WD_NAMES}(?:(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)"
                rf"{_WD_NAMES})*(?:\s+(?:morning|afternoon|evening|night)s?\b)?|weekend|week|month|morning|night|day)|"
                rf"(?:on\s+)?{_WD_NAMES}s\b|{_WD_NAMES}(?:(?:\s*,\s*|\s+(?:and|or)\s+){_WD_NAMES})*\s+(?:mornings|afternoons|evenings|nights)\b)")

# Movable holidays, by their offset from Easter Sunday
EASTER_DAYS = {"good friday": -2, "holy saturday": -1, "easter sunday": 0, "easter day": 0, "easter monday": 1,
               "easter": 0}
EASTER_RE = "|".join(re.escape(k) for k in sorted(EASTER_DAYS, key=len, reverse=True))


def ordinals_to_digits(text: str) -> str:
    """"the first of October" -> "the 1st of October", for the resolvers that read digits."""
    def sub(m: re.Match[str]) -> str:
        n = ORDINAL_WORDS[re.sub(r"\s+", " ", m.group(0).lower())]
        suffix = "st" if n % 10 == 1 and n != 11 else "nd" if n % 10 == 2 and n != 12 else \
            "rd" if n % 10 == 3 and n != 13 else "th"
        return f"{n}{suffix}"
    return re.sub(rf"\b{ORD_WORD_RE}\b", sub, text, flags=re.I)


def fortnights_to_weeks(text: str) -> str:
    """"a fortnight ago" -> "2 weeks ago", "in three fortnights" -> "in 6 weeks"."""
    def sub(m: re.Match[str]) -> str:
        tok = m.group(1).lower()
        n = int(tok) if tok.isdigit() else NUMBER_WORDS.get(tok, 1)
        return f"{2 * n} weeks"
    return re.sub(r"\b(\d+|a|an|one|two|three|four|five|six)\s+fortnights?\b", sub, text, flags=re.I)


def nth_weekday(expr: str, ref: date, pick_year) -> date | None:  # noqa: ANN001 (a year-picking function)
    """"the second Saturday in January": the month's year by `pick_year(month)`; "the last Friday of
    the month": this month's (next month's, last month's)."""
    low = re.sub(r"\s+", " ", expr.lower())
    m = re.search(rf"(?:the )?({_NTH}) ({_WD_NAMES}) (?:in|of) (.+)$", low)
    if not m:
        return None
    nth, wd = m.group(1), list(calendar.day_name).index(m.group(2).capitalize())
    rest = m.group(3).strip(" .,")
    mm = re.fullmatch(r"(the|this|next|last) month", rest)
    if mm:
        y, mo = shift_month(ref.year, ref.month, {"next": 1, "last": -1}.get(mm.group(1), 0))
    else:
        mt = re.match(r"([a-z]+)\.?(?:,? ((?:19|20)\d\d))?$", rest)
        if not mt or mt.group(1) not in MONTHS:
            return None
        mo = MONTHS[mt.group(1)]
        y = int(mt.group(2)) if mt.group(2) else pick_year(mo)
    first, end = month_span(y, mo)
    days = [first + timedelta(days=i) for i in range((end - first).days)]
    hits = [d for d in days if d.weekday() == wd]
    if nth == "last":
        return hits[-1]
    k = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}.get(nth) or int(re.sub(r"\D", "", nth))
    return hits[k - 1] if k <= len(hits) else None


def easter_day(name: str, y: int) -> date:
    return easter(y) + timedelta(days=EASTER_DAYS[re.sub(r"\s+", " ", name.lower())])


# ------------------------------------------------------------------ weeks and weekends counted from now

_COUNT = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|few|several)"
_REL = rf"(?:{_WD_NAMES}|weekend|week|month|year)"
_SEASONS = r"(?:summer|winter|spring|fall|autumn)"
# "the Friday after next", "the weekend before last", "two weekends ago", "a week on Tuesday", "Monday week",
# "a week tomorrow", "the 5th of next month"
SHIFTED_RE = (rf"\b(?:(?:on\s+)?the\s+{_REL}\s+(?:after\s+next|before\s+last)|{_COUNT}\s+weekends?\s+(?:ago|back|earlier)|"
              rf"in\s+{_COUNT}\s+weekends?(?:['’]\s+time)?|"
              rf"(?:a|{_COUNT})\s+(?:weeks?|fortnights?)\s+(?:on|from|next|this|last)\s+{_WD_NAMES}|"
              rf"(?:a|one|two)\s+(?:weeks?|fortnights?)\s+(?:from\s+)?(?:today|tomorrow)|(?:on\s+)?{_WD_NAMES}\s+(?:week|fortnight)(?![\w-])|"
              rf"{_COUNT}\s+{_SEASONS}s\s+(?:ago|back)|"
              rf"(?:(?:in|during|for|over)\s+)?(?:the\s+)?(?:first|second|third|fourth|last|final)\s+week\s+(?:of|in)\s+{MONTH_RE}|"
              rf"(?:(?:in|during|for|over)\s+)?the\s+week\s+of\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH_RE}|"
              rf"(?:(?:in|during|for|over)\s+)?the\s+week\s+of\s+{MONTH_RE}\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b|"
              rf"(?:(?:in|during|for|over|on|at)\s+)?(?:the\s+)?(?:first|second|third|fourth|last|final)\s+weekend\s+(?:of|in)\s+{MONTH_RE}|"
              rf"(?:(?:in|during|for|over|on|at)\s+)?the\s+week(?:end)?\s+of\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{MONTH_RE})|"
              rf"(?:(?:in|during|for|over|on|at)\s+)?the\s+weekend\s+of\s+(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH_RE}|"
              rf"{MONTH_RE}\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b)|"
              r"(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)\s+of\s+(?:this|next|last)\s+month|"
              r"this\s+time\s+(?:(?:next|last)\s+(?:week|month|year)|tomorrow|yesterday)\b)")
# read by `shifted_span` too, but matched apart behind their own pre-tests (`timewords.WORD_PATTERNS`): "Wednesday last
# week"; "the last two weeks of July"
WEEKDAY_OF_WEEK_RE = rf"\b(?:on\s+)?{_WD_NAMES}\s+(?:last|next|this)\s+week\b"
WEEKS_OF_MONTH_RE = rf"\b(?:(?:in|during|for|over)\s+)?(?:the\s+)?(?:first|1st|last|final)\s+(?:two|three|2|3)\s+weeks\s+(?:of|in)\s+{MONTH_RE}"
SHIFTED_FORMS = (SHIFTED_RE, WEEKDAY_OF_WEEK_RE, WEEKS_OF_MONTH_RE)  # what `shifted_span` reads
# "the following Saturday", "the Saturday after", "the next day", "the following week": after the day
# named before it in the same text (else the day it is said); "the night before last", "two Saturdays ago"
FOLLOWING_RE = (rf"\b(?:(?:on\s+)?the\s+(?:following\s+(?:{_WD_NAMES}|day|morning|week|weekend)|next\s+(?:day|morning))\b|"
                rf"(?:on\s+)?the\s+{_WD_NAMES}\s+after\b(?!\s+(?:next|that|the|this|my|our|his|her|their|\w+ing)\b)(?!\s+(?-i:[A-Z]))|"
                rf"the\s+(?:day|night)\s+before\s+last|{_COUNT}\s+{_WD_NAMES}s\s+ago)")


def following_span(expr: str, anchor: date) -> tuple[date, date, str] | None:
    low = re.sub(r"\s+", " ", expr.lower()).strip()
    low = re.sub(r"^on ", "", low)
    if re.fullmatch(r"the (?:day|night) before last", low):
        d = anchor - timedelta(days=2)
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(rf"({_COUNT}) ({_WD_NAMES})s ago", low)
    if m:  # "two Saturdays ago": a week before the latest Saturday
        wd = list(calendar.day_name).index(m.group(2).capitalize())
        d = anchor - timedelta(days=(anchor.weekday() - wd) % 7 or 7) - timedelta(weeks=_count(m.group(1)) - 1)
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(rf"the (?:(?:following|next) ({_WD_NAMES}|day|morning|week|weekend)|({_WD_NAMES}) after)", low)
    if not m:
        return None
    what = m.group(1) or m.group(2)
    if what in ("day", "morning"):
        d = anchor + timedelta(days=1)
        return d, d + timedelta(days=1), "day"
    if what == "week":
        s = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=1)
        return s, s + timedelta(days=7), "week"
    if what == "weekend":
        s, e = weekend_of(anchor)
        return (s, e, "week") if s > anchor else (s + timedelta(weeks=1), e + timedelta(weeks=1), "week")
    wd = list(calendar.day_name).index(what.capitalize())
    d = anchor + timedelta(days=(wd - anchor.weekday()) % 7 or 7)
    return d, d + timedelta(days=1), "day"


# a month that is also a name or a verb, second of two joined by "or" / "and" ("in July or August")
SECOND_MONTH_RE = ("(?:" + "|".join(f"(?<={m} {j} )" for m in calendar.month_name[1:] for j in ("or", "and"))
                   + r")(?:April|June|August|March|May)\b(?!\s*\d)(?!\s+[A-Z])")

# "early 2023", "mid-2024", "the end of the year", "the start of next year": the year's thirds, as a month's
YEAR_PART_RE = (r"\b(?:the\s+)?(?:early|mid|late|end\s+of|beginning\s+of|start\s+of|middle\s+of)[\s-]+"
                r"(?:(?:19|20)\d\d\b|(?:the|this|next|last)\s+year\b)")


def weekend_of(d: date) -> tuple[date, date]:
    """[Saturday, Monday) of the Monday-to-Sunday week holding `d`."""
    sat = d - timedelta(days=d.weekday()) + timedelta(days=5)
    return sat, sat + timedelta(days=2)


def _count(tok: str) -> int:
    tok = re.sub(r"\s+", " ", tok.lower())
    return int(tok) if tok.isdigit() else {"a couple of": 2, "a few": 3, "few": 3, "several": 3}.get(tok) \
        or NUMBER_WORDS.get(tok, 1)


def pick_year_of(mo: int, ref: date, prefer: str) -> int:
    """The year of a month named without one: the current month counts as both past and future."""
    if prefer == "past":
        return ref.year if mo <= ref.month else ref.year - 1
    return ref.year if mo >= ref.month else ref.year + 1


def shifted_span(expr: str, ref: date, prefer: str = "future") -> tuple[date, date, str] | None:
    """[start, end) and granularity ("day", "week") of the forms of SHIFTED_RE. "next Friday" is the
    coming one and "last Friday" the latest before `ref`, so "the Friday after next" is a week after the
    coming one and "the Friday before last" a week before the latest; "two weekends ago" is the weekend
    of the week two weeks back (as "two weeks ago" is that week); "a week on Tuesday" / "Tuesday week"
    is a week after the coming Tuesday."""
    low = re.sub(r"\s+", " ", expr.lower().replace("’", "'")).strip()
    low = re.sub(r"^on ", "", low)
    m = re.fullmatch(rf"the ({_REL}) (after next|before last)", low)
    if m:
        what, sign = m.group(1), (1 if m.group(2) == "after next" else -1)
        if what == "week":
            s = ref - timedelta(days=ref.weekday()) + timedelta(weeks=2 * sign)
            return s, s + timedelta(days=7), "week"
        if what == "year":
            return date(ref.year + 2 * sign, 1, 1), date(ref.year + 2 * sign + 1, 1, 1), "year"
        if what == "month":
            s, e = month_span(*shift_month(ref.year, ref.month, 2 * sign))
            return s, e, "month"
        if what == "weekend":
            sat = ref - timedelta(days=ref.weekday()) + timedelta(days=5)
            if sign > 0:
                sat += timedelta(weeks=1 if sat > ref else 2)
            else:
                sat -= timedelta(weeks=2)
            return sat, sat + timedelta(days=2), "week"
        wd = list(calendar.day_name).index(what.capitalize())
        if sign > 0:
            d = ref + timedelta(days=(wd - ref.weekday()) % 7 or 7) + timedelta(weeks=1)
        else:
            d = ref - timedelta(days=(ref.weekday() - wd) % 7 or 7) - timedelta(weeks=1)
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(rf"({_COUNT}) weekends? (?:ago|back|earlier)", low)
    if m:
        s, e = weekend_of(ref - timedelta(weeks=_count(m.group(1))))
        return s, e, "week"
    m = re.fullmatch(rf"in ({_COUNT}) weekends?(?: ?'? time)?", low)
    if m:
        s, e = weekend_of(ref + timedelta(weeks=_count(m.group(1))))
        return s, e, "week"
    m = re.fullmatch(rf"({_WD_NAMES}) (last|next|this) week", low)
    if m:  # "Wednesday last week": that weekday of the week before this one
        monday = ref - timedelta(days=ref.weekday()) + timedelta(weeks={"last": -1, "next": 1}.get(m.group(2), 0))
        d = monday + timedelta(days=list(calendar.day_name).index(m.group(1).capitalize()))
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(rf"({_COUNT}) (weeks?|fortnights?) last ({_WD_NAMES})", low)
    if m:  # "a week last Saturday": a week before the latest Saturday
        wd = list(calendar.day_name).index(m.group(3).capitalize())
        weeks = _count(m.group(1)) * (2 if "fortnight" in m.group(2) else 1)
        d = ref - timedelta(days=(ref.weekday() - wd) % 7 or 7) - timedelta(weeks=weeks)
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(rf"({_COUNT}) (weeks?|fortnights?) (?:on|from|next|this) ({_WD_NAMES})|({_WD_NAMES}) (week|fortnight)", low)
    if m:  # "a week on Tuesday", "a fortnight on Saturday", "two weeks from Friday", "Monday fortnight"
        wd = list(calendar.day_name).index((m.group(3) or m.group(4)).capitalize())
        weeks = (_count(m.group(1)) if m.group(1) else 1) * (2 if "fortnight" in (m.group(2) or m.group(5)) else 1)
        d = ref + timedelta(days=(wd - ref.weekday()) % 7 or 7) + timedelta(weeks=weeks)
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(r"this time (?:(next|last) (week|month|year)|(tomorrow|yesterday))", low)
    if m:  # "this time next week": the same weekday a week on, one day; "this time last year": the date a year back
        sign = -1 if (m.group(1) or m.group(3)) in ("last", "yesterday") else 1
        unit = m.group(2) or "day"
        y, mo = shift_month(ref.year, ref.month, sign * (12 if unit == "year" else 1))
        d = ref + timedelta(days=sign * (7 if unit == "week" else 1)) if unit in ("week", "day") else \
            date(y, mo, min(ref.day, calendar.monthrange(y, mo)[1]))
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(r"(a|one|two) (weeks?|fortnights?) (?:from )?(today|tomorrow)", low)
    if m:  # "a week today", "a week from tomorrow", "a fortnight today"
        weeks = _count(m.group(1)) * (2 if m.group(2).startswith("fortnight") else 1)
        d = ref + timedelta(days=7 * weeks + (m.group(3) == "tomorrow"))
        return d, d + timedelta(days=1), "day"
    m = re.fullmatch(rf"({_COUNT}) ({_SEASONS})s (?:ago|back)", low)
    if m:  # "two summers ago": counted back from the latest whole one ("last summer" is one ago)
        s_, e_ = relative_season(ref, "last", m.group(2))
        n = _count(m.group(1)) - 1
        s_, e_ = season_span(s_.year - n, m.group(2))
        return s_, e_, "season"
    low = re.sub(r"^(?:in|during|for|over|at) ", "", low)
    m = re.fullmatch(rf"(?:the )?(first|1st|last|final) (two|three|2|3) weeks (?:of|in) ({MONTH_RE})", low, re.I)
    if m:  # "the last two weeks of July": its last fourteen days ("the first two weeks": days 1-14)
        mo = MONTHS[m.group(3).lower().rstrip(".")]
        first, end = month_span(pick_year_of(mo, ref, prefer), mo)
        n = 7 * {"two": 2, "three": 3}.get(m.group(2), 0) or 7 * int(m.group(2))
        return (first, first + timedelta(days=n), "day") if m.group(1) in ("first", "1st") else (end - timedelta(days=n), end, "day")
    m = re.fullmatch(rf"(?:the )?(first|second|third|fourth|last|final) week (?:of|in) ({MONTH_RE})", low, re.I)
    if m:  # "the first week of June": its days 1-7 (the second 8-14, ...); "the last week": its last seven
        mo = MONTHS[m.group(2).lower().rstrip(".")]
        y = pick_year_of(mo, ref, prefer)
        first, end = month_span(y, mo)
        if m.group(1) in ("last", "final"):
            return end - timedelta(days=7), end, "week"
        k = ["first", "second", "third", "fourth"].index(m.group(1))
        return first + timedelta(days=7 * k), first + timedelta(days=7 * k + 7), "week"
    m = (re.fullmatch(rf"the week of (?:the )?(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({MONTH_RE})", low, re.I)
         or re.fullmatch(rf"the week of ({MONTH_RE}) (?:the )?(\d{{1,2}})(?:st|nd|rd|th)?", low, re.I))
    if m:  # "the week of March 24": the Monday-to-Sunday week holding that day
        day, mon = (m.group(1), m.group(2)) if m.group(1).isdigit() else (m.group(2), m.group(1))
        mo = MONTHS[mon.lower().rstrip(".")]
        try:
            d = date(pick_year_of(mo, ref, prefer), mo, int(day))
        except ValueError:
            return None
        s_ = d - timedelta(days=d.weekday())
        return s_, s_ + timedelta(days=7), "week"
    m = re.fullmatch(rf"(?:the )?(first|second|third|fourth|last|final) weekend (?:of|in) ({MONTH_RE})", low, re.I)
    if m:  # "the last weekend of October": its last Saturday and the Sunday after it (the first: its first Saturday)
        mo = MONTHS[m.group(2).lower().rstrip(".")]
        first, end = month_span(pick_year_of(mo, ref, prefer), mo)
        if m.group(1) in ("last", "final"):
            sat = end - timedelta(days=1)
            sat -= timedelta(days=(sat.weekday() - 5) % 7)
        else:
            sat = first + timedelta(days=(5 - first.weekday()) % 7 + 7 * ["first", "second", "third", "fourth"].index(m.group(1)))
        return sat, sat + timedelta(days=2), "week"
    m = (re.fullmatch(rf"the week(end)? of (?:the )?(\d{{1,2}})(?:st|nd|rd|th)?(?: (?:of )?({MONTH_RE}))?", low, re.I)
         or re.fullmatch(rf"the week(end)? of ({MONTH_RE}) (?:the )?(\d{{1,2}})(?:st|nd|rd|th)?", low, re.I))
    if m:  # "the weekend of the 22nd": the Saturday and Sunday by that day; "the week of the 23rd": its week
        day, mon = (m.group(2), m.group(3)) if m.group(2).isdigit() else (m.group(3), m.group(2))
        if mon:
            mo = MONTHS[mon.lower().rstrip(".")]
            try:
                d = date(pick_year_of(mo, ref, prefer), mo, int(day))
            except ValueError:
                return None
        else:  # the coming such day (told in the past, the latest)
            y, mo = ref.year, ref.month
            for _ in range(3):
                try:
                    d = date(y, mo, int(day))
                except ValueError:
                    d = None
                if d is not None and ((d >= ref) if prefer != "past" else (d <= ref)):
                    break
                y, mo = shift_month(y, mo, -1 if prefer == "past" else 1)
            if d is None:
                return None
        if not m.group(1):
            s_ = d - timedelta(days=d.weekday())
            return s_, s_ + timedelta(days=7), "week"
        sat = d - timedelta(days=1) if d.weekday() == 6 else d + timedelta(days=(5 - d.weekday()) % 7)
        return sat, sat + timedelta(days=2), "week"
    m = re.fullmatch(r"the (\d{1,2})(?:st|nd|rd|th) of (this|next|last) month", low)
    if m:
        y, mo = shift_month(ref.year, ref.month, {"next": 1, "last": -1}.get(m.group(2), 0))
        try:
            d = date(y, mo, int(m.group(1)))
        except ValueError:
            return None
        return d, d + timedelta(days=1), "day"
    return None


def year_part_span(expr: str, ref: date) -> tuple[date, date, str] | None:
    """"early 2023" [Jan, May), "mid-2024" [May, Sep), "late / the end of 2022" [Sep, Jan): a year's
    thirds, as early / mid / late are a month's; "the end of the year" is this year's."""
    low = re.sub(r"\s+", " ", expr.lower())
    m = re.search(r"(early|mid|late|end of|beginning of|start of|middle of)[ -]+(?:((?:19|20)\d\d)|(the|this|next|last) year)", low)
    if not m:
        return None
    y = int(m.group(2)) if m.group(2) else ref.year + {"next": 1, "last": -1}.get(m.group(3) or "", 0)
    part = m.group(1)
    if part in ("early", "beginning of", "start of"):
        return date(y, 1, 1), date(y, 5, 1), f"early {y}"
    if part in ("mid", "middle of"):
        return date(y, 5, 1), date(y, 9, 1), f"mid {y}"
    return date(y, 9, 1), date(y + 1, 1, 1), f"late {y}"


_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SMALL = {"thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
          **{k: v for k, v in NUMBER_WORDS.items() if " " not in k and k not in ("a", "an", "few", "several")}}
NUMBER_RE = (r"(?:(?:" + "|".join(_TENS) + r")(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?|"
             + "|".join(sorted(_SMALL, key=len, reverse=True)) + ")")


def numbers_to_digits(text: str) -> str:
    """"forty years ago" -> "40 years ago", "twenty-five" -> "25" (before a unit of time)."""
    def sub(m: re.Match[str]) -> str:
        words = re.split(r"[\s-]", m.group(1).lower())
        return str(sum(_TENS.get(w) or _SMALL.get(w, 0) for w in words)) + m.group(2)
    return re.sub(rf"\b({NUMBER_RE})(\s+(?:days?|weeks?|fortnights?|months?|years?|decades?)\b)", sub, text, flags=re.I)


def full_years(text: str, ref: date) -> str:
    """"the summer of '69" -> "the summer of 1969": the latest such year not after `ref`'s;
    "14 June next year" -> "14 June 2026", "spring next year" -> "spring 2026", "Q1 next year" -> "Q1 2026"."""
    def sub(m: re.Match[str]) -> str:
        yy = int(m.group(1))
        return str(2000 + yy if 2000 + yy <= ref.year else 1900 + yy)
    text = re.sub(r"['’](\d\d)\b(?!s)", sub, text)
    rel = re.search(r"\s+(next|last|this)\s+year$", text, re.I)
    if rel and (re.search(MONTH_RE, text) or re.search(r"(?i)\b(?:spring|summer|autumn|fall|winter|quarter)\b|\bQ[1-4]\b", text)):
        text = text[:rel.start()] + f" {ref.year + {'next': 1, 'last': -1}.get(rel.group(1).lower(), 0)}"
    return text


def granularity(expr: str) -> str:
    """"day", "week", "month" or "year": how much of the calendar a form dateparser reads names."""
    low = expr.lower()
    if re.search(r"\bweeks?\b", low) and "weekend" not in low:
        return "week"
    if re.search(r"\bmonths?\b", low):
        return "month"
    if re.search(r"\byears?\b", low):
        return "year"
    if re.fullmatch(r"(?:in|since|back in|during|by|until|of)\s+(19|20)\d\d", low):
        return "year"
    has_month = re.search(MONTH_RE, expr) is not None
    has_day = re.search(r"\b\d{1,2}(st|nd|rd|th)?\b", re.sub(r"(19|20)\d\d", "", expr)) is not None
    if has_month and not has_day:
        return "month"
    return "day"
