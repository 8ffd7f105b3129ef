"""Stage 7 (optional): answer a question from the assembled context with an LLM.

Pure parts only: the prompts and the parsing of replies. The route sends them through the LLM port
(`app.ports.LLM`; the HTTP client is `app.adapters.llm`).
Each context line is labelled with its event's id ("[E12]") so the model can cite the evidence it
used; a cited id that was not in the context is dropped, so the evidence list never invents events.

Compression (PRISM N3) is a first pass that keeps only the lines that bear on the question, by
label; the answer pass then reads the shorter context.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.domain.event import turn_text

ANSWER_SYSTEM = (
    "You answer questions about a person's past conversations using only the evidence lines given. "
    "Each line starts with a label like [E12], then the date and the speaker. If the evidence does not "
    "contain the answer, say so. Reply with one JSON object only: "
    '{"answer": "<short answer>", "evidence": ["E12", ...]} listing the labels of the lines you used.'
)
COMPRESS_SYSTEM = (
    "You select evidence. Given a question and labelled conversation lines, return the labels of the "
    "lines needed to answer it, most important first, as one JSON object: {\"keep\": [\"E12\", ...]}. "
    "Keep a line if it states a fact, date, name or reason the answer depends on; drop small talk."
)
_LABEL = re.compile(r"E(\d+)")


@dataclass(frozen=True)
class EvidenceLine:
    id: int
    speaker: str
    content: str
    occurred_at: datetime

    def render(self) -> str:
        return f"[E{self.id}] [{self.occurred_at.strftime('%Y-%m-%d %H:%M')}] {turn_text(self.speaker, self.content)}"


@dataclass(frozen=True)
class Answer:
    text: str
    evidence: list[int]  # ids of context events the model cited, in its order, only ones it was shown


def answer_messages(question: str, lines: Sequence[EvidenceLine]) -> list[dict[str, str]]:
    body = "\n".join(line.render() for line in lines) or "(no evidence found)"
    return [{"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Evidence:\n{body}\n\nQuestion: {question}"}]


def compress_messages(question: str, lines: Sequence[EvidenceLine]) -> list[dict[str, str]]:
    body = "\n".join(line.render() for line in lines)
    return [{"role": "system", "content": COMPRESS_SYSTEM},
            {"role": "user", "content": f"Question: {question}\n\nLines:\n{body}"}]


def _json_object(reply: str) -> dict:
    m = re.search(r"\{.*\}", reply, re.S)
    if not m:
        raise ValueError(f"no JSON object in the reply: {reply[:200]!r}")
    obj = json.loads(m.group(0))
    if not isinstance(obj, dict):
        raise ValueError("the reply's JSON is not an object")
    return obj


def _labels(values: object, allowed: set[int]) -> list[int]:
    out: list[int] = []
    for v in values if isinstance(values, list) else []:
        m = _LABEL.search(str(v)) if not isinstance(v, int) else None
        pk = v if isinstance(v, int) else (int(m.group(1)) if m else None)
        if pk is not None and pk in allowed and pk not in out:
            out.append(pk)
    return out


def parse_answer(reply: str, shown: Sequence[EvidenceLine]) -> Answer:
    """The answer and the cited ids that were really shown; raises ValueError on a reply without one."""
    obj = _json_object(reply)
    text = obj.get("answer")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the reply has no 'answer' string")
    return Answer(text.strip(), _labels(obj.get("evidence"), {line.id for line in shown}))


def parse_compression(reply: str, shown: Sequence[EvidenceLine]) -> list[EvidenceLine]:
    """The kept lines in time order; all of them when the reply keeps none (never answer from nothing)."""
    keep = set(_labels(_json_object(reply).get("keep"), {line.id for line in shown}))
    kept = [line for line in shown if line.id in keep]
    return kept or list(shown)
