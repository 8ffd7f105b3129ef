"""Job: L5 surprise index per conversation (sigma per event, in time order over the whole log), and
each event's importance for heat: max(salience, sigma). The heat record keeps its access history
across recomputes; only its importance changes.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from app.layers import surprise
from app.layers.heat import HeatRecord, compute_heat, new_record
from app.pipeline.gate import salience
from app.storage import layers as store
from workers.celery_app import celery
from workers.layerbase import ConversationLayer, Context, make_task

LAYER = "surprise"


def version() -> str:
    return surprise.LAYER_VERSION


def build(conn, ctx: Context) -> dict:  # noqa: ANN001
    scores = {int(s.event_id): s for s in surprise.score_conversation(ctx.events)}
    records = store.heat_records(conn, ctx.tenant_id, ctx.conversation_id, lock=True)
    now = datetime.now(timezone.utc)
    rows = []
    for r in ctx.rows:
        sc = scores[r.id]
        sal = r.gate_salience if r.gate_salience is not None else salience(r.content)[0]
        importance = round(max(sal, sc.sigma), 4)
        rec = (replace(HeatRecord.from_dict(records[r.id]), importance=importance) if r.id in records
               else new_record(store.memory_created_at(r.occurred_at, r.ingested_at), importance))
        state = compute_heat(rec, now)
        rows.append({
            "event_pk": r.id, "surprise_version": ctx.version, "surprise": sc.sigma, "surprise_facts": sc.fact_count,
            "surprise_new_facts": sc.new_fact_count, "surprise_contradiction": sc.contradiction, "salience": sal,
            "importance": importance, "heat": state.heat, "heat_stage": state.stage.value,
            "heat_record": rec.to_dict(), "heat_updated_at": now,
        })
    store.set_surprise_signals(conn, ctx.tenant_id, ctx.conversation_id, rows)
    sig = [r["surprise"] for r in rows]
    return {"events": len(rows), "mean_sigma": round(sum(sig) / len(sig), 4) if sig else 0.0,
            "contradictions": sum(r["surprise_contradiction"] for r in rows)}


JOB = ConversationLayer(LAYER, version, build)
score_surprise = make_task(celery, JOB)
