"""The calendar side of `app.domain.layers.timeparse`: the regex pieces its patterns share, the tense
of the clause around an expression (which way a bare weekday, date, month, season or holiday points),
and the forms resolved by the calendar rather than dateparser: parts of a month ("the end of May",
days 21 to the end), months, seasons and holidays named without a year, "Tuesday, June 11",
"Tuesday the 11th", "the 24th" after a named day, "two days from now". Pure functions, no I/O.
"""
from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from typing import Literal

from app.domain.layers.holidays import HOLIDAY_RE, holiday_day, holiday_key
from app.domain.layers.timeforms import NUMBER_RE
from app.domain.timeexpr import (
    MONTH_RE,
    MONTHS,
    NUMBER_WORDS,
    ORD_RE,
    grain_span,
    month_span,
    relative_season,
    season_span,
    shift_month,
    year_span,
)

Granularity = Literal["day", "week", "month", "season", "year"]

_NUM = r"(?:\d+|" + NUMBER_RE + r"|a|an|a few|a couple of|a couple|few|several)"  # "forty years ago"
_UNIT = r"(?:days?|weeks?|fortnights?|months?|years?)"
# abbreviations only when capitalised: "sat" is a verb, "Sat" a day
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|(?-i:Mon|Tues?|Wed|Thur?s?|Fri|Sat|Sun(?=\.?\s+\d))\b\.?)"
_SEASON = r"(?:summer|winter|spring|fall|autumn)"
_MONTH_CAP = MONTH_RE
_ORD = ORD_RE
_PART = r"early|mid|middle\s+of|late|end\s+of|beginning\s+of|start\s+of"
_HOLIDAY = HOLIDAY_RE  # the names `holidays` knows the day of

# words before a month that spend it: "spent August there", "all December"
_SPAN_VERB = r"spent|spend|spending|all|whole|through|throughout|over|across|into"
_FUZZY = {"a few": "3", "few": "3", "several": "3", "a couple of": "2", "a couple": "2"}


def label(d: date, gran: Granularity) -> str:
    if gran == "day":
        return f"{d.day} {calendar.month_name[d.month]} {d.year}"
    if gran == "week":
        return f"week of {d.day} {calendar.month_name[d.month]} {d.year}"
    if gran == "month":
        return f"{calendar.month_name[d.month]} {d.year}"
    return str(d.year)


def weekend_label(saturday: date) -> str:
    return f"weekend of {saturday.day} {calendar.month_name[saturday.month]} {saturday.year}"


# Tense of the sentence around a time expression. Auxiliaries of the future win ("I decided I'll
# move in June"), then past forms ("we moved in June"), then the softer future cues ("planning").
_FUTURE_STRONG = re.compile(
    r"\b(will|shall|going to|gonna|about to|can't wait|cannot wait|looking forward|see you|tomorrow|next|soon|"
    r"upcoming|(?:is|are|'s|'re)\s+(?:planned|scheduled|set|booked|due)\s+(?:for|to|on)|"
    r"(?:am|are|is|'m|'re|'s)\s+(?:finally\s+|also\s+|actually\s+|officially\s+)?(?:going|heading|flying|driving|leaving|"
    r"moving|starting|visiting|coming|getting|having|hosting|taking|traveling|travelling|returning|relocating|joining|"
    r"meeting|doing|retiring|graduating|finishing|opening|launching|switching|quitting))\b|'ll\b|\bwon['’]t\b",
    re.I,
)
_PAST_RE = re.compile(
    r"\b(was|were|been|went|did|had|(?:did|was|were|had)n['’]t|(?<!'ve )(?<!’ve )(?<!have )(?<!has )(?<!'s )(?<!’s )got|came|thanks? (?:you )?for \w+ing|ago|yesterday|last(?!\s+\w+\s+(?:of|in)\s)(?=\s+(?:week|weekend|month|year|night|time|summer|winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|term|season|semester|christmas|easter)\b)|used to|made|took|saw|met|left|began|bought|split up|"
    r"ran|won(?!['’]t)|lost|told|felt|spent|gave|found|thought|drove|flew|said|sent|built|wrote|heard|kept|brought|caught|"
    r"taught|sold|paid|ate|drank|slept|woke|sat|stood|grew|knew|threw|wore|swam|sang|forgot|became|broke|chose|fell|"
    r"spoke|rang|rode|led|lent|fought|shook|stole|struck|tore|hid|blew|dug|hung|laid|dealt|sank|swore|understood|froze|"
    r"wept|swept|slid|sprang|overslept|mistook|withdrew|arose|awoke|clung|crept|drew|flung|forgave|knelt|leapt|learnt|"
    r"spun|stung|strode|sought|"
    r"born|(?!(?:need|feed|seed|speed|indeed|embed|shed|"
    r"hundred|red|bed|wed|proceed|exceed|succeed|breed|bleed|weed|greed|freed|fled)\b)[a-z]{2,}ed)\b",
    re.I,
)
# Verbs whose past is their base form ("a pipe burst", "I quit in June") read as past right after a
# subject (a pronoun or a determined noun), not after "to", a modal or "do" ("I want to quit", "it might burst")
_PAST_SAME = re.compile(
    r"\b(?:i|we|you|he|she|they|it|(?:the|a|an|my|our|his|her|their|your|its)\s+[a-z]+)\s+"
    r"(?:just\s+|finally\s+|actually\s+)?(?:burst|hit|hurt|quit|cut|shut|split|spread)\b",
    re.I,
)
# An arrangement is about what is still to come even when told in the past: "confirmed us for May 17",
# "my flight on October 12 was cancelled"
_ARRANGED = re.compile(r"\b(?:confirm(?:ed|s)?|book(?:ed)?|roster(?:ed|s)?|cancel(?:l?ed|s)?|postpone[ds]?|reschedul(?:ed|es|e)|"
                       r"rent(?:ed)?|reserve[ds]?|"  # not "hire", "books", "rents": "April hires", "sorting books" are nouns
                       r"arrange[ds]?|schedul(?:ed|es|e)|pencill?ed)\b", re.I)
# a capitalised word in -ed inside a sentence (after a lower-case word) is a name ("the Red Lion", "Drowned
# Abbey"), not a verb told in the past
_NAME_ED = re.compile(r"(?<=[a-z,;]\s)(?-i:[A-Z][a-z]+ed)\b")
_DET_PARTICIPLE = re.compile(r"\b(?:the|a|an|my|our|your|his|her|their|this|that|its)\s+(?!need|feed|seed|speed|bed|red)[a-z]{2,}ed\b", re.I)
# a past verb of intention before an infinitive: what was asked or agreed is still to come ("I've asked
# Abernathy to sort it before Easter"); not "managed to" or "used to", which report it done
_INTENT = re.compile(r"\b(?:asked|told|wanted|planned|decided|agreed|promised|offered|hoped|needed|meant|arranged)\b"
                     r"[^.!?]{0,60}?\bto\s+(?!be\b)[a-z]+", re.I)
_PAST_SURE = re.compile(r"\b(?:ago|yesterday|last|earlier|already|before(?!\s+[\w']))\b", re.I)  # "before Easter": ahead
# "I'm excited", "the office is closed": a state, not a past ("'s" is left alone: "she's moved" is a past)
_BE_PARTICIPLE = re.compile(r"(?:\b(?:am|is|are|be|being)|['’](?:m|re))\s+(?:not\s+|now\s+|still\s+|so\s+|really\s+|"
                            r"very\s+|all\s+|fully\s+|already\s+)?[a-z]+ed\b", re.I)
_FUTURE_SOFT = re.compile(
    r"\b(plan|plans|planning|planned to|hope to|hoping to|intend|intending|want to|wants to|would like to|'d like to|"
    r"expect|expecting|scheduled|booked|set for|due|maybe|perhaps|how about|what about|let['’]s)\b",
    re.I,
)


# -ed words that tell no past: a wish ("fingers crossed for the 27th"), an acknowledgment ("I've noted the visit on
# the 8th": what is noted is the visit, still to come) and a passive with "get" ("it gets switched off on the 30th")
_NOT_A_PAST = re.compile(r"\bfingers\s+crossed\b|\bcrossed\s+fingers\b|\bnoted\b|"
                         r"\b(?:get|gets|getting)\s+(?:[a-z]+\s+)?[a-z]{2,}ed\b", re.I)


def sentence_tense(sentence: str) -> str | None:
    """"future", "past" or None (no sign either way) for one sentence."""
    if _FUTURE_STRONG.search(sentence):
        return "future"
    present = _NOT_A_PAST.sub(" ", sentence)
    present = _BE_PARTICIPLE.sub(" ", present)  # "I'm excited", "the office is closed": a state, not a past
    present = _DET_PARTICIPLE.sub(" ", present)  # "the revised draft", "a used car": adjectives, not a past
    present = _NAME_ED.sub(" ", present)  # "doing Drowned Abbey on Sunday": a name, not a past
    if _PAST_RE.search(present) or _PAST_SAME.search(present):
        return "past"
    if _FUTURE_SOFT.search(sentence):
        return "future"
    return None


def pick_year(mo: int, day: int, ref: date, prefer: str) -> int:
    """The year of a month (and day) named without one: "past" the latest not after `ref`, "future"
    the first not before it (the current month counts as both: "end of May" said on 20 May is this May),
    "nearest" whichever is closer."""
    here = (mo, day) if day else (mo, 0)
    now = (ref.month, ref.day) if day else (ref.month, 0)
    past = ref.year if here <= now else ref.year - 1
    future = ref.year if here >= now else ref.year + 1
    if prefer == "past":
        return past
    if prefer == "future":
        return future
    d = day or 15
    dp = abs((date(past, mo, min(d, 28)) - ref).days)
    df = abs((date(future, mo, min(d, 28)) - ref).days)
    return past if dp <= df else future


def weekday_num(token: str) -> int:
    return [d[:3] for d in calendar.day_name].index(token.strip(" .,").lower()[:3].capitalize())


def weekday_near(ref: date, wd: int) -> date:
    """The weekday `wd` nearest to `ref` (`ref` itself when it is one): "Happy Friday!"."""
    ahead = (wd - ref.weekday()) % 7
    return ref + timedelta(days=ahead if ahead <= 3 else ahead - 7)


WEEKDAY_DAY_REACH = 45  # days: how far a tense carries "Thursday the 6th" before the nearer one wins (fitted on dev)


def weekday_the_nth(ref: date, wd: int, day: int, prefer: str) -> date | None:
    """The nearest day-of-month `day` falling on weekday `wd`: forward from `ref` unless `prefer` is past."""
    step = -1 if prefer == "past" else 1
    y, mo = ref.year, ref.month
    for _ in range(14):
        d = date(y, mo, day) if valid(y, mo, day) else None
        if d is not None and d.weekday() == wd and ((d >= ref) if step > 0 else (d <= ref)):
            return d
        y, mo = shift_month(y, mo, step)
    return None


def valid(y: int, mo: int, day: int) -> bool:
    try:
        date(y, mo, day)
    except ValueError:
        return False
    return True


def nth_day(anchor: date, day: int, prefer: str) -> tuple[date, date, date, Granularity, str] | None:
    """Day `day` of `anchor`'s month, or of the next (previous, in the past) month when that is behind
    (ahead of) `anchor`."""
    y, mo = anchor.year, anchor.month
    for _ in range(3):
        d = date(y, mo, day) if valid(y, mo, day) else None
        if d is not None and ((d >= anchor) if prefer != "past" else (d <= anchor)):
            return d, d, d + timedelta(days=1), "day", label(d, "day")
        y, mo = shift_month(y, mo, -1 if prefer == "past" else 1)
    return None


def part_of_month(part: str, y: int, mo: int) -> tuple[date, date]:
    """early = days 1-10, mid = 11-20, late / end = 21 to the month's end (as the question side reads them)."""
    s, e = month_span(y, mo)
    part = re.sub(r"\s+", " ", part.lower())
    if part in ("early", "beginning of", "start of"):
        return s, date(y, mo, 11)
    if part.startswith("mid"):
        return date(y, mo, 11), date(y, mo, 21)
    return date(y, mo, 21), e


def calendar_span(expr: str, base_day: date, prefer: str) -> tuple[date, date, date, Granularity, str] | None:
    """Forms resolved by the shared calendar rather than dateparser: parts of a month, months and
    seasons named without a year (their year follows the tense), holidays."""
    text = re.sub(r"\s+", " ", expr.strip())
    m = re.fullmatch(rf"(?:(?:at|by|until|in|from) )?(?:the )?({_PART})[ -]*({_MONTH_CAP})(?:,? ((?:19|20)\d\d))?", text, re.I)
    if m and re.fullmatch(_MONTH_CAP, m.group(2)):
        mo = MONTHS[m.group(2).lower().rstrip(".")]
        y = int(m.group(3)) if m.group(3) else pick_year(mo, 0, base_day, prefer)
        s, e = part_of_month(m.group(1), y, mo)
        word = re.sub(r"\s+", " ", m.group(1).lower())
        word = {"beginning of": "early", "start of": "early", "middle of": "mid", "end of": "late"}.get(word, word)
        return s + (e - s) // 2, s, e, "month", f"{word} {calendar.month_name[mo]} {y}"
    m = re.fullmatch(rf"(?:on )?({_WD}),? (?:(?:the )?({_ORD}) (?:of )?({_MONTH_CAP})|({_MONTH_CAP}) ({_ORD})|(?:the )?({_ORD}))(?:,? ((?:19|20)\d\d))?", text, re.I)
    if m:
        wd = weekday_num(m.group(1))
        day = int(re.sub(r"\D", "", m.group(2) or m.group(5) or m.group(6)))
        mon = m.group(3) or m.group(4)
        if mon:
            mo = MONTHS[mon.lower().rstrip(".")]
            y = int(m.group(7)) if m.group(7) else pick_year(mo, day, base_day, prefer)
            if not m.group(7):  # the weekday tells the year: "Tuesday, June 11" is 2024, not 2023
                fits = [yy for yy in (y, base_day.year - 1, base_day.year, base_day.year + 1)
                        if valid(yy, mo, day) and date(yy, mo, day).weekday() == wd]
                y = fits[0] if fits else y
            try:
                d = date(y, mo, day)
            except ValueError:
                return None
        else:  # "Tuesday the 11th": the 11th that is a Tuesday; the tense's side if one falls within
            # `WEEKDAY_DAY_REACH` days ("sent a brief for Thursday the 6th" told on 20 January is 6 February,
            # not last June), else the nearer
            sides = {"past": weekday_the_nth(base_day, wd, day, "past"), "future": weekday_the_nth(base_day, wd, day, "future")}
            told = sides.get(prefer)
            if told is not None and abs((told - base_day).days) <= WEEKDAY_DAY_REACH:
                d = told
            else:
                found = [x for x in sides.values() if x is not None]
                if not found:
                    return None
                d = min(found, key=lambda x: abs((x - base_day).days))
        return d, d, d + timedelta(days=1), "day", label(d, "day")
    m = re.fullmatch(rf"(?:(?i:your|the|my|our|their|his|her|this|that|{_SPAN_VERB}) )?({_MONTH_CAP})", text)
    if m:
        mo = MONTHS[m.group(1).lower().rstrip(".")]
        y = pick_year(mo, 0, base_day, prefer)
        s, e = month_span(y, mo)
        return s, s, e, "month", f"{calendar.month_name[mo]} {y}"
    m = re.fullmatch(rf"((?i:in|during|since|by|until|till|of|last|next|this|for|to|from|before|after|around)) ({_MONTH_CAP})"
                     r"(?:,? ((?:19|20)\d\d))?", text)
    if m:
        which, mo = m.group(1).lower(), MONTHS[m.group(2).lower().rstrip(".")]
        if m.group(3):  # "to September 2026" ("to September next year", its year filled in)
            y = int(m.group(3))
        elif which == "last":
            y = base_day.year if mo < base_day.month else base_day.year - 1
        elif which == "next":
            y = base_day.year if mo > base_day.month else base_day.year + 1
        elif which == "this":
            y = base_day.year
        elif which == "since":
            y = pick_year(mo, 0, base_day, "past")
        else:
            y = pick_year(mo, 0, base_day, prefer)
        s, e = month_span(y, mo)
        return s, s, e, "month", f"{calendar.month_name[mo]} {y}"
    m = (re.fullmatch(r"(?:(?:at|by|until|before|from) )?(?:the )?(end|beginning|start|middle) of (the|this|next|last) month", text, re.I)
         or re.fullmatch(r"(early|mid|late)[ -]*(this|next|last) month", text, re.I))
    if m:
        y, mo = shift_month(base_day.year, base_day.month, {"next": 1, "last": -1}.get(m.group(2).lower(), 0))
        part = {"end": "end of", "beginning": "early", "start": "early", "middle": "mid", "early": "early",
                "mid": "mid", "late": "end of"}[m.group(1).lower()]
        s, e = part_of_month(part, y, mo)
        word = {"end of": "late"}.get(part, part)
        return s + (e - s) // 2, s, e, "month", f"{word} {calendar.month_name[mo]} {y}"
    m = re.fullmatch(rf"(?:(?:in|during|over|by|for|until|till|since) )?(?:the )?({_SEASON})", text, re.I)
    if m:
        name = m.group(1).lower()
        if prefer == "future":  # the season under way, else the next one
            s, e = relative_season(base_day, "in", name)
            if e <= base_day:
                s, e = relative_season(base_day, "coming", name)
        elif prefer == "past":
            s, e = relative_season(base_day, "in", name)
        else:  # the nearest: the one under way, else the nearer of the last and the next
            s, e = relative_season(base_day, "in", name)
            if e <= base_day:
                ns, ne = relative_season(base_day, "coming", name)
                if (ns - base_day).days < (base_day - e).days:
                    s, e = ns, ne
        return s, s, e, "season", f"{name} {s.year}"
    m = re.fullmatch(rf"(?:the )?({_SEASON}) (?:of )?((?:19|20)\d\d)", text, re.I)
    if m:
        s, e = season_span(int(m.group(2)), m.group(1))
        return s, s, e, "season", f"{m.group(1).lower()} {s.year}"
    m = re.fullmatch(rf"(?:on )?({_HOLIDAY}|new year)(?: ((?:19|20)\d\d)| (last|next|this) year)?", text, re.I)
    if m:
        key = holiday_key(m.group(1))
        if key is None:
            return None

        def day_of(y: int) -> date:
            return holiday_day(key, y)

        if m.group(2) or m.group(3):  # "Christmas 2023", "Easter last year"
            d = day_of(int(m.group(2)) if m.group(2) else base_day.year + {"last": -1, "next": 1}.get(m.group(3).lower(), 0))
        else:
            past = day_of(base_day.year) if day_of(base_day.year) <= base_day else day_of(base_day.year - 1)
            future = day_of(base_day.year) if day_of(base_day.year) >= base_day else day_of(base_day.year + 1)
            d = future if prefer == "future" or (prefer == "nearest" and (future - base_day) < (base_day - past)) else past
        return d, d, d + timedelta(days=1), "day", label(d, "day")
    m = re.fullmatch(rf"({_NUM}) ({_UNIT}) from (?:now|today)", text, re.I)
    if m:
        n = int(_FUZZY.get(m.group(1).lower(), "0")) or NUMBER_WORDS.get(m.group(1).lower()) or int(m.group(1))
        unit = m.group(2).lower().rstrip("s")
        if unit == "day":
            d = base_day + timedelta(days=n)
            return d, d, d + timedelta(days=1), "day", label(d, "day")
        if unit == "week":
            s, e = grain_span(base_day + timedelta(weeks=n), "week")
            return s, s, e, "week", label(s, "week")
        if unit == "month":
            mo, y = base_day.month + n, base_day.year
            y, mo = y + (mo - 1) // 12, (mo - 1) % 12 + 1
            s, e = month_span(y, mo)
            return s, s, e, "month", label(s, "month")
        s, e = year_span(base_day.year + n)
        return s, s, e, "year", str(s.year)
    return None


# "Fly.io" and "3.10" do not end a sentence; in a chat, an emoji between words does ("going under 😩 they told us")
_SENT_END = re.compile(r"[.!?]+(?=\s|$)|\n|(?<=\s)[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]+(?=\s|$)")
_CLAUSE_END = re.compile(r"[;:,]|\s(?:and|but|so|while|because)\s")


def sentence_around(text: str, start: int, end: int) -> str:
    left = max((m.end() for m in _SENT_END.finditer(text, 0, start)), default=0)
    right = _SENT_END.search(text, end)
    return text[left : right.start() if right else len(text)]


_FUTURE_BEFORE = re.compile(
    r"(?:\b(?:push|pushed|pushing|postpone[ds]?|postponing|moved?|reschedul\w*|delay\w*|put\s+off|bump\w*|"
    r"(?:bring|brings|bringing|brought|pull|pulls|pulled|pulling)(?:\s+[\w']+){0,2}?\s+forward)\b"
    r"(?:\s+[\w']+){0,3}?\s+(?:to|until|till)|\b(?:book\w*|schedul\w*|reserv\w*|due|flights?|appointments?|tickets?)\b"
    r"[^.!?,;]{0,30}?\s+for)\s*$", re.I)


# what is thanked for or exclaimed over has happened: "Huge thanks for Saturday", "What a day on Sunday!" (also
# after a letter's greeting line: "Dear all,\n\nWhat a show on Saturday!")
_LOOKING_BACK = re.compile(r"(?i)(?:\bthank(?:s|\s+you)\b[^.!?]{0,20}\bfor|(?:^|[.!?]\s+|\n\s*)what\s+an?\s+[\w']+(?:\s+[\w']+)?(?:\s+on)?"
                           r"|\b(?:recover(?:ing|ed)?|hungover|hanging|buzzing|aching|sore|shattered|knackered)\s+(?:\w+\s+)?from)\s+$")


def tense_around(text: str, start: int, end: int) -> str | None:
    """The tense of the clause holding the expression ("I accepted the offer and start in February":
    "start"), else of its sentence; "since the update on Saturday" is past."""
    lead = re.match(r"(?i)(?:to|until|till|for)\b", text[start:end])
    if _FUTURE_BEFORE.search(text[max(0, start - 60):start + (lead.end() if lead else 0)]):
        return "future"  # "pushed to January", "booked my flight for December 14": what is still to come
    if _LOOKING_BACK.search(text[max(0, start - 40):start + (3 if text[start:start + 3].lower() == "on " else 0)]):
        return "past"
    sent = sentence_around(text, start, end)
    off = text.find(sent) if sent else 0
    s0, e0 = start - off, end - off
    sent = _BE_PARTICIPLE.sub(lambda m: " " * len(m.group(0)), sent)  # "I'm so excited": no past, no clause break
    left = max((m.end() for m in _CLAUSE_END.finditer(sent, 0, max(0, s0))), default=0)
    right = _CLAUSE_END.search(sent, max(0, e0))
    clause = sent[left : right.start() if right else len(sent)]
    if re.search(r"\bsince\s+(?:the\s+|my\s+|our\s+|last\s+)?(?:\w+\s+)?$", sent[max(0, s0 - 30):max(0, s0)], re.I):
        return "past"
    before, after = clause[:max(0, s0 - left)], clause[max(0, e0 - left):]
    if not re.search(r"[A-Za-z]{2,}", before + after):  # "On Saturday, we went hiking": the sentence decides
        clause, before, after = sent, sent[:max(0, s0)], sent[max(0, e0):]
    tense = sentence_tense(clause)
    # what an arrangement is for is ahead even when told in the past: "confirmed us for May 17", "my flight
    # on the 12th was cancelled"; not the day of the act itself ("I booked the tickets on Monday")
    for_it = re.search(r"(?i)\bfor\s*$", before) or re.match(r"(?i)for\b", text[start:end])
    sure = _PAST_SURE.search(before + text[start:end] + after)
    if tense == "past" and not sure and (
            _ARRANGED.search(after) or (for_it and _ARRANGED.search(before)) or _INTENT.search(before)):
        return "future"
    if tense == "past" and not sure and _ARRANGED.search(before):
        return "nearest"  # "I've booked a stall on the 23rd of August", "Cancelled it on 30 January": the act or the day
    if tense is None and re.search(r"(?i)\bas\s+of\s+$", text[max(0, start - 8):start]):
        return sentence_tense(sent) or "nearest"  # "As of Friday, the shop is a company": a state from a day either side
    return tense
