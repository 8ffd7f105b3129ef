"""Forms of everyday and office talk for `app.domain.layers.timeparse`: month names in lower case as chat
writes them ("in july", "by september": `cap_months`; "august works."), quarters ("in Q3", "Q4 2024", "the
third quarter of next year", "next quarter": the calendar quarter's days), a season named as a choice or with
its year ("Spring it is.", "summer works for me", "Spring next year"), "New Year" after a preposition ("since
New Year"), the days around a named holiday ("the day after Boxing Day", "the Saturday after Easter"), a
holiday with its year in words ("Christmas next year"), "the Easter weekend", "Wednesday last week" and "the last
two weeks of July" (read by `timeforms.shifted_span`, as "this time next week" is), and a day number without "the"
where chat drops it ("13th is good"), a year said alone ("graduated 2017") and April, June or August said alone as
a choice ("no promises on June"), after every other form (`LATE_PATTERNS`). Each form asks for a time context, so
that "this may take a while", "Audi Q3", "quarter past three", "a dunk in the fourth quarter", "a spring in his step",
"room 2011", "Thanks, June." or "Happy new year!" name no date. Pure functions, no I/O.
"""
from __future__ import annotations

import re
from datetime import date

from app.domain.layers.timecal import _HOLIDAY, _MONTH_CAP, calendar_span, sentence_around, sentence_tense, tense_around, weekend_label
from app.domain.layers.timediscourse import before_span
from app.domain.layers.timeforms import AFTER_DAY_RE, WEEKDAY_OF_WEEK_RE, WEEKS_OF_MONTH_RE, following_span, weekend_of
from app.domain.timeexpr import shift_month

_WD_NAMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"


def _after(*words: str) -> str:
    """A lookbehind for any of `words` and a space (each its own, as lookbehinds need a fixed width)."""
    return "(?:" + "|".join(rf"(?<=\b{w}\s)" for w in words) + ")"


# where a word stands for a choice of time: at the start of a sentence or clause, or after "or", "maybe",
# "how about" ... (not "about" alone: "I told him about june")
_CHOICE_START = (r"(?:^|(?<=[.!?,;:(]\s)|(?<=\n)|"
                 + _after("or", "maybe", "probably", "perhaps", "how about", "what about") + ")")
# ... and is followed by what settles it: "August works.", "Spring it is.", "June then?", "Q4 at the latest"
_END = r"(?=\s*(?:[.!?,;:)]|$))"
_CHOICE = (rf"(?=\s+(?:then|instead|onwards|it\s+is{_END}|at\s+the\s+(?:latest|earliest)|"
           rf"(?:works?|suits?)(?:{_END}|\s+(?:for|better|best|too|fine)\b))\b)")

# a month in lower case alone: april, june and august only as a choice (as names they are capitalised, but
# a chat writes names in lower case too); the other months, once capitalised by `cap_months`, stand alone anyway
LOWER_ALONE_RE = rf"{_CHOICE_START}(?:april|june|august)(?![\w-])(?:{_END}|{_CHOICE})"

# a capitalised month that is also a name or a verb (April, June, August, March, May) as a choice: with what settles
# it ("June works for me", "May then?"), a verdict on it that a person would hardly get ("June is even better", "March
# is fine for us", "August is murder at work") or a hedge before it ("Probably May, when ..."); and the first of two
# months offered ("March or April would suit")
_AMBIGUOUS = r"(?:April|June|August|March|May)"
_VERDICT = (r"(?=\s+(?:is|['’]s|would\s+be|could\s+be|sounds)\s+(?:(?:even|also|much|way|really)\s+)?"
            r"(?:(?:fine|good|better|best|perfect|great|ideal|ok|okay)\s+(?:for|with)\b|even\s+better|hectic|murder|packed|"
            r"tricky|no\s+good))")
_HEDGE = "(?:" + "|".join(rf"(?<=\b(?i:{w})\s)" for w in ("maybe", "probably", "perhaps", "how about", "what about")) + ")"
CAP_CHOICE_RE = rf"(?:{_CHOICE_START}{_AMBIGUOUS}(?![\w-])(?:{_CHOICE}|{_VERDICT})|{_HEDGE}{_AMBIGUOUS}(?![\w-]){_END})"
FIRST_OF_TWO_RE = rf"\b(?:(?i:in|during|for|from|by|until|till|since)\s+)?{_AMBIGUOUS}(?=\s+or\s+(?:(?:early|mid|late)[\s-]+)?{_MONTH_CAP}\b)"

# a season with its year in words; "fall" only as "the fall" ("prices fall next year" is a verb)
SEASON_YEAR_RE = r"\b(?:(?:the\s+)?(?:summer|winter|spring|autumn)|the\s+fall)\s+(?:of\s+)?(?:next|last|this)\s+year\b"
# a season as a choice ("Summer works for me", "Spring it is."), not "a spring in his step" or "hot spring"
SEASON_CHOICE_RE = rf"{_CHOICE_START}(?:summer|winter|spring|autumn)(?![\w-]){_CHOICE}"

# what a season before a noun dates ("the summer trip", "the spring concert", "a summer internship"), never a thing
# ("summer house", "winter coat", "spring onion")
SEASON_EVENTS = (r"trip|vacation|holidays?|break|plans?|getaway|season|concerts?|weddings?|tour|fairs?|fête|camps?|"
                 r"modules?|course|league|festivals?|shows?|sales?|rota|schedule|timetable|round|intake|exams?|"
                 r"internships?|launch|release|programme|program|party|bookings?|lists?|half|series|school|residency|retreats?|"
                 r"cruise|exhibition|recital|sessions?|placement|job|contract|events?|ball|gala|fixtures|races?|regatta|"
                 r"barbecue|bbq|menu|collection|catalogue|open\s+day|cup|match|meeting|deadline|opening|intern")

# "New Year" alone is the holiday after a preposition, and not before a noun ("New Year resolutions")
_FUNCTION = r"(?:and|or|but|so|then|when|if|with|to|at|in|on|for|is|was|we|I|you|he|she|they|it)\b"
NEW_YEAR_RE = (_after("at", "since", "by", "until", "till", "after", "before", "over", "for", "from", "around", "through")
               + rf"New\s+Year\b(?!['’])(?!\s+(?!{_FUNCTION})[a-z])")

# the days around a named holiday: "the day after Boxing Day", "the Saturday after Easter", "the week before Christmas"
AROUND_HOLIDAY_RE = (rf"\b(?:on\s+)?the\s+(?:{_WD_NAMES}|day|night|weekend|week)\s+(?:before|after)\s+"
                     rf"(?:(?:{_HOLIDAY})\b|(?-i:New\s+Year)\b(?!['’]))")

# a holiday with its year in words: "Christmas this year", "Easter last year" (read by `timecal.calendar_span`)
HOLIDAY_YEAR_RE = rf"\b(?:on\s+)?(?:{_HOLIDAY})\s+(?:last|next|this)\s+year\b"
# "the Easter weekend": the Saturday and Sunday of Easter, as any weekend is
EASTER_WEEKEND_RE = r"\b(?:(?:over|at|on|during|for|by|until|till|after|before)\s+)?(?:the\s+)?Easter\s+weekend\b"

_QUARTER_YEAR = r"(?:\s+of\s+(?:the|this|next|last)\s+year\b|,?\s+(?:of\s+)?(?:(?:19|20)\d\d|(?:next|last|this)\s+year)\b)"
_NTH_QUARTER = r"\bthe\s+(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b"
# "Q3" is a quarter with its year, after a preposition ("in Q3", "by end of Q2"), or as a choice ("Q4 at the
# latest", "Q3?"), not in "Audi Q3" nor as a numbered question ("Q1: how do I ..."); "the third quarter" with
# its year; "last quarter" not "the last quarter"
QUARTER_RE = (rf"(?-i:\bQ[1-4]){_QUARTER_YEAR}|"
              + _after("in", "by", "until", "till", "before", "after", "during", "from", "since", "for", "through",
                       "of", "over", "into", "early", "late", "mid", "this", "next", "last") + r"(?-i:Q[1-4])(?![\w-])|"
              + rf"{_CHOICE_START}(?-i:Q[1-4])(?![\w-])(?:(?=\s*(?:[?!]|$))|(?=['’]s\b)|{_CHOICE})|"
              + rf"{_NTH_QUARTER}{_QUARTER_YEAR}|"
              + r"(?<!\bthe\s)\b(?:last|this|next)\s+quarter\b(?!\s+(?:of|past|to)\b)")
# "the third quarter" without its year: in a report of the past it was as often a game's ("a dunk in the fourth
# quarter"), so `timeparse` keeps it only where neither its clause nor its sentence is past (kind "unless past",
# `told_as_past`); never "of the match"
NTH_QUARTER_RE = rf"{_NTH_QUARTER}(?!\s+of\b)"
_QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


def quarter_span(expr: str, ref: date, prefer: str) -> tuple[date, date, date, str, str] | None:
    """A calendar quarter (Q3 = 1 July .. 1 October): without its year, as a month without one is read,
    the coming one in a plan, the latest in a report (the current quarter counts as both), else the nearer."""
    low = re.sub(r"\s+", " ", expr.strip().lower())
    now = (ref.month - 1) // 3 + 1
    m = re.fullmatch(r"(last|this|next) quarter", low)
    if m:
        y, mo = shift_month(ref.year, 3 * now - 2, 3 * {"last": -1, "next": 1}.get(m.group(1), 0))
        q = (mo - 1) // 3 + 1
    else:
        m = re.fullmatch(r"(?:q([1-4])|the (\w+) quarter)(?: of the year|,? (?:of )?((?:19|20)\d\d))?", low)
        if not m or not (m.group(1) or m.group(2) in _QUARTERS):
            return None
        q = int(m.group(1)) if m.group(1) else _QUARTERS[m.group(2)]
        past, future = ref.year - (q > now), ref.year + (q < now)
        near = past if (ref - date(past, 3 * q - 1, 15)).days <= (date(future, 3 * q - 1, 15) - ref).days else future
        y = int(m.group(3)) if m.group(3) else {"past": past, "future": future}.get(prefer, near)
    s = date(y, 3 * q - 2, 1)
    e = date(y + 1, 1, 1) if q == 4 else date(y, 3 * q + 1, 1)
    return s + (e - s) // 2, s, e, "month", f"Q{q} {y}"


def around_holiday(expr: str, ref: date, prefer: str) -> tuple[date, date, date, str] | None:
    """"the day after Boxing Day": the holiday's year read as the holiday alone is, then the day counted from it."""
    m = re.fullmatch(r"(?:on\s+)?the\s+(\w+)\s+(before|after)\s+(.+)", expr.strip(), re.I)
    hol = calendar_span(m.group(3), ref, prefer) if m else None
    if m is None or hol is None:
        return None
    what, way = m.group(1).lower(), m.group(2).lower()
    shift = following_span if way == "after" and re.fullmatch(_WD_NAMES, what) else before_span
    got = shift(f"the {what} {way}", hol[0])
    return None if got is None else (got[0], got[0], got[1], got[2])


def easter_weekend(expr: str, ref: date, prefer: str) -> tuple[date, date, date, str, str] | None:
    """The Saturday and Sunday of the Easter read as "Easter" alone is (the year by the tense)."""
    if not re.search(r"(?i)\beaster\s+weekend$", expr.strip()):
        return None
    day = calendar_span("Easter", ref, prefer)
    if day is None:
        return None
    sat, end = weekend_of(day[0])
    return sat, sat, end, "week", weekend_label(sat)


def told_as_past(text: str, start: int, end: int) -> bool:
    """Is the clause or the sentence around text[start:end] a report of the past?"""
    return tense_around(text, start, end) == "past" or sentence_tense(sentence_around(text, start, end)) == "past"


def word_span(expr: str, ref: date, prefer: str) -> tuple | None:
    """The span of a quarter, of a day around a holiday or of the Easter weekend (None for any other form)."""
    return quarter_span(expr, ref, prefer) or around_holiday(expr, ref, prefer) or easter_weekend(expr, ref, prefer)


# Month names in lower case, as chat writes them ("in july", "by september", "mid-october"): capitalised
# (`cap_months`) so that the month patterns read them as they read "July". "may" and "march" are also a
# modal and a verb: only after a preposition or early/mid/late ("in may", "end of march"), after next/last
# ("last may", not "the last may be"), before a day number or a year ("may 5th", "march 2024"), or as "this
# may." ending a sentence; "an august body" is no month.
_LOWER_MONTH = re.compile(r"(?<![\w'’.])(january|february|april|june|july|august|september|october|november|"
                          r"december|may|march|jan|feb|apr|jun|jul|aug|sept|sep|oct|nov|dec)(?![\w-])")
# a month's short name in lower case ("in feb", "by sept", "end of oct") only where a month must stand, as "may";
# "jan" not after "from", "of", "to" or "with" (a name: "a text from jan")
_SHORT = frozenset({"jan", "feb", "apr", "jun", "jul", "aug", "sept", "sep", "oct", "nov", "dec"})
_MAY_BEFORE = re.compile(r"(?:\b(?:in|by|since|from|till|until|during|before|after|through|around|of|early|late)\s+|"
                         r"\bmid[\s-]+|(?<!\bthe\s)(?<!\ba\s)\b(?:next|last)\s+)$")
_MAY_AFTER = re.compile(r"\s+(?:the\s+)?(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b(?!\s*(?:[:.,]\d|%|am\b|pm\b|k\b|km|"
                        r"miles?|mins?|minutes?|hours?|hrs?|times|people|metres|meters|steps))|,?\s+(?:19|20)\d\d\b")


def cap_months(text: str) -> str:
    """"we're doing it in july" -> "... in July" (the same length, so offsets hold); see `_LOWER_MONTH`."""
    if not _LOWER_MONTH.search(text):
        return text

    def sub(m: re.Match[str]) -> str:
        w, before, after = m.group(1), text[max(0, m.start() - 16):m.start()], text[m.end():m.end() + 24]
        if w == "jan" and re.search(r"\b(?:from|of|to|with)\s+$", before):
            return w
        if w in ("may", "march") or w in _SHORT:
            placed = _MAY_BEFORE.search(before) or _MAY_AFTER.match(after) or (
                re.search(r"\bthis\s+$", before) and re.match(r"\s*(?:[.!?]|$)", after))
            if not placed or re.match(r"\s+(?:be|have|not|well|also|still|just|never|even|only)\b", after):
                return w
        elif w == "august" and re.search(r"\b(?:an|most|more)\s+$", before):
            return w
        return w.capitalize()
    return _LOWER_MONTH.sub(sub, text)


# a day number without "the" where chat drops it, before a verb said of dates, a function word or the clause's end
# ("13th is good", "first session 7th", "8th's no good"); not after a determiner ("my 13th birthday", "a 3rd go") nor
# before a noun ("5th floor"), nor a place in a race or a list ("came 3rd", "I'm 5th in the queue", "2nd, 3rd and 4th"):
# read after every other form (`LATE_PATTERNS`), and resolved as "the 13th" is
BARE_DAY_RE = (r"(?=\d)(?<![\w/£$€#.,:-])(?<!\bthe\s)(?<!\bmy\s)(?<!\bher\s)(?<!\bhis\s)(?<!\bour\s)(?<!\byour\s)(?<!\btheir\s)"
               r"(?<!\bits\s)(?<!\ba\s)(?<!\bany\s)(?<!\beach\s)(?<!\bevery\s)(?<!\bcame\s)(?<!\bfinished\s)(?<!\bplaced\s)"
               r"(?<!\branked\s)(?<!['’]m\s)(?<!\bam\s)(?<!\bis\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bare\s)(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b"
               rf"(?=\s*(?:[,.!?;:)]|$)|['’]s\b|\s+(?:{AFTER_DAY_RE})\b)(?!\s*(?:,|and|or)\s*\d)"
               r"(?!(?:\s*(?:-|–|to|/)\s*\d{1,2}(?:st|nd|rd|th))?\s+(?:grade|century|floor|place|year|birthday|time|edition|round)s?\b)")

# (pattern, kind, flags, needle) for `timeparse`'s list, ahead of the forms they would otherwise lose to ("next
# year"); a text without the needle (case aside) cannot match the pattern, and most texts have none
_SEASONS = r"summer|winter|spring|autumn"
WORD_PATTERNS = [(AROUND_HOLIDAY_RE, "relative", re.I, r"\b(?:before|after)\b"),
                 (QUARTER_RE, "relative", re.I, r"q[1-4]|quarter"), (NTH_QUARTER_RE, "unless past", re.I, "quarter"),
                 (SEASON_YEAR_RE, "relative", re.I, rf"(?:{_SEASONS}|fall)\s+(?:of\s+)?(?:next|last|this)\s+year"),
                 (SEASON_CHOICE_RE, "relative", re.I, _SEASONS), (NEW_YEAR_RE, "relative", 0, r"new\s+year"),
                 (LOWER_ALONE_RE, "relative", 0, "april|june|august"),
                 (CAP_CHOICE_RE, "relative", 0, "april|june|august|march|may"),
                 (FIRST_OF_TWO_RE, "relative", 0, r"(?:april|june|august|march|may)\s+or\s"),
                 (EASTER_WEEKEND_RE, "relative", re.I, r"easter\s+weekend"),
                 (HOLIDAY_YEAR_RE, "relative", re.I, r"(?:last|next|this)\s+year"),
                 (WEEKDAY_OF_WEEK_RE, "relative", re.I, r"day\s+(?:last|next|this)\s+week"),
                 (WEEKS_OF_MONTH_RE, "relative", re.I, r"(?:first|last|final)\s+(?:two|three|2|3)\s+weeks\s+(?:of|in)\b")]
# a year said alone ("graduated 2017", "booking up for 2026", "my 2024 return"), after every other form: not a
# figure (a price, a code, a count of words or steps, room 2011), not after a name ("Reserva 2019": a vintage, a
# model), nor one end of a stretch of years ("2018-2023", "from 1990 to 2020": no one year)
_NOT_BEFORE_YEAR = "".join(rf"(?<!\b{w}\s)" for w in (
    "room", "Room", "flat", "Flat", "unit", "suite", "gate", "bus", "route", "flight", "page", "line", "port", "ticket",
    "issue", "order", "ref", "number", "code", "error", "version", "model", "item", "no.", "No.", "PR", "plot", "Plot",
    "code is", "PIN is", "pin is")) + "".join(rf"(?<!\b[A-Z][a-z]{{{k}}}\s)" for k in range(1, 13))
BARE_YEAR_RE = (rf"(?<![\w£$€¥#.,:/'’+-]){_NOT_BEFORE_YEAR}(?<!\d\s[-–]\s)(?<!\d\sto\s)(?<!\d\sand\s)(?<!\d\sor\s)"
                r"(?:19\d\d|20\d\d)(?![\w%°]|[.,:]\d|\s*(?:[-–/&]|to\b|until\b|till\b|and\b|or\b)\s*(?:19|20)?\d\d)"
                r"(?!\s*(?:words?|steps?|miles?|km|k|metres?|meters?|feet|ft|calories|kcal|people|users|customers|rows|"
                r"records|lines|pounds|quid|dollars|euros|points|views|followers|members|hours|hrs|minutes|mins|seconds|"
                r"units|pieces|items|copies|tickets|entries|votes|vintage|[kmg]?[bg]|mg|ml|kg|cc|rpm|x)\b)")
# April, June and August said alone, as a choice or an object ("no promises on June", "can't do August", "so what,
# June?"), after every other form: not one a person goes by (before a surname, after a title, a kin word, "with",
# "told", ..., called by it: "Thanks, June."), nor the subject of a verb ("June said", "June is fine, thanks for
# asking", "August was hot", "June's mum"), where a person and a month read alike
MONTHS_AS_NAMES = ("April", "June", "August")
_PERSON_BEFORE = "".join(rf"(?<!\b{w}\s)" for w in (
    "aunt", "Aunt", "auntie", "Auntie", "uncle", "gran", "Gran", "nan", "Nan", "Mrs", "Mr", "Ms", "Miss", "Dr", "cousin",
    "sister", "brother", "friend", "dear", "Dear", "Hi", "hi", "Hey", "hey", "Hello", "Thanks", "thanks", "with", "told",
    "asked", "tell", "ask", "call", "called", "met", "meet", "and", "love", "Love"))
MONTH_ALONE_RE = (rf"(?<![\w'’-]){_PERSON_BEFORE}(?:{'|'.join(MONTHS_AS_NAMES)})(?![\w-])(?!['’](?!s\s+[a-z]))(?!\s+(?-i:[A-Z]))"
                  r"(?!['’]s\s+(?:mum|dad|mother|father|husband|wife|partner|sister|brother|kids|son|daughter|friend|boyfriend|"
                  r"girlfriend|place|house|home|birthday|family|car|dog|cat|fine|good|ok|okay|well|great|here|there|not|been|"
                  r"got|gone|a|an|the|my|our|his|her|your|their|just|still|also|really|so|very|too|always|never|back|out|"
                  r"away|off|on|in|at|with|about|\w+ing|\w+ed)\b)"
                  + "".join(rf"(?!(?<=,\s{m})\s*[.!])" for m in MONTHS_AS_NAMES)  # "Thanks, June."
                  + r"(?!,?\s+(?:is|was|has|had|can|could|will|would|should|might|must|may|did|does|do|said|says|asked|told|"
                  r"thinks|wants|and\s+I|and\s+me|\w+s\b)\b)")
LATE_PATTERNS = [(BARE_DAY_RE, "relative", 0, r"\d(?:st|nd|rd|th)\b"), (BARE_YEAR_RE, "absolute", 0, r"(?:19|20)\d\d"),
                 (MONTH_ALONE_RE, "relative", 0, "april|june|august")]
