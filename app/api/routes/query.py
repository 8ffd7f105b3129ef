"""The query endpoint: evidence for a question, fused from every enabled signal, in a token budget.

The route reads the request into the query service's inputs (`app.services.query`) and writes its
output back as JSON; the pipeline, the recipe, the models and the heat bump are the service's.
"""
from __future__ import annotations

from fastapi import APIRouter, Depends, Response
from sqlalchemy import Connection

from app.api.deps import DB, dispatcher, reader
from app.api.error_models import ROUTE_ERRORS
from app.api.schemas import ContextEntry, ContextSummary, QueryIn, QueryItem, QueryOut, SignalEvidence
from app.domain.filters import where_json
from app.ports import Dispatcher
from app.services.query import QueryInput, QueryOutput, query_for
from app.storage.candidates import Scope
from app.storage.tenants import Principal

router = APIRouter(prefix="/v1", tags=["query"], responses=ROUTE_ERRORS)


@router.post("/query", response_model=QueryOut, summary="Retrieve evidence and a budgeted context for a question")
def query(body: QueryIn, who: Principal = Depends(reader), conn: Connection = DB,
          dispatch: Dispatcher = Depends(dispatcher)) -> Response:
    out = run_for(body, who, conn, dispatch)
    # The body written here, in the request's worker thread, as FastAPI writes a `response_model` (pydantic's
    # JSON of the model, the same bytes): returned as a model it would be validated again in one more hop
    # to the thread pool and then serialized on the event loop, which every other request waits on.
    return Response(query_out(out).model_dump_json(), media_type="application/json",
                    headers={"Server-Timing": server_timing(out.timings)})


def query_out(out: QueryOutput) -> QueryOut:
    """The response model of one query's output."""
    return QueryOut(
        items=[
            QueryItem(
                id=it.event.id, event_id=it.event.event_id, conversation_id=it.event.conversation_id,
                speaker=it.event.speaker, content=it.event.content, occurred_at=it.event.occurred_at,
                score=round(it.score, 8),
                signals={k: SignalEvidence(rank=int(v["rank"]), score=v["score"]) for k, v in it.signals.items()},
                in_context=it.in_context,
                stages=it.stages,
                supersedes_id=getattr(it.event, "supersedes_id", None),
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
        as_of=out.as_of,
        timings_ms=out.timings,
    )


def server_timing(ms: dict[str, float]) -> str:
    """`lexical;dur=12.3, dense;dur=4.1`: browsers' and proxies' standard per-stage timing header."""
    return ", ".join(f"{stage};dur={v:.1f}" for stage, v in ms.items())


def run_for(body: QueryIn, who: Principal, conn: Connection, dispatch: Dispatcher | None = None) -> QueryOutput:
    """The query service for one request (shared by /v1/query and /v1/answer)."""
    scope = Scope(
        tenant_id=who.tenant_id,
        conversation_id=body.conversation_id,
        speakers=tuple(body.speakers) if body.speakers else None,
        start=body.time_range.start if body.time_range else None,
        end=body.time_range.end if body.time_range else None,
        where=where_json(body.where),
    )
    overrides = body.pipeline.model_dump(exclude_none=True) if body.pipeline else None
    q = QueryInput(body.query, scope, body.top_k, body.token_budget, as_of=body.as_of)
    return query_for(conn, who.tenant_id, q, overrides, dispatch if dispatch is not None else dispatcher())
