"""Which year a month, a season or a day and month said without one is (`pick_reading`), for
`timeparse.resolve_time_expressions`: by the tense of its sentence, the nearer reading for a record ("the October
takings") or a start told in the past, and the coming one where a past-tense sentence arranged it ("rebooked it for
September", "slipped to the 22nd of March") and the past one lies most of a year back. Pure functions, no I/O.
"""
from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Callable

from app.domain.layers.timecal import (_HOLIDAY, _MONTH_CAP, _SEASON, _SPAN_VERB, label, sentence_around, sentence_tense,
                                       tense_around, valid, weekday_num)
from app.domain.layers.timediscourse import is_explicit

Reading = tuple  # what timeparse._resolve_cached gives: (date, start, end, granularity[, label])
Resolve = Callable[[str, date, str], "Reading | None"]

# A day and month told in the past tense ("I was flying out on the 12th of December", "invited me to interview
# on the 4th of February", "completion's slipped to the 22nd of March") whose past reading is most of a year
# back while the coming one is a few months off: the coming one (what the past-tense act arranged). Fitted on dev.
FAR_PAST_DAYS = 180
SOON_DAYS = 120


def no_year_date(surface: str) -> bool:
    """A day of a named month without its year ("the 15th of June", "2 November", "March 22nd")."""
    return (is_explicit(surface) and re.search(r"\d", surface) is not None
            and re.search(r"\b(?:1[89]|20)\d\d\b|['’]\d\d\b|\d{1,2}/\d{1,2}", surface) is None)


# what makes a month said "in" a past-tense sentence still to come: a modal, a condition, a question about it
# ("said it would be in January", "asked if we'd do a gig in December", "can we do it in January?"); without one
# it is the past one ("she came with me in January")
_NOT_YET = re.compile(r"(?i)\b(?:would|could|might|can|will|shall|should|if|going\s+to)\b|['’](?:d|ll)\b|\?")
# ... nor is "in <month>" told in the past where the month is that of a thing offered ("offered me a trial week in
# August", "suggested a coffee in January"; not "we played a gig there in March"), or where no past verb stands in
# the NEAR_WORDS before it ("signed up for the workshop she's running in February", "got the grant for the
# conference in Lisbon in September"; not "she came with me in January", "we played there in March"). Fitted on dev.
_THING_ARRANGED = re.compile(r"(?i)\b(?:offer|suggest|propos|promis|invit)(?:e|es|ed|ing|s)?\b[^.!?,;]{0,30}\b(?:a|an)\s"
                             r"[^.!?,;]{0,40}$")
NEAR_WORDS = 5
_A_YEAR = re.compile(r"\b(?:19|20)\d\d\b")  # a sentence naming a year settles which one its month is


def arranged_month(surface: str, sentence: str) -> bool:
    """A month or season named without its year or a word that places it, in a sentence that names no year either
    ("for September", "slipped to July", "the end of March"; "in January" only where `_NOT_YET` holds): one whose
    coming reading may stand for a past-tense sentence (`coming_if_far`); "in January" also where the month is a
    thing offered or no past verb stands just before it (`_THING_ARRANGED`, `NEAR_WORDS`). Not "last July", "July
    2024", "since the autumn", nor "their 2023 campaign launched in July"."""
    if re.search(r"\d", surface) or re.search(r"(?i)\b(?:last|next|this|past|ago|coming)\b", surface):
        return False
    if not (is_explicit(surface) or re.search(r"(?i)\b(?:spring|summer|autumn|fall|winter)\b", surface)):
        return False
    if _A_YEAR.search(sentence):
        return False
    if not re.match(r"(?i)(?:in|during)\b", surface) or _NOT_YET.search(sentence) is not None:
        return True
    at = sentence.find(surface)
    return at > 0 and (_THING_ARRANGED.search(sentence[:at]) is not None
                       or sentence_tense(" ".join(sentence[:at].split()[-NEAR_WORDS:])) != "past")


# a week of a named month ("the last week of March", "the first weekend in May")
_MONTH_WEEK = re.compile(rf"(?i)(?:(?:in|during|for|over|on|at|till|until|by)\s+)?(?:the\s+)?(?:first|second|third|fourth|last|"
                         rf"final)\s+(?:two\s+)?week(?:end)?s?\s+(?:of|in)\s+{_MONTH_CAP}")


def month_week(surface: str, sentence: str) -> bool:
    """A week of a named month without its year, in a sentence that names no year: told in the past, its coming
    reading may stand (`coming_if_far`), as an arranged month's ("Dad said yes to the last week of August")."""
    return _MONTH_WEEK.fullmatch(surface.strip()) is not None and _A_YEAR.search(sentence) is None


def starts_from(text: str, start: int, end: int) -> bool:
    """"from <month>" as a start ("teaching from September"), not a comparison ("down 15% from April's",
    "an increase from August") nor the start of a stretch ("from April to July": `joined_ranges`)."""
    after, before = text[end:end + 12], text[max(0, start - 40):start]
    return (re.match(r"(?i)['’]s\b|\s*(?:[-–]|to|until|till|through)\b", after) is None
            and re.search(r"(?i)(?:%|\b(?:increase|decrease|up|down|rise|drop|fall|change|compared|growth|more|less|"
                          r"higher|lower)\b)[^.!?]{0,25}$", before) is None)


def holiday(surface: str, before: str) -> bool:
    """A holiday named without its year or a word that places it, and not as the time a past act took place: "for
    Christmas", "till Easter", "Christmas has changed"; not "last Christmas", "got engaged on Paddy's Day", "spent
    Christmas there"."""
    return re.search(rf"(?i)\b(?:last|this|next|past|on|at|over|during|in|{_SPAN_VERB})\s+$", before[-12:]) is None \
        and re.fullmatch(rf"(?i)(?:(?:for|till|until|by|before|after)\s+)?(?:{_HOLIDAY})", surface.strip()) is not None


def far_past(base: date, past_start: date, coming_start: date) -> bool:
    """A past reading starting over `FAR_PAST_DAYS` before `base` whose coming one starts at most `SOON_DAYS` after
    it: the coming one is meant (a day and month, an arranged month, a stretch of days of a named month)."""
    return (base - past_start).days > FAR_PAST_DAYS and 0 <= (coming_start - base).days <= SOON_DAYS


def coming_if_far(base: date, past: tuple, ahead: Callable[[], tuple | None]) -> tuple:
    """The past reading `past` (date, start, end, ...) of a day and month, or the coming one (`ahead()`) when
    `far_past` says so."""
    if (base - past[1]).days <= FAR_PAST_DAYS:
        return past
    coming = ahead()
    return coming if coming is not None and far_past(base, past[1], coming[1]) else past


def nearest(surface: str, base: date, resolve: Resolve) -> Reading | None:
    """The reading, past or coming, whose span lies closer to `base` (0 when it holds it)."""
    got = [r for r in (resolve(surface, base, "past"), resolve(surface, base, "future")) if r is not None]

    def away(r: Reading) -> int:
        return 0 if r[1] <= base < r[2] else min(abs((r[1] - base).days), abs((r[2] - timedelta(days=1) - base).days))
    return min(got, key=away) if got else None


def pick_reading(surface: str, text: str, s: int, e: int, base: date, prefer: str, since: bool,
                 resolve: Resolve) -> Reading | None:
    """The reading of `surface` (at `s`:`e` of `text`, said on `base`) in the direction `prefer`, or the nearer
    one where that is what it means: no tense either way, "for the winter", a record ("the October takings", unless
    told as future), "from September" told in the past or not a start (`starts_from`). A past reading of a day and
    month, of an arranged month (`arranged_month`) or of a week of a month (`month_week`) that lies far back gives way
    to a coming one close ahead."""
    if prefer == "nearest" or re.match(rf"(?i)for\s+(?:the\s+)?{_SEASON}\b", surface) \
            or (re.match(rf"(?i)from\s+{_MONTH_CAP}\b", surface) and (prefer == "past" or not starts_from(text, s, e))) \
            or (re.fullmatch(rf"(?:the|your|my|our|their|his|her)\s+{_MONTH_CAP}", surface.strip())
                and tense_around(text, s, e) != "future"):
        return nearest(surface, base, resolve)  # "booked ... on 23 August", "for the winter", "the April meeting"
    res = resolve(surface, base, prefer)
    if prefer == "past" and res is not None and (res[3] == "day" and (no_year_date(surface) or holiday(surface, text[:s]))
                                                 or res[3] in ("month", "season")
                                                 and not since and arranged_month(surface, sentence_around(text, s, e))
                                                 or res[3] == "week" and month_week(surface, sentence_around(text, s, e))):
        res = coming_if_far(base, res, lambda: resolve(surface, base, "future"))
    return res


# a weekday, written out or short ("Saturday", "Sat.", "Thurs"); and with a day number without a month ("Saturday the
# 23rd", "Sat 23rd")
WEEKDAY_WORD = r"(mon|tue|tues|wed|wednes|thu|thur|thurs|fri|sat|satur|sun)(?:day)?\.?"
_WEEKDAY_NTH = re.compile(rf"(?i)(?:on\s+)?{WEEKDAY_WORD},?\s+(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)")


def weekday_in_view(surface: str, own: Reading | None, month_named: date | None, base: date) -> Reading | None:
    """"Saturday the 23rd" said after a month or a day the turn or its sitting named with its month ("October's quieter
    ... Saturday 23rd?"): when the weekday's own reading (`own`, the nearest such day) is behind the turn or more than
    a month ahead, the day of that month (of the next, when the day number is behind the named day) if it falls on that
    weekday; else `own`. A coming one within the month stands: "Saturday the 28th" said on 3 February after "March"
    is 28 February (both fall on a Saturday). On dev 556: 29 spans fixed, none broken (with no limit on `own`, 37 and 26)."""
    m = _WEEKDAY_NTH.fullmatch(surface.strip())
    if m is None or month_named is None or (own is not None and 0 <= (own[0] - base).days <= 31):
        return own
    wd, day = weekday_num(m.group(1)), int(m.group(2))
    y, mo = month_named.year, month_named.month
    if day < month_named.day:
        y, mo = (y + 1, 1) if mo == 12 else (y, mo + 1)
    if not valid(y, mo, day) or date(y, mo, day).weekday() != wd:
        return own
    d = date(y, mo, day)
    return d, d, d + timedelta(days=1), "day", label(d, "day")
