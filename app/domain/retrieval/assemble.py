"""Context assembly inside a token budget (Cortex §5, PRISM N3), by priority:

1. direct evidence — the best-ranked candidates (the top_k items first);
2. episode summaries for direct evidence that did not fit (a short account of the episode stands in
   for the turn the budget could not hold);
3. the rest of the ranked candidates, while they fit;
4. neighbours — the turns right around the strongest evidence (the question a reply answers,
   the reply to a question), which carry what the evidence leaves implicit, in the room the ranking
   left (it holds more evidence where it is deep; where it is thin, they are what is left to add);
5. a closing notice of what was left out, so the answer model knows the context is partial.

A piece that does not fit is skipped, not truncated, so shorter evidence behind it still gets
in. The chosen lines are then ordered by time, each with its speaker, so the answer model reads the
conversation as it happened. With `compact_stamps` a stamp is written where the time changes: a
day's first line carries the full date and time, a line in a new minute of that day its time alone,
and a line said in the same minute as the line above it none ("[2023-05-21 13:45] ..." then
"[13:50] ...", then no stamp): the same facts, not repeated on every line, leaving room for more
turns (a short chat turn is ~48 tokens, its full stamp 11 of them). A day's episode summaries open
its group.

Each line shows what the layers resolved: a relative date gets its absolute date beside the words
("last Saturday [15 April 2023]"), and a turn whose claim a later turn replaced says so
("[superseded by a later statement of 2023-06-12]"). When a superseded turn is in the context, the
turn that superseded it is brought in right after the direct evidence (when it is known and fits),
so a question about the current value sees the current value next to the old one.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from app.domain.event import turn_text
from app.domain.layers.timediscourse import NO_DISCOURSE, Discourse
from app.domain.layers.timeparse import TimeMention
from app.domain.layers.timeturns import resolved_mentions


@dataclass(frozen=True)
class ContextItem:
    id: int
    speaker: str
    content: str
    occurred_at: datetime
    superseded_by: int | None = None  # the later event whose claim replaced this one's
    superseded_at: datetime | None = None  # that event's time, when known
    discourse: Discourse = NO_DISCOURSE  # what earlier turns settled about dates ("the 16th" of which month)
    mentions: tuple[TimeMention, ...] | None = None  # its dates as the layers read them (then `discourse` is unused)


@dataclass(frozen=True)
class SummaryItem:
    episode: int
    conversation_id: str
    text: str
    start: datetime
    end: datetime

    @property
    def key(self) -> tuple[str, int]:
        return (self.conversation_id, self.episode)


@dataclass(frozen=True)
class AssemblyPlan:
    direct: int = 10  # how many top candidates count as direct evidence
    neighbour_of: int = 5  # neighbours are added around this many of the best candidates
    notice: bool = True
    compact_stamps: bool = False  # a stamp where the time changes only: date once per day, time once per minute


@dataclass
class AssembledContext:
    text: str
    tokens: int
    included: frozenset[int]
    reasons: dict[int, str] = field(default_factory=dict)
    left_out: int = 0
    summaries: list[SummaryItem] = field(default_factory=list)
    missing_direct: list[int] = field(default_factory=list)  # direct evidence that did not fit


_STAMP = datetime(2000, 1, 1)


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


@lru_cache(maxsize=16384)
def annotate_dates(content: str, occurred_at: datetime, discourse: Discourse = NO_DISCOURSE,
                   mentions: tuple[TimeMention, ...] | None = None) -> str:
    """`content` with each relative time expression followed by the date it resolves to against the
    turn's own time: "I went there last Saturday" said on 18 April 2023 ->
    "I went there last Saturday [15 April 2023]"; with `discourse`, also against the dates the turns
    before it named ("the 16th" after "December 14" is 16 December). `mentions`: the turn's expressions as
    the layers already resolved them (then neither is read again). Expressions that name their year
    already, and vague ones ("the other day"), are left as they are."""
    out, pos = [], 0
    if mentions is None:
        mentions = resolved_mentions(content, occurred_at, discourse)  # shared with `timeturns.discourses`
    for m in mentions:
        if not m.resolved or not m.label or _YEAR.search(m.surface):
            continue
        out.append(content[pos:m.end])
        out.append(f" [{m.label}]")
        pos = m.end
    out.append(content[pos:])
    return "".join(out)


def superseded_note(item: ContextItem) -> str:
    if item.superseded_by is None:
        return ""
    when = f" of {item.superseded_at.strftime('%Y-%m-%d')}" if item.superseded_at is not None else ""
    return f" [superseded by a later statement{when}]"


def render_line(item: ContextItem, dates: bool = True, form: str = "full") -> str:
    """The item's line in the context; `dates=False`: without the resolved dates (each " [...]" they
    add only lengthens it: `assemble`'s lower bound is read from this); `form`: its stamp, "full"
    (date and time), "time" (the time alone) or "none" (with `compact_stamps`)."""
    content = annotate_dates(item.content, item.occurred_at, item.discourse, item.mentions) if dates else item.content
    body = f"{turn_text(item.speaker, content)}{superseded_note(item)}"
    return body if form == "none" else f"{stamp(item.occurred_at, form == 'time')} {body}"


def stamp(at: datetime, short: bool = False) -> str:
    return f"[{at.strftime('%H:%M' if short else '%Y-%m-%d %H:%M')}]"


# Token counts (and lower bounds) of rendered lines, per counting function and item, kept across
# queries: every question about a conversation weighs mostly the same turns, in both of assemble's
# passes, and rendering a line (its dates resolved) costs more than counting it. Emptied when full;
# each entry holds its item (a BEAM-size turn is ~2 KB: ~10 MB for a full cache of those).
LINE_CACHE = 4096
_COUNTS: dict[tuple, int] = {}  # (count, item, form) -> tokens of the rendered line
_FLOORS: dict[tuple, int] = {}  # (at_least, item, form) -> its lower bound, the dates unresolved
_STAMP_COSTS: dict[tuple, int] = {}  # (count, minute, short) -> tokens of a stamp


def _memo(memo: dict[tuple, int], key: tuple, compute: Callable[[], int]) -> int:
    """`compute()` once per key, in a memo emptied when it holds LINE_CACHE entries."""
    n = memo.get(key)
    if n is None:
        if len(memo) >= LINE_CACHE:
            memo.clear()
        n = memo[key] = compute()
    return n


def _remembered(memo: dict[tuple, int], count: Callable[[str], int], item: ContextItem, dates: bool = True,
                form: str = "full") -> int:
    return _memo(memo, (count, item, form), lambda: count(render_line(item, dates, form)))


def _stamp_cost(count: Callable[[str], int], at: datetime, short: bool) -> int:
    """Tokens of a line's stamp, the full one or the time alone (a stamp is its own whitespace-
    separated words: a line costs its stamp plus the rest)."""
    return _memo(_STAMP_COSTS, (count, at.replace(second=0, microsecond=0), short),
                 lambda: count(stamp(at, short)))


def _minute(at: datetime) -> tuple[object, int, int]:
    return (at.date(), at.hour, at.minute)


def _lines(chosen: list[ContextItem], picked: list[SummaryItem], compact: bool) -> list[str]:
    """The context's lines in time order. With `compact`, grouped by day: a day's summaries first
    (a summary's own stamp says its span), then its turns, the first with the full stamp, a turn in
    a new minute with its time, any other without a stamp."""
    if not compact:
        timed = [(it.occurred_at, it.id, render_line(it)) for it in chosen]
        timed += [(s.start, -1 - s.episode, render_summary(s)) for s in picked]
        return [line for _, _, line in sorted(timed, key=lambda x: (x[0], x[1]))]
    keyed: list[tuple[tuple, ContextItem | SummaryItem]] = \
        [((it.occurred_at.date(), 1, it.occurred_at, it.id), it) for it in chosen]
    keyed += [((s.start.date(), 0, s.start, -1 - s.episode), s) for s in picked]
    out: list[str] = []
    days: set[object] = set()
    last: tuple[object, int, int] | None = None
    for (day, _, _, _), x in sorted(keyed, key=lambda kx: kx[0]):
        if isinstance(x, SummaryItem):
            out.append(render_summary(x))
            continue
        minute = _minute(x.occurred_at)
        out.append(render_line(x, form="time" if day in days else "full") if minute != last
                   else render_line(x, form="none"))
        days.add(day)
        last = minute
    return out


def render_summary(s: SummaryItem) -> str:
    span = s.start.strftime('%Y-%m-%d') if s.start.date() == s.end.date() else \
        f"{s.start.strftime('%Y-%m-%d')} to {s.end.strftime('%Y-%m-%d')}"
    return f"[{span}] Summary of an episode: {s.text}"


def notice_text(left_out: int) -> str:
    return f"[{left_out} more matching events were left out to fit the token budget.]"


def assemble(
    ranked: Sequence[ContextItem],
    budget: int,
    count_tokens: Callable[[str], int],
    neighbours: Mapping[int, Sequence[ContextItem]] | None = None,
    plan: AssemblyPlan = AssemblyPlan(),
    summaries: Mapping[int, SummaryItem] | None = None,
    at_least: Callable[[str], int] | None = None,
) -> AssembledContext:
    """`summaries` maps an event id to its episode's summary, used for direct evidence that does not fit.
    `at_least`: a lower bound of `count_tokens` that is cheaper than it (`tokens.wordpiece_floor` for a
    BERT tokenizer), never above it, and never lowered by inserting text that starts with a space; a
    line whose bound (before its dates are resolved) does not fit is skipped without being rendered
    or counted. The result is the same with it or without it."""
    chosen: dict[int, ContextItem] = {}
    reasons: dict[int, str] = {}
    cost: dict[int, int] = {}
    used = 0
    # Reserve room for the notice up front, so adding it can never overflow the budget.
    reserve = count_tokens(notice_text(len(ranked))) if plan.notice and ranked else 0
    room = max(0, budget - reserve)

    compact = plan.compact_stamps
    form = "none" if compact else "full"  # what a line is counted as; with compact, its stamps apart
    days: set[object] = set()  # with compact: the days whose full stamp is paid for (their first line)
    minutes: set[tuple[object, int, int]] = set()  # and the minutes whose stamp is

    def take(item: ContextItem, reason: str) -> None:
        nonlocal used
        if item.id in chosen:
            return
        c = cost.get(item.id)
        if c is None:
            if at_least is not None and used + _remembered(_FLOORS, at_least, item, False, form) > room:
                return  # the exact count is at least as high: it cannot fit either
            c = cost[item.id] = _remembered(_COUNTS, count_tokens, item, True, form)
        # with compact stamps the lines of one minute (of one day) are together in time order and share
        # a stamp: the time, paid by whichever is taken first; the day's first line has the full stamp,
        # the date paid once per day (a stamp is its own words: the date costs the same on any line)
        at, extra = item.occurred_at, 0
        if compact:
            extra += _stamp_cost(count_tokens, at, True) if _minute(at) not in minutes else 0
            if at.date() not in days:
                extra += max(0, _stamp_cost(count_tokens, at, False) - _stamp_cost(count_tokens, at, True))
        if used + c + extra <= room:
            chosen[item.id] = item
            reasons[item.id] = reason
            used += c + extra
            days.add(at.date())
            minutes.add(_minute(at))

    for item in ranked[: plan.direct]:
        take(item, "direct evidence")
    # the current value next to a replaced one: the superseding turn, when it is among the candidates
    by_id = {it.id: it for it in ranked}
    for item in ranked[: plan.direct]:
        newer = by_id.get(item.superseded_by) if item.id in chosen and item.superseded_by is not None else None
        if newer is not None:
            take(newer, f"supersedes #{item.id}")
    missing = [item.id for item in ranked[: plan.direct] if item.id not in chosen]
    picked: dict[tuple[str, int], SummaryItem] = {}
    for pk in missing:
        s = (summaries or {}).get(pk)
        if s is None or s.key in picked:
            continue
        c = count_tokens(render_summary(s))
        if used + c <= room:
            picked[s.key] = s
            used += c
    # No line is shorter than its date stamp: once less room than that is left, stop counting the
    # rest (a long ranked list would otherwise be tokenized to the end for nothing).
    floor = count_tokens(render_line(ContextItem(0, "", "", _STAMP), form=form)) or 1
    for item in ranked[plan.direct:]:
        if room - used < floor:
            break
        take(item, "ranked candidate")
    # the turns around the strongest evidence fill what room the ranking leaves: when the candidates are
    # few (a new conversation, lexical hits only), the reply beside a matching question still gets in
    for item in ranked[: plan.neighbour_of]:
        if item.id in chosen:
            for n in (neighbours or {}).get(item.id, ()):
                take(n, f"next to #{item.id}")

    lines = _lines(list(chosen.values()), list(picked.values()), compact)
    left_out = sum(1 for it in ranked if it.id not in chosen)
    if left_out and plan.notice and reserve and lines:
        note = notice_text(left_out)
        lines.append(note)
        used += count_tokens(note)
    # WordPiece splits on whitespace, so the joined text costs exactly the sum of its lines.
    return AssembledContext("\n".join(lines), used, frozenset(chosen), reasons, left_out, list(picked.values()),
                            missing)
