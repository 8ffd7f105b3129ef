"""LongMemEval_S as a benchmark data set (`longmemeval/longmemeval_s_train.json.gz`, its README).

Each question's haystack (about 50 dated user–assistant sessions, about 500 turns) is ingested as ONE
conversation whose id is the question id. Sessions are put in time order (upstream order is not
always time order; ties keep upstream order); a session's turns start at its date and follow one
second apart, and a turn is never earlier than the one before it, so the conversation's order is
the sessions' order. A turn's event id is `<session_id>:<turn index>`, unique in the conversation;
`speaker` = `role` = the turn's role.

Gold: turn level, the turns marked `has_answer`; session level, `answer_session_ids`. Abstention
questions (id ending in `_abs`) ask about something never said: they get the category "abstention"
and no gold, so they are reported apart (how often the service abstains), never scored for recall.
The question's date is kept as `Question.as_of`; the harness sends it as the query's `as_of`
(relative dates in the question are read from it, `bench.runner.query_body`).

Upstream quirk: 11 haystacks list one session twice, with the same content under two dates. Only
its first occurrence in time order is kept (the ids would collide, and the gold would be doubled).
"""
from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.locomo import Conversation, Turn
from bench.datasets import MAX_CONTENT_BYTES, Dataset, Question, clip_utf8

LME_FILE = "longmemeval/longmemeval_s_train.json.gz"
LME_ABSTENTION = "abstention"


def parse_lme_date(text: str) -> datetime:
    """`"2023/05/20 (Sat) 00:31"` -> 2023-05-20 00:31 UTC (the weekday is dropped, not checked)."""
    s = text.strip()
    return datetime.strptime(s[:10] + " " + s[-5:], "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def turn_event_id(session_id: str, index: int) -> str:
    return f"{session_id}:{index}"


def session_of(event_id: str) -> str:
    """The session id of an event id made by `turn_event_id` (session ids may hold no colon; the
    last colon separates the turn index)."""
    return event_id.rsplit(":", 1)[0]


def is_abstention(question_id: str) -> bool:
    return question_id.endswith("_abs")


def read_raw(data_dir: Path, path: Path | None = None) -> dict[str, Any]:
    """The file as parsed JSON: {"sessions": {...}, "questions": [...]}."""
    p = Path(path) if path else Path(data_dir) / LME_FILE
    with gzip.open(p, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def haystack(q: dict[str, Any]) -> tuple[list[tuple[datetime, str]], list[str]]:
    """The question's sessions in time order as (date, session id), repeats dropped; and notes."""
    dated = [(parse_lme_date(d), i, sid) for i, (d, sid) in
             enumerate(zip(q["haystack_dates"], q["haystack_session_ids"], strict=True))]
    dated.sort(key=lambda x: (x[0], x[1]))
    seen: set[str] = set()
    order: list[tuple[datetime, str]] = []
    notes: list[str] = []
    for when, _, sid in dated:
        if sid in seen:
            notes.append(f"{q['question_id']}: session {sid} listed twice; kept its first date only")
            continue
        seen.add(sid)
        order.append((when, sid))
    return order, notes


def lme_conversation(q: dict[str, Any], sessions: dict[str, list[dict[str, Any]]]
                     ) -> tuple[Conversation, list[str], list[str]]:
    """(the haystack as one conversation, the event ids of its `has_answer` turns, notes)."""
    qid = str(q["question_id"])
    order, notes = haystack(q)
    turns: list[Turn] = []
    gold: list[str] = []
    last: datetime | None = None
    for start, sid in order:
        for i, t in enumerate(sessions[sid]):
            if not str(t["content"]).strip():  # the service refuses an empty event; the baselines see the same turns
                notes.append(f"{qid} turn {turn_event_id(sid, i)}: empty content, left out"
                             + (" (it was marked has_answer)" if t.get("has_answer") else ""))
                continue
            when = start + timedelta(seconds=i)
            if last is not None and when <= last:
                when = last + timedelta(seconds=1)
            last = when
            eid = turn_event_id(sid, i)
            content, cut = clip_utf8(str(t["content"]), MAX_CONTENT_BYTES)
            meta: dict[str, Any] = {"session_id": sid, "turn": i}
            if cut:
                meta["truncated_from_bytes"] = len(str(t["content"]).encode("utf-8"))
                notes.append(f"{qid} turn {eid}: content cut to {MAX_CONTENT_BYTES} bytes")
            role = str(t["role"])
            turns.append(Turn(eid, role, content, when, meta, role=role))
            if t.get("has_answer"):
                gold.append(eid)
    return Conversation(qid, turns), gold, notes


def lme_question(q: dict[str, Any], conv: Conversation, gold: list[str]) -> Question:
    qid = str(q["question_id"])
    abst = is_abstention(qid)
    present = {str(t.metadata["session_id"]) for t in conv.turns}
    return Question(qid, conv.id, str(q["question"]), LME_ABSTENTION if abst else str(q["question_type"]),
                    () if abst else tuple(gold), str(q.get("answer", "")),
                    gold_sessions=() if abst else tuple(s for s in q.get("answer_session_ids") or [] if s in present),
                    as_of=parse_lme_date(q["question_date"]) if q.get("question_date") else None)


def load_longmemeval(data_dir: Path, path: Path | None = None) -> Dataset:
    """Every question of the file, each with its haystack as one conversation (file order)."""
    raw = read_raw(data_dir, path)
    sessions = raw["sessions"]
    conversations: list[Conversation] = []
    questions: list[Question] = []
    notes: list[str] = []
    for q in raw["questions"]:
        conv, gold, n = lme_conversation(q, sessions)
        conversations.append(conv)
        questions.append(lme_question(q, conv, gold))
        notes.extend(n)
        if not is_abstention(conv.id) and not gold:
            notes.append(f"{conv.id}: no has_answer turn; not scored")
    return Dataset("longmemeval", conversations, questions, apart=(LME_ABSTENTION,), notes=notes)
