"""The scale benchmark's corpus: deterministic, offline, streamed multi-session conversations.

Conversations are recombined from the shared LoCoMo (two friends chatting) and BEAM (a user and an
assistant) turns: each session is a contiguous window of one source session (so replies still follow
their questions), with the speakers renamed, explicit dates in the text moved with the new timeline,
and new dates for every turn. Into each conversation a few facts are planted, each said once with a
coined word that occurs nowhere else in the tenant, and a question that asks for it in other words.

Everything depends only on (seed, conversation index): conversation `i` is the same whatever the
size, so the 10k corpus is the first 10,000 events of the 100k one, and a run can grow a tenant
step by step. Nothing is fetched; the source turns are read in place.
"""
from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from bench.datasets import load_beam, load_locomo

FIRST_NAMES = (
    "Ada Bela Cyrus Dalia Emil Farah Gideon Hana Ivo Jasmin Kofi Lena Milo Nadia Oskar Priya Quinn Rosa Soren "
    "Tala Umar Vera Wes Xenia Yusuf Zora Anouk Bram Celia Dev Elif Finn Greta Hugo Ines Jonas Kaia Luca Mira "
    "Nico Olga Pavel Rhea Sami Theo Una Viktor Wren Yara Zane Aurel Beatrix Casimir Delphine Ezra Flora Gus "
    "Helga Idris Juno").split()
NICKNAMES = {"Melanie": ("Mel",)}  # the only short form LoCoMo speakers call each other by
ASSISTANT = "assistant"
BEAM_CLIP_CHARS = 800  # ~180 word pieces: an assistant answer, yet 1M events embed in hours, not days
_MONTHS = ("January February March April May June July August September October November December").split()
_DATE_RE = re.compile(r"\b(" + "|".join(_MONTHS) + r") (\d{1,2}), (\d{4})\b")
_BEAM_MARK = re.compile(r"\s*->->[^\n]*")  # BEAM's "->-> 1,1" batch markers: generation artefacts
_SYLLABLES = ("ka lo mi nu re sa ti vo bel dar fen gor hul jin kev lum mor nax pel quin ros tav wex yl").split()
_A, _M = 7919, len(_SYLLABLES) ** 4  # a permutation of [0, M): coined words look random, never repeat

Event = dict[str, Any]


@dataclass(frozen=True)
class Planted:
    """A planted fact and the question about it; `gold` is the event id that states it."""

    qid: str
    conversation_id: str
    gold: str
    index: int  # position of the gold event in the whole stream (0-based)
    question: str
    answer: str
    statement: str
    token: str  # the coined word: in the statement and the question, nowhere else


@dataclass
class SourcePool:
    chat: list[tuple[datetime, list[tuple[str, str]]]]  # LoCoMo sessions: (date, [(speaker, text)])
    assistant: list[tuple[datetime, list[tuple[str, str]]]]  # BEAM batches: (anchor, [(role, text)])

    @classmethod
    def load(cls, data_dir: Path) -> "SourcePool":
        chat: dict[tuple[str, int], tuple[datetime, list[tuple[str, str]]]] = {}
        for conv in load_locomo(data_dir).conversations:
            for t in conv.turns:
                key = (conv.id, int(t.metadata["session"]))
                chat.setdefault(key, (t.occurred_at, []))[1].append((t.speaker, t.content))
        assistant: dict[tuple[str, Any], tuple[datetime, list[tuple[str, str]]]] = {}
        for conv in load_beam(data_dir).conversations:
            for t in conv.turns:
                text = _clip(_BEAM_MARK.sub("", t.content).strip(), BEAM_CLIP_CHARS)
                if text:
                    key = (conv.id, t.metadata.get("batch"))
                    assistant.setdefault(key, (t.occurred_at, []))[1].append((t.speaker, text))
        return cls([v for _, v in sorted(chat.items())], [v for _, v in sorted(assistant.items(), key=str)])


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("\n"))
    return cut[: end + 1] if end > limit // 2 else cut.rsplit(" ", 1)[0]


def coin(n: int, salt: int = 0) -> str:
    """The n-th coined word (n < 331,776): for one salt, distinct n give distinct words."""
    v = (n * _A + 12345 + salt * 100_003) % _M
    parts = []
    for _ in range(4):
        v, d = divmod(v, len(_SYLLABLES))
        parts.append(_SYLLABLES[d])
    return "".join(parts).capitalize()


# (statement, question, answer); {x} the coined word, {me} the speaker, {p} another person
_TEMPLATES = (
    ("My locker at the {x} gym opens with {n4}, writing it down here.",
     "What is the code for {me}'s locker at the {x} gym?", "{n4}"),
    ("We finally named the puppy {x}! She's a {breed} and chews everything.",
     "What kind of dog is {x}, the puppy {me} named?", "{breed}"),
    ("The wifi password at the {x} co-working space is {word}{n2}, I keep forgetting it.",
     "How does {me} get online at {x} co-working, what's the password?", "{word}{n2}"),
    ("I'm booked at the {x} hotel in {city} for the whole conference week.",
     "In which city is the {x} hotel where {me} stays?", "{city}"),
    ("{p} lent me her {color} bike, the one she calls {x}.",
     "Who owns the {color} bicycle nicknamed {x}?", "{p}"),
    ("Our team picked {x} as the codename for the new {thing}; kickoff is on {weekday}.",
     "On which day does the {x} project start?", "{weekday}"),
    ("This morning I planted {n1} tomato seedlings in my plot at the {x} community garden.",
     "How many tomato plants did {me} put in at {x}?", "{n1}"),
    ("The vet says my cat {x} is due for her booster shot on {date}.",
     "When does {me}'s cat {x} need the next vaccination?", "{date}"),
)
_FILL = {
    "breed": "beagle corgi dachshund greyhound poodle whippet samoyed collie".split(),
    "word": "lantern orchid pebble falcon saffron walnut cobalt juniper".split(),
    "city": "Lisbon Tallinn Porto Ghent Lyon Krakow Bergen Ljubljana".split(),
    "color": "teal mustard crimson olive lilac copper".split(),
    "thing": ["billing system", "mobile app", "onboarding flow", "data warehouse", "search page"],
    "weekday": "Monday Tuesday Wednesday Thursday Friday".split(),
}
_LEADS = ("", "Oh, one more thing. ", "Random, but ", "Totally unrelated: ", "By the way, ")


def _plant(rng: random.Random, token: str, me: str, other: str, when: datetime) -> tuple[str, str, str]:
    stmt, q, ans = rng.choice(_TEMPLATES)
    slots = {k: rng.choice(v) for k, v in _FILL.items()}
    slots.update(x=token, me=me, p=other, n4=f"{rng.randrange(1000, 10000)}", n2=f"{rng.randrange(10, 100)}",
                 n1=str(rng.randrange(3, 13)))
    slots["date"] = (when + timedelta(days=rng.randrange(5, 40))).strftime("%B %-d")
    lead, body = rng.choice(_LEADS), stmt.format(**slots)
    if lead and not body.startswith(("I ", "I'm", other)):  # "By the way, we finally ..."
        body = body[0].lower() + body[1:]
    return lead + body, q.format(**slots), ans.format(**slots)


class Corpus:
    """The event stream for one seed. `events(start, stop)` yields (event, planted-or-None) for the
    stream positions [start, stop), generating one conversation at a time (memory stays flat)."""

    def __init__(self, pool: SourcePool, seed: int = 7, conv_len: tuple[int, int] = (400, 600),
                 plants: int = 5, assistant_share: float = 0.2):
        self.pool, self.seed, self.conv_len, self.plants = pool, seed, conv_len, plants
        self.assistant_share = assistant_share

    def conversation_id(self, i: int) -> str:
        return f"scale-{self.seed}-{i:05d}"

    def length(self, i: int) -> int:
        return random.Random(f"{self.seed}/{i}/len").randint(*self.conv_len)

    def events(self, start: int, stop: int) -> Iterator[tuple[Event, Planted | None]]:
        i, offset = 0, 0
        while offset + self.length(i) <= start:
            offset += self.length(i)
            i += 1
        while offset < stop:
            for k, pair in enumerate(self.conversation(i, offset)):
                if start <= offset + k < stop:
                    yield pair
            offset += self.length(i)
            i += 1

    def conversation(self, i: int, offset: int) -> list[tuple[Event, Planted | None]]:
        """Conversation `i`, whose first event is stream position `offset` (event ids are positions)."""
        rng = random.Random(f"{self.seed}/{i}")
        n = self.length(i)
        cid = self.conversation_id(i)
        assistant = rng.random() < self.assistant_share
        names = rng.sample(FIRST_NAMES, 3)
        people = (names[0], ASSISTANT) if assistant else (names[0], names[1])
        sources = self.pool.assistant if assistant else self.pool.chat
        plant_at = set(rng.sample(range(20, n), self.plants)) if n > 20 + self.plants else set()
        t = datetime(2022, 1, 3, tzinfo=UTC) + timedelta(days=rng.randrange(900), hours=rng.randrange(8, 20))
        out: list[tuple[Event, Planted | None]] = []
        planted = 0
        while len(out) < n:
            src_date, turns = rng.choice(sources)
            size = min(len(turns), rng.randint(12, 40))
            first = rng.randrange(len(turns) - size + 1)
            window = turns[first:first + size]
            rename = _renamer(window, people, names[2])
            shift = timedelta(days=(t.date() - src_date.date()).days)
            for speaker, text in window:
                if len(out) == n:
                    break
                pos = offset + len(out)
                if len(out) in plant_at:
                    me = people[0] if assistant else rename[speaker]
                    other = names[2]
                    seq = i * self.plants + planted
                    planted += 1
                    token = coin(seq, self.seed)
                    stmt, q, ans = _plant(rng, token, me, other, t)
                    ev = _event(cid, pos, me, stmt, t)
                    out.append((ev, Planted(f"{cid}:q{seq}", cid, ev["event_id"], pos, q, ans, stmt, token)))
                    t += timedelta(seconds=rng.randint(20, 120))
                    continue
                out.append((_event(cid, pos, rename[speaker], _perturb(text, rename, shift), t), None))
                t += timedelta(seconds=rng.randint(20, 120))
            t += timedelta(days=rng.randint(1, 9), hours=rng.randint(-3, 3))
        return out


def _event(cid: str, pos: int, speaker: str, content: str, when: datetime) -> Event:
    return {"conversation_id": cid, "event_id": f"s{pos:07d}", "speaker": speaker, "content": content,
            "occurred_at": when.isoformat()}


def _renamer(window: list[tuple[str, str]], people: tuple[str, str], third: str) -> dict[str, str]:
    """Source speaker -> new name, in order of first appearance (a BEAM role maps to the user/assistant)."""
    out: dict[str, str] = {}
    if people[1] == ASSISTANT:
        return {"user": people[0], "assistant": ASSISTANT}
    for speaker, _ in window:
        if speaker not in out:
            out[speaker] = people[len(out)] if len(out) < 2 else third
    return out


def _perturb(text: str, rename: dict[str, str], shift: timedelta) -> str:
    for old, new in rename.items():
        if old in ("user", ASSISTANT):
            continue
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
        for nick in NICKNAMES.get(old, ()):
            text = re.sub(rf"\b{re.escape(nick)}\b", new, text)

    def move(m: re.Match) -> str:
        try:
            d = datetime(int(m.group(3)), _MONTHS.index(m.group(1)) + 1, int(m.group(2))) + shift
        except ValueError:  # "February 30, 2024" in the source: leave it
            return m.group(0)
        return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"

    return _DATE_RE.sub(move, text)


def dump(corpus: Corpus, n: int, out: TextIO, questions: TextIO | None = None) -> int:
    """Write the first `n` events as JSON lines (and the planted pairs); byte-identical per seed."""
    count = 0
    for ev, planted in corpus.events(0, n):
        out.write(json.dumps(ev, sort_keys=True, ensure_ascii=False) + "\n")
        if planted and questions is not None:
            questions.write(json.dumps(asdict(planted), sort_keys=True, ensure_ascii=False) + "\n")
        count += 1
    return count
