"""The query endpoint: evidence for a question, fused from every enabled signal, in a token budget."""
from __future__ import annotations

import time
from datetime import datetime, timezone

from fastapi import APIRouter, Depends, Response
from sqlalchemy import Connection

from app.api.deps import DB, reader
from app.api.schemas import ROUTE_ERRORS, ContextEntry, ContextSummary, QueryIn, QueryItem, QueryOut, SignalEvidence
from app.models.embedder import get_embedder
from app.pipeline.intent import LLMConfig
from app.pipeline.query import QueryInput, QueryOutput, run_query
from app.pipeline.recipe import Recipe
from app.settings import get_settings
from app.storage.layers import bump_access
from app.storage.search import Scope
from app.storage.tenants import Principal
from workers.dispatch import publish
from workers.registry import HEAT_BUMP

router = APIRouter(prefix="/v1", tags=["query"], responses=ROUTE_ERRORS)


@router.post("/query", response_model=QueryOut, summary="Retrieve evidence and a budgeted context for a question")
def query(body: QueryIn, response: Response, who: Principal = Depends(reader),
          conn: Connection = DB) -> QueryOut:
    out = run_for(body, who, conn)
    response.headers["Server-Timing"] = server_timing(out.timings)
    return QueryOut(
        items=[
            QueryItem(
                id=it.event.id, event_id=it.event.event_id, conversation_id=it.event.conversation_id,
                speaker=it.event.speaker, content=it.event.content, occurred_at=it.event.occurred_at,
                score=round(it.score, 8),
                signals={k: SignalEvidence(rank=int(v["rank"]), score=v["score"]) for k, v in it.signals.items()},
                in_context=it.in_context,
                stages=it.stages,
            )
            for it in out.items
        ],
        context=out.context,
        context_tokens=out.context_tokens,
        context_items=[ContextEntry(id=e.id, event_id=e.event_id, reason=why) for e, why in out.context_items],
        left_out=out.left_out,
        pipeline=out.recipe,
        intent=out.intent,
        relevance=out.relevance,
        context_summaries=[ContextSummary(conversation_id=x.conversation_id, episode=x.episode, start=x.start,
                                          end=x.end, text=x.text) for x in out.summaries],
        abstain=out.abstain,
        timings_ms=out.timings,
    )


def server_timing(ms: dict[str, float]) -> str:
    """`lexical;dur=12.3, dense;dur=4.1`: browsers' and proxies' standard per-stage timing header."""
    return ", ".join(f"{stage};dur={v:.1f}" for stage, v in ms.items())


def run_for(body: QueryIn, who: Principal, conn: Connection) -> QueryOutput:
    """The pipeline for one request (shared by /v1/query and /v1/answer)."""
    recipe = Recipe.from_settings(get_settings()).with_overrides(
        body.pipeline.model_dump(exclude_none=True) if body.pipeline else None
    )
    scope = Scope(
        tenant_id=who.tenant_id,
        conversation_id=body.conversation_id,
        speakers=tuple(body.speakers) if body.speakers else None,
        start=body.time_range.start if body.time_range else None,
        end=body.time_range.end if body.time_range else None,
    )
    out = run_query(conn, QueryInput(body.query, scope, body.top_k, body.token_budget), recipe, get_embedder(),
                    reranker=_reranker() if recipe.rerank else None, llm=llm_config(get_settings()))
    started = time.perf_counter()
    record_retrieval(conn, who.tenant_id, [e.id for e, _ in out.context_items])
    out.timings["heat"] = round((time.perf_counter() - started) * 1000.0, 3)
    return out


def record_retrieval(conn: Connection, tenant_id: int, pks: list[int]) -> None:
    """Retrieval is rehearsal: what was handed out gets warmer (Cortex heat). Queued for a worker
    by default; written here when so set, or when the broker cannot take it (nothing is dropped)."""
    mode = get_settings().heat_on_query
    if mode == "off" or not pks:
        return
    if mode == "queue":
        if publish(HEAT_BUMP, [tenant_id, pks, datetime.now(timezone.utc).isoformat()]):
            return
    bump_access(conn, tenant_id, pks)


def llm_config(s, timeout_s: float | None = None) -> LLMConfig | None:  # noqa: ANN001
    """The configured LLM (PALIMPSEST_LLM_BASE_URL), or None. The intent router, on the query's
    critical path, waits at most 5 s for it; `timeout_s` overrides that (the answer endpoint)."""
    if not s.llm_base_url:
        return None
    return LLMConfig(base_url=s.llm_base_url, model=s.llm_model, api_key=s.llm_api_key,
                     timeout_s=timeout_s if timeout_s is not None else min(s.llm_timeout_s, 5.0))


def _reranker():
    """The installed cross-encoder, or None when there is none (the stage is then skipped)."""
    from app.models.reranker import RerankerUnavailable, get_reranker

    try:
        return get_reranker()
    except (RerankerUnavailable, FileNotFoundError, OSError):
        return None
