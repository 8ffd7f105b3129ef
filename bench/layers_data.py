"""The hand-labelled layer set (bench/data/layers/): loading and validation.

The format is documented in bench/data/layers/README.md. Loading checks everything a typo could
break (turn references, evidence strings, entity ids, supersession ids, time texts, dates) and
raises `ValueError` naming the conversation and the field.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data" / "layers"
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Turn:
    id: str  # s<session>t<turn>, 1-based
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True)
class GoldEntity:
    id: str
    name: str
    aliases: tuple[str, ...]

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class GoldAssertion:
    id: str
    turn: str
    says: str
    entity: str
    attribute: str
    value: str
    alts: tuple[str, ...] = ()
    negated: bool = False
    supersedes: tuple[str, ...] = ()
    valid_from: date | None = None  # filled by the loader (default: the turn's day)
    valid_to: date | None = None  # filled by the loader (default: the superseder's valid_from)


@dataclass(frozen=True)
class GoldTime:
    turn: str
    text: str
    start: date | None  # None: no definite span (not scored)
    end: date | None
    char_start: int = 0
    char_end: int = 0


@dataclass(frozen=True)
class Conversation:
    id: str
    register: str
    turns: tuple[Turn, ...]
    entities: tuple[GoldEntity, ...]
    assertions: tuple[GoldAssertion, ...]
    times: tuple[GoldTime, ...]
    split: str = "dev"
    speakers: tuple[str, ...] = field(default=())

    def turn(self, turn_id: str) -> Turn:
        for t in self.turns:
            if t.id == turn_id:
                return t
        raise KeyError(turn_id)


def _day(value: object, where: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError as exc:
        raise ValueError(f"{where}: {value!r} is not an ISO day (YYYY-MM-DD)") from exc


def _nth(text: str, needle: str, n: int) -> int:
    pos = -1
    for _ in range(n):
        pos = text.find(needle, pos + 1)
        if pos < 0:
            return -1
    return pos


def parse_conversation(raw: dict, split: str = "dev") -> Conversation:
    cid = raw.get("id") or "?"

    def fail(msg: str) -> ValueError:
        return ValueError(f"{cid}: {msg}")

    turns: list[Turn] = []
    for si, sess in enumerate(raw.get("sessions") or []):
        try:
            start = datetime.fromisoformat(str(sess["start"]).replace("Z", "+00:00"))
        except (KeyError, ValueError) as exc:
            raise fail(f"sessions[{si}].start is missing or not an ISO datetime") from exc
        if start.tzinfo is None:
            start = start.replace(tzinfo=timezone.utc)
        for ti, pair in enumerate(sess.get("turns") or []):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) and x for x in pair)):
                raise fail(f"sessions[{si}].turns[{ti}] must be [speaker, text]")
            turns.append(Turn(f"s{si + 1}t{ti + 1}", pair[0], pair[1], start + timedelta(minutes=ti)))
    if not turns:
        raise fail("no turns")
    by_id = {t.id: t for t in turns}
    speakers = tuple(dict.fromkeys(t.speaker for t in turns))

    entities = []
    for i, e in enumerate(raw.get("entities") or []):
        if not e.get("id") or not e.get("name"):
            raise fail(f"entities[{i}] needs id and name")
        entities.append(GoldEntity(e["id"], e["name"], tuple(e.get("aliases") or ())))
    ent_ids = {e.id for e in entities}
    if len(ent_ids) != len(entities):
        raise fail("duplicate entity id")
    named = {f.lower() for e in entities for f in e.forms}
    for s in speakers:
        if s.lower() not in named:
            raise fail(f"speaker {s!r} is not an entity (every speaker is one)")

    raw_asserts = raw.get("assertions") or []
    ids = [a.get("id") for a in raw_asserts]
    if len(set(ids)) != len(ids) or not all(ids):
        raise fail("assertion ids must be present and unique")
    superseder: dict[str, str] = {}
    for a in raw_asserts:
        for old in a.get("supersedes") or ():
            if old not in ids:
                raise fail(f"assertion {a['id']} supersedes unknown {old!r}")
            superseder.setdefault(old, a["id"])
    staged: dict[str, GoldAssertion] = {}
    for a in raw_asserts:
        where = f"assertion {a['id']}"
        for key in ("turn", "says", "entity", "attribute", "value"):
            if not isinstance(a.get(key), str) or not a.get(key):
                raise fail(f"{where}: {key} is required")
        if a["turn"] not in by_id:
            raise fail(f"{where}: no turn {a['turn']!r}")
        if a["says"] not in by_id[a["turn"]].text:
            raise fail(f"{where}: {a['says']!r} is not in turn {a['turn']}")
        if a["entity"] not in ent_ids:
            raise fail(f"{where}: unknown entity {a['entity']!r}")
        staged[a["id"]] = GoldAssertion(
            a["id"], a["turn"], a["says"], a["entity"], a["attribute"], a["value"], tuple(a.get("alts") or ()),
            bool(a.get("negated", False)), tuple(a.get("supersedes") or ()),
            _day(a.get("valid_from"), f"{cid} {where}.valid_from") or by_id[a["turn"]].at.date(),
            _day(a.get("valid_to"), f"{cid} {where}.valid_to"),
        )
    assertions = []
    for a in staged.values():
        if a.valid_to is None and a.id in superseder:
            a = GoldAssertion(**{**a.__dict__, "valid_to": staged[superseder[a.id]].valid_from})
        if a.valid_to is not None and a.valid_from is not None and a.valid_to < a.valid_from:
            raise fail(f"assertion {a.id}: valid_to {a.valid_to} is before valid_from {a.valid_from}")
        assertions.append(a)

    times = []
    for i, t in enumerate(raw.get("times") or []):
        where = f"times[{i}]"
        if t.get("turn") not in by_id:
            raise fail(f"{where}: no turn {t.get('turn')!r}")
        text = by_id[t["turn"]].text
        pos = _nth(text, t.get("text") or "\0", int(t.get("occurrence", 1)))
        if pos < 0:
            raise fail(f"{where}: {t.get('text')!r} is not in turn {t['turn']}")
        start, end = _day(t.get("start"), f"{cid} {where}.start"), _day(t.get("end"), f"{cid} {where}.end")
        if (start is None) != (end is None) or (start and end and end <= start):
            raise fail(f"{where}: start and end are both null or a non-empty half-open span")
        times.append(GoldTime(t["turn"], t["text"], start, end, pos, pos + len(t["text"])))
    if not re.fullmatch(r"[a-z0-9][a-z0-9\-]*", str(cid)):
        raise fail("id must be lower-case letters, digits and dashes")
    return Conversation(cid, str(raw.get("register") or ""), tuple(turns), tuple(entities), tuple(assertions),
                        tuple(times), split, speakers)


def load_manifest(data_dir: Path = DATA_DIR) -> dict[str, list[str]]:
    manifest = json.loads((data_dir / "manifest.json").read_text(encoding="utf-8"))
    out = {s: list(manifest.get(s) or []) for s in SPLITS}
    both = set(out["dev"]) & set(out["test"])
    if both:
        raise ValueError(f"manifest: {sorted(both)} are in both dev and test")
    return out


def load_set(split: str = "all", data_dir: Path = DATA_DIR) -> list[Conversation]:
    """The conversations of `split` (dev, test or all), in manifest order, validated."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split is dev, test or all, not {split!r}")
    manifest = load_manifest(data_dir)
    out = []
    for s in SPLITS:
        if split not in ("all", s):
            continue
        for cid in manifest[s]:
            path = data_dir / "conversations" / f"{cid}.json"
            if not path.exists():
                raise ValueError(f"manifest names {cid} but {path} does not exist")
            conv = parse_conversation(json.loads(path.read_text(encoding="utf-8")), s)
            if conv.id != cid:
                raise ValueError(f"{path}: id {conv.id!r} differs from its file name")
            out.append(conv)
    return out
