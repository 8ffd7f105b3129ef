"""Readers that turn other tools' conversation files into Palimpsest event records.

Each reader is a pure generator of event dicts (the `POST /v1/events` shape, with a stable
`event_id` so that a re-run or a resumed import never duplicates). Formats:

- `jsonl`       — one event per line (what `palimpsest export` writes)
- `locomo`      — LoCoMo's JSON (samples with `conversation.session_N` turn lists)
- `longmemeval` — LongMemEval's JSON (instances with `haystack_sessions` and `haystack_dates`)
- `openai`      — OpenAI-style chat transcripts: `{"id"?, "messages": [{"role", "content"}]}`,
                  as one JSON object, a list of them, or JSON Lines
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

FORMATS = ("jsonl", "locomo", "longmemeval", "openai")


def read_records(path: Path, fmt: str) -> Iterator[dict[str, Any]]:
    readers = {"jsonl": _jsonl, "locomo": _locomo, "longmemeval": _longmemeval, "openai": _openai}
    if fmt not in readers:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    yield from readers[fmt](path)


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    from app.transfer import read_jsonl  # the export format's own reader

    with open(path, encoding="utf-8") as fh:
        yield from read_jsonl(fh)


def _locomo(path: Path) -> Iterator[dict[str, Any]]:
    from app.locomo import locomo_conversation  # one parser for the importer and the benchmark

    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    for sample in samples if isinstance(samples, list) else [samples]:
        conv = locomo_conversation(sample)
        for turn in conv.turns:
            yield turn.to_event(conv.id)


def _parse_lme_date(text: str) -> datetime:
    # LongMemEval writes dates like "2023/05/20 (Sat) 02:21"
    cleaned = " ".join(part for part in text.split() if not part.startswith("("))
    for fmt in ("%Y/%m/%d %H:%M", "%Y/%m/%d", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LongMemEval date {text!r}")


def _longmemeval(path: Path) -> Iterator[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    for inst in data if isinstance(data, list) else [data]:
        conv_id = str(inst["question_id"])
        sessions = inst["haystack_sessions"]
        dates = inst.get("haystack_dates") or [None] * len(sessions)
        ids = inst.get("haystack_session_ids") or [str(i) for i in range(len(sessions))]
        for s_idx, (session, date, sid) in enumerate(zip(sessions, dates, ids)):
            start = _parse_lme_date(date) if date else datetime(2000, 1, 1, tzinfo=timezone.utc) + timedelta(days=s_idx)
            for t_idx, turn in enumerate(session):
                meta: dict[str, Any] = {"session_id": sid}
                if turn.get("has_answer"):
                    meta["has_answer"] = True
                yield {
                    "conversation_id": conv_id, "event_id": f"{sid}:{t_idx}", "speaker": turn["role"],
                    "role": turn["role"], "content": turn["content"],
                    "occurred_at": (start + timedelta(seconds=t_idx)).isoformat(), "metadata": meta,
                }


def _transcripts(path: Path) -> Iterator[dict[str, Any]]:
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        yield from (data if isinstance(data, list) else [data])
    except json.JSONDecodeError:
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)


def _openai(path: Path) -> Iterator[dict[str, Any]]:
    for n, transcript in enumerate(_transcripts(path)):
        messages = transcript.get("messages")
        if not isinstance(messages, list):
            raise ValueError(f"transcript {n} has no 'messages' list")
        conv_id = str(transcript.get("id") or f"{Path(path).stem}-{n}")
        base = transcript.get("created_at")
        start = datetime.fromisoformat(base) if isinstance(base, str) else datetime(2000, 1, 1, tzinfo=timezone.utc)
        for i, msg in enumerate(messages):
            content = msg.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
            if not content or not str(content).strip():
                continue
            yield {
                "conversation_id": conv_id, "event_id": str(msg.get("id") or i),
                "speaker": msg.get("name") or msg["role"], "role": msg["role"], "content": content,
                "occurred_at": (start + timedelta(seconds=i)).isoformat(),
            }


def stable_event_id(rec: dict[str, Any]) -> str:
    """A deterministic id for a record that has none, so a re-run is a no-op."""
    key = json.dumps([rec.get("conversation_id"), rec.get("speaker"), rec.get("occurred_at"), rec.get("content")],
                     ensure_ascii=False)
    return "h:" + hashlib.sha256(key.encode()).hexdigest()[:24]
