"""POST /v1/answer: the query pipeline's context, answered by the configured LLM with its evidence.

Without an LLM the answer is 501 (this server does not offer it; a retry cannot help, unlike 503)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy import Connection

from app.api.deps import DB, reader
from app.api.routes.query import run_for
from app.api.error_models import ANSWER_ERRORS
from app.api.schemas import AnswerEvidence, AnswerIn, AnswerOut, ContextEntry
from app.adapters.llm import llm_from_settings
from app.domain.retrieval.answer import EvidenceLine
from app.ports import LLMError
from app.services.answer import answer_from_context
from app.settings import get_settings
from app.storage.tenants import Principal

router = APIRouter(prefix="/v1", tags=["query"], responses=ANSWER_ERRORS)


@router.post("/answer", response_model=AnswerOut, summary="Answer a question from memory with the configured LLM")
def answer(body: AnswerIn, who: Principal = Depends(reader), conn: Connection = DB) -> AnswerOut:
    llm = llm_from_settings(get_settings())
    if llm is None:
        raise HTTPException(501, "no LLM is configured: set PALIMPSEST_LLM_BASE_URL (an OpenAI-compatible API); "
                                 "POST /v1/query returns the same context without an answer")
    out = run_for(body, who, conn)
    events = {e.id: e for e, _ in out.context_items}
    lines = [EvidenceLine(e.id, e.speaker, e.content, e.occurred_at) for e, _ in out.context_items]
    try:
        done = answer_from_context(llm, body.query, lines, compress=body.compress)
    except (LLMError, ValueError) as exc:
        raise HTTPException(502, f"the LLM gave no usable answer: {exc}") from exc
    return AnswerOut(
        answer=done.answer.text,
        evidence=[AnswerEvidence(id=pk, event_id=events[pk].event_id, conversation_id=events[pk].conversation_id,
                                 speaker=events[pk].speaker, content=events[pk].content,
                                 occurred_at=events[pk].occurred_at) for pk in done.answer.evidence],
        context_items=[ContextEntry(id=e.id, event_id=e.event_id, reason=why)
                       for e, why in out.context_items if e.id in {line.id for line in done.shown}],
        context_tokens=out.context_tokens,
        compressed_from=done.compressed_from,
        abstain=out.abstain,
        model=llm.model,
    )
