"""LoCoMo's conversation files as plain data: one parser for `palimpsest import --format locomo`
(app/importers.py) and for the benchmark's loader (bench/datasets.py), which reuses `Turn` and
`Conversation` for every data set it reads.

A LoCoMo sample holds `conversation.session_N` turn lists, each session dated by
`session_N_date_time` ("1:56 pm on 8 May, 2023"); turn i of a session is stamped i seconds after
the session's start so that the order survives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class Turn:
    event_id: str
    speaker: str
    content: str
    occurred_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    role: str | None = None  # "user" / "assistant" where the data says (BEAM); LoCoMo's two people have none

    def to_event(self, conversation_id: str) -> dict[str, Any]:
        """The body of one event for `POST /v1/events`."""
        event: dict[str, Any] = {
            "conversation_id": conversation_id,
            "event_id": self.event_id,
            "speaker": self.speaker,
            "content": self.content,
            "occurred_at": self.occurred_at.isoformat(),
        }
        if self.role:
            event["role"] = self.role
        if self.metadata:
            event["metadata"] = self.metadata
        return event


@dataclass
class Conversation:
    id: str
    turns: list[Turn]


_LOCOMO_DT = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.IGNORECASE
)
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"])}


def _month(name: str) -> int:
    key = name.strip().lower()
    if key in _MONTHS:
        return _MONTHS[key]
    for full, num in _MONTHS.items():  # "Sept", "Jan"
        if len(key) >= 3 and full.startswith(key):
            return num
    raise ValueError(f"unknown month {name!r}")


def parse_locomo_datetime(text: str) -> datetime:
    """`"1:56 pm on 8 May, 2023"` -> 2023-05-08 13:56 UTC."""
    m = _LOCOMO_DT.match(text)
    if not m:
        raise ValueError(f"unrecognised LoCoMo date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "p" else 0)
    return datetime(int(year), _month(month), int(day), h, int(minute), tzinfo=UTC)


def locomo_turn_content(turn: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The event content and metadata of one LoCoMo turn (a shared photo's caption goes in both)."""
    content = str(turn.get("text", "")).strip()
    meta: dict[str, Any] = {"dia_id": turn["dia_id"]}
    caption = turn.get("blip_caption")
    if caption:
        caption = str(caption).strip()
        content = f"{content} [shares a photo of {caption}]" if content else f"[shares a photo of {caption}]"
        meta["blip_caption"] = caption
        if turn.get("query"):
            meta["photo_query"] = str(turn["query"])
        # img_url is left out: dead links, some of them longer than the service's metadata limit.
    return content, meta


def _session_numbers(conv: dict[str, Any]) -> list[int]:
    nums = [int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k)]
    return sorted(nums)


def locomo_conversation(sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    turns: list[Turn] = []
    for n in _session_numbers(conv):
        session = conv[f"session_{n}"]
        if not session:
            continue
        start = parse_locomo_datetime(conv[f"session_{n}_date_time"])
        for i, t in enumerate(session):
            content, meta = locomo_turn_content(t)
            meta["session"] = n
            turns.append(Turn(t["dia_id"], t["speaker"], content, start + timedelta(seconds=i), meta))
    return Conversation(sample["sample_id"], turns)
