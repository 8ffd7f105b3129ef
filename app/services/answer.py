"""Answer a question from the query's context with an LLM (the service behind POST /v1/answer).

The prompts and the parsing of replies are pure (`app.domain.retrieval.answer`); this sends them
through the LLM port: a first pass that keeps only the lines bearing on the question when asked
(PRISM N3), then the answer pass over what was kept.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.retrieval.answer import Answer, EvidenceLine, answer_messages, compress_messages, parse_answer, parse_compression
from app.ports import LLM


@dataclass(frozen=True)
class Answered:
    answer: Answer
    shown: list[EvidenceLine]  # the lines the answer pass read
    compressed_from: int | None  # how many lines there were before compression; None without it


def answer_from_context(llm: LLM, question: str, lines: Sequence[EvidenceLine], compress: bool = False) -> Answered:
    """Raises `LLMError` when the LLM fails, ValueError when its reply is not usable."""
    shown, before = list(lines), None
    if compress and lines:
        shown, before = parse_compression(llm.chat(compress_messages(question, lines), json_mode=True), lines), len(lines)
    return Answered(parse_answer(llm.chat(answer_messages(question, shown), json_mode=True), shown), shown, before)
