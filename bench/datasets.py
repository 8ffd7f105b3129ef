"""Loaders for the benchmark data sets, into one common structure.

A `Dataset` is a list of conversations (each a list of turns, i.e. the events to ingest) and a
list of questions (each with the event ids of its gold evidence turns and a category). Every
function here is pure: it reads the files it is given and never touches the service.

LoCoMo (`locomo/locomo_dev7.json`) and BEAM 100K (`beam100k/<n>/chat.json` +
`probing_questions.json`) are described in the READMEs next to the data. LoCoMo's file format and
the `Turn` / `Conversation` shapes are the product's (app/locomo.py: `palimpsest import` reads it too).
"""
from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.locomo import Conversation, Turn, locomo_conversation


def default_data_dir() -> Path:
    """`$PALIMPSEST_BENCH_DATA`, else `../shared/data` beside the repository (read in place, never copied)."""
    env = os.environ.get("PALIMPSEST_BENCH_DATA")
    return Path(env) if env else (Path(__file__).resolve().parents[2] / "shared" / "data").resolve()


LOCOMO_FILE = "locomo/locomo_dev7.json"
BEAM_DIR = "beam100k"

LOCOMO_CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
LOCOMO_ADVERSARIAL = "adversarial"
BEAM_ABSTENTION = "abstention"


@dataclass
class Question:
    qid: str
    conversation_id: str
    question: str
    category: str
    gold: tuple[str, ...]  # event ids; empty for abstention (and for the few with unusable evidence)
    answer: str = ""
    gold_sessions: tuple[str, ...] = ()  # session-level gold where the data has it (LongMemEval)
    as_of: datetime | None = None  # the question's own date where the data has it (LongMemEval)

    @property
    def abstention(self) -> bool:
        return self.category == BEAM_ABSTENTION


@dataclass
class Dataset:
    name: str
    conversations: list[Conversation]
    questions: list[Question]
    # Categories reported apart from the overall row (LoCoMo adversarial, BEAM abstention).
    apart: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def n_turns(self) -> int:
        return sum(len(c.turns) for c in self.conversations)

    def conversation(self, cid: str) -> Conversation:
        for c in self.conversations:
            if c.id == cid:
                return c
        raise KeyError(cid)


# ---------------------------------------------------------------- LoCoMo

_DIA_ID = re.compile(r"^D(\d+):(\d+)$")


def clean_locomo_evidence(evidence: Iterable[Any], known: set[str]) -> tuple[list[str], list[str]]:
    """Normalise a question's evidence list to known dia_ids; return (ids, rejected raw entries).

    The data has a few malformed entries: several ids in one string ("D8:6; D9:17"), a stray colon
    ("D:11:26"), a bare "D", and ids of turns that do not exist. Unusable ones are rejected.
    """
    out: list[str] = []
    rejected: list[str] = []
    for raw in evidence or []:
        for part in re.split(r"[;,\s]+", str(raw).strip()):
            if not part:
                continue
            cand = part
            if cand not in known:
                m = re.match(r"^D:?(\d+):(\d+)$", cand)
                cand = f"D{m.group(1)}:{m.group(2)}" if m else cand
            if cand in known:
                if cand not in out:
                    out.append(cand)
            else:
                rejected.append(part)
    return out, rejected


def load_locomo(data_dir: Path) -> Dataset:
    path = Path(data_dir) / LOCOMO_FILE
    samples = json.loads(path.read_text())
    conversations: list[Conversation] = []
    questions: list[Question] = []
    notes: list[str] = []
    for sample in samples:
        conv = locomo_conversation(sample)
        conversations.append(conv)
        known = {t.event_id for t in conv.turns}
        for i, qa in enumerate(sample.get("qa", [])):
            gold, rejected = clean_locomo_evidence(qa.get("evidence", []), known)
            if rejected:
                notes.append(f"{conv.id} q{i}: dropped evidence {rejected}")
            category = LOCOMO_CATEGORIES.get(int(qa["category"]), str(qa["category"]))
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            questions.append(Question(f"{conv.id}:{i}", conv.id, str(qa["question"]), category,
                                      tuple(gold), str(answer)))
    return Dataset("locomo", conversations, questions, apart=(LOCOMO_ADVERSARIAL,), notes=notes)


# ---------------------------------------------------------------- BEAM

def parse_source_chat_ids(value: Any) -> list[int]:
    """Gold turn ids from BEAM's `source_chat_ids`: a list, a dict of lists, or a string of either.

    Nested values are flattened in order and duplicates dropped; None / "" give [].
    """
    if value is None:
        return []
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return []
        value = ast.literal_eval(value)
    out: list[int] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for vv in v.values():
                walk(vv)
        elif isinstance(v, (list, tuple, set)):
            for vv in v:
                walk(vv)
        elif v is None or v == "":
            return
        else:
            i = int(v)
            if i not in out:
                out.append(i)

    walk(value)
    return out


def parse_beam_anchor(text: str) -> datetime:
    """`"March-15-2024"` -> 2024-03-15 00:00 UTC."""
    for fmt in ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d", "%B %d, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised BEAM time anchor {text!r}")


BEAM_DEFAULT_START = datetime(2024, 1, 1, tzinfo=UTC)
# The service's default `max_content_bytes`. One BEAM turn (beam-4 #97) is 341 KiB, nearly all spaces
# from a degenerate generation; longer turns are cut here so every system sees the same text.
MAX_CONTENT_BYTES = 64 * 1024


def clip_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """`text` cut to at most `max_bytes` UTF-8 bytes at a character boundary; (text, was_cut)."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text, False
    return raw[:max_bytes].decode("utf-8", errors="ignore"), True


def beam_turns(chat: list[dict[str, Any]]) -> list[Turn]:
    """Turns of one BEAM chat in order. A turn's time is its batch's time anchor (set on the batch or
    on a turn; later turns inherit the last anchor seen) plus one second per turn since that anchor,
    so the order is kept. Before any anchor, times start at 2024-01-01."""
    turns: list[Turn] = []
    anchor = BEAM_DEFAULT_START
    since = 0
    for batch in chat:
        if batch.get("time_anchor"):
            anchor, since = parse_beam_anchor(batch["time_anchor"]), 0
        groups = batch.get("turns", [])
        # `turns` is a list of lists of turns; tolerate a flat list as well.
        flat = [t for g in groups for t in (g if isinstance(g, list) else [g])]
        for t in flat:
            if t.get("time_anchor"):
                anchor, since = parse_beam_anchor(t["time_anchor"]), 0
            meta: dict[str, Any] = {"turn_id": int(t["id"]), "batch": batch.get("batch_number")}
            for key in ("index", "question_type", "time_anchor"):
                if t.get(key) is not None:
                    meta[key] = t[key]
            content, cut = clip_utf8(str(t["content"]), MAX_CONTENT_BYTES)
            if cut:
                meta["truncated_from_bytes"] = len(str(t["content"]).encode("utf-8"))
            turns.append(Turn(str(int(t["id"])), str(t["role"]), content, anchor + timedelta(seconds=since), meta,
                              role=str(t["role"])))
            since += 1
    return turns


def _beam_answer(q: dict[str, Any]) -> str:
    for key in ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance"):
        if q.get(key):
            return str(q[key])
    return ""


def load_beam(data_dir: Path) -> Dataset:
    root = Path(data_dir) / BEAM_DIR
    dirs = sorted((p for p in root.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))
    conversations: list[Conversation] = []
    questions: list[Question] = []
    notes: list[str] = []
    for d in dirs:
        cid = f"beam-{d.name}"
        turns = beam_turns(json.loads((d / "chat.json").read_text()))
        conversations.append(Conversation(cid, turns))
        known = {t.event_id for t in turns}
        notes.extend(f"{cid} turn {t.event_id}: content cut from {t.metadata['truncated_from_bytes']} bytes to "
                     f"{MAX_CONTENT_BYTES}" for t in turns if "truncated_from_bytes" in t.metadata)
        probing = json.loads((d / "probing_questions.json").read_text())
        for ability, qs in probing.items():
            for i, q in enumerate(qs):
                gold = [str(x) for x in parse_source_chat_ids(q.get("source_chat_ids"))]
                missing = [g for g in gold if g not in known]
                if missing:
                    notes.append(f"{cid} {ability}#{i}: unknown source ids {missing}")
                gold = [g for g in gold if g in known]
                questions.append(Question(f"{cid}:{ability}:{i}", cid, str(q["question"]), ability,
                                          tuple(gold), _beam_answer(q)))
    return Dataset("beam", conversations, questions, apart=(BEAM_ABSTENTION,), notes=notes)


# ---------------------------------------------------------------- subsets

def spread(items: list[Any], n: int) -> list[Any]:
    """`n` items spread evenly over the list, first one included, order kept (all if n >= len)."""
    if n <= 0 or n >= len(items):
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def subset(ds: Dataset, limit: int | None = None, conversations: int | None = None,
           only: tuple[str, ...] = (), per_conversation: bool = True) -> Dataset:
    """A quick subset: the first `conversations` conversations (or those named in `only`), and `limit`
    questions per conversation spread evenly over its question list (so every part of the conversation
    and most categories are represented, unlike the first N, which all ask about the first sessions).
    With `per_conversation` false (a data set of one question per conversation, LongMemEval), `limit`
    keeps that many conversations, spread evenly over the list."""
    if only:
        unknown = set(only) - {c.id for c in ds.conversations}
        if unknown:
            raise ValueError(f"no such conversations in {ds.name}: {', '.join(sorted(unknown))}")
    convs = [c for c in ds.conversations if not only or c.id in only]
    convs = convs[:conversations] if conversations else convs
    if limit and not per_conversation:
        convs, limit = spread(convs, limit), None
    keep = {c.id for c in convs}
    questions: list[Question] = []
    for c in convs:
        qs = [q for q in ds.questions if q.conversation_id == c.id]
        questions.extend(spread(qs, limit) if limit else qs)
    assert all(q.conversation_id in keep for q in questions)
    return Dataset(ds.name, convs, questions, ds.apart, list(ds.notes))
