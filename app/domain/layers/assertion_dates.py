"""When a claim takes effect, where its own words say so: "I start at Harborview on June 12" holds
from June 12, "we broke up on Friday" from that Friday, "since I joined in July" from July 1, not
from the day it was said. Pure functions over one event's text and time, no I/O.

The date is a time expression (`timeparse.resolve_time_expressions`, resolved against the event's own
time) in the claim's clause: the words between the clause boundaries (sentence end, comma, semicolon,
"and", "but") around the matched words. A job's start named anywhere in the sentence ("I accepted an
offer from Lumen Pay and start in February") dates the job. An end ("until Sunday", "by Friday"), a
plan or a move still to come, and things that are not states (opinions, favourites, names, ages)
take no date: they hold from the day they were said.
"""
from __future__ import annotations

import re
from datetime import date, datetime

from app.domain.layers.timeparse import TimeMention, resolve_time_expressions

_UNDATED = ("plan:", "moving_to", "opinion:", "favourite:", "name", "from", "pet_name:", "has_pet")  # an age is dated: "I turn 45 on the 12th"
_JOB = ("works_at", "job_title", "works_in", "school", "studies")
# a sentence ends at . ! ? before a space, but not after a title or "St." ("St. Brigid's on Monday")
SENTENCE_END = re.compile(r"(?<!\bSt)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMt)(?<!\bMrs)(?<!\bProf)[.!?]+(?:\s|$)")
_CLAUSE_CUT = re.compile(r"[,;:]|\s(?:and|but|so|because|although|though|while)\s", re.I)
_END_WORDS = re.compile(r"\b(?:until|till|til|by|before|through|thru|for)\s*$", re.I)
_START_BEFORE = re.compile(r"\b(?:start|starts|starting|begin|begins|beginning)\b[^.!?,;]{0,30}$", re.I)


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    s0 = 0
    for m in SENTENCE_END.finditer(text, 0, start):
        s0 = m.end()
    m = SENTENCE_END.search(text, end)
    return s0, (m.start() if m else len(text))


def _clause(text: str, start: int, end: int, s0: int, s1: int) -> tuple[int, int]:
    c0 = s0
    for m in _CLAUSE_CUT.finditer(text, s0, start):
        c0 = m.end()
    m = _CLAUSE_CUT.search(text, end, s1)
    return c0, (m.start() if m else s1)


def _is_end(text: str, m: TimeMention) -> bool:
    return bool(_END_WORDS.search(text[max(0, m.start - 12):m.start]) or
                re.match(r"(?i)(?:until|till|by|before|for)\b", m.surface))


def stated_day(text: str, start: int, end: int, at: datetime, attribute: str,
               mentions: list[TimeMention] | None = None) -> date | None:
    """The day the claim matched at text[start:end] takes effect, when its sentence names it; else None
    (the claim holds from the event's own day). `mentions` may pass the text's resolved time
    expressions when the caller already has them."""
    if attribute.startswith(_UNDATED):
        return None
    if mentions is None:
        mentions = resolve_time_expressions(text, at)
    dated = [m for m in mentions if m.resolved and m.range_start and not _is_end(text, m)]
    if not dated:
        return None
    s0, s1 = _sentence(text, start, end)
    if attribute.startswith(_JOB):
        for m in dated:
            if s0 <= m.start < s1 and _START_BEFORE.search(text[s0:m.start]):
                return date.fromisoformat(m.range_start)  # type: ignore[arg-type]
    c0, c1 = _clause(text, start, end, s0, s1)
    inside = [m for m in dated if c0 <= m.start and m.end <= c1]
    if not inside:
        return None
    best = min(inside, key=lambda m: min(abs(m.start - end), abs(start - m.end)))
    return date.fromisoformat(best.range_start)  # type: ignore[arg-type]
