"""Job: the encoding gate's second half (True Memory §4.1 Stage 1), for tenants whose gate is on.

At ingest, before the write returns, the writer scores each event with what is cheap there:
novelty (gzip cost against the conversation's latest admitted events) and salience (rules). The
prediction error needs the embedding model twice per event (≈ 2x the embed layer's cost), so it is
computed here, after the embed layer has stored the vectors: the event's nearest earlier admitted
events are found by cosine over the stored vectors (novelty is re-measured against them), and
pi = 1 - cos(emb(e [SEP] m1), emb(m1 [SEP] m1)) is computed for events that are not noise and
whose nearest neighbour is on topic. Admission is then re-decided with all three signals.

Because pi >= 0, the score at ingest (pi taken as 0) is a lower bound: in `filter` mode an event
admitted at ingest on that bound can only lose its place here through the better neighbours, and an
event held back at ingest (status `gated_out`, not deleted) is re-admitted here when pi lifts it.

`regate_tenant` (the `palimpsest regate` command) re-decides stored events from stored signals
with `app.pipeline.gate.decide`, no model needed.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from app.pipeline import gate
from app.settings import get_settings
from app.storage import layers as store
from app.storage.events import EventRow
from workers.celery_app import celery
from workers.layerbase import ConversationLayer, Context, make_task
from workers.registry import REBUILT_AFTER_FORGET

LAYER = "gate"


def version() -> str:
    return gate.LAYER_VERSION


def build(conn, ctx: Context) -> dict:  # noqa: ANN001
    s = get_settings()
    mode = store.tenant_gate_mode(conn, ctx.tenant_id, s.gate_mode_default)
    if mode == "off":
        return {"mode": mode, "evaluated": 0}
    config = gate.GateConfig(mode=mode)  # type: ignore[arg-type]
    pending = set(ctx.pending)
    todo = sorted((r for r in ctx.all_rows if r.id in pending), key=lambda r: r.id)
    by_id = {r.id: r for r in ctx.all_rows}
    vectors = ctx.vectors or {}
    cand = np.array(sorted(pk for pk in by_id if pk in vectors), dtype=np.int64)
    matrix = np.vstack([vectors[int(i)] for i in cand]) if len(cand) else None
    admitted = np.array([by_id[int(i)].gate_status != "gated_out" for i in cand], dtype=bool)
    in_time = sorted(ctx.all_rows, key=lambda r: (r.occurred_at, r.id))
    texts, neighbours, sims = [], [], []
    for r in todo:
        v = vectors.get(r.id)
        if v is not None and matrix is not None:
            score = matrix @ v
            ok = (cand < r.id) & admitted
            order = [j for j in np.argsort(-score, kind="stable") if ok[j]][: config.max_neighbours]
            neighbours.append([by_id[int(cand[j])].content for j in order])
            sims.append(float(score[order[0]]) if order else None)
        else:  # no vector (should not happen after embed): the latest earlier events
            before = [e.content for e in in_time if e.id < r.id and e.gate_status != "gated_out"]
            neighbours.append(before[::-1][: config.max_neighbours])
            sims.append(None)
        texts.append(r.content)
    from app.models.embedder import get_embedder

    decisions = gate.evaluate_batch(texts, neighbours, get_embedder().encode, config, sims) if texts else []
    rows, changed = [], 0
    for r, d in zip(todo, decisions):
        rows.append({"id": r.id, "gate_novelty": d.novelty, "gate_salience": d.salience,
                     "gate_prediction_error": d.prediction_error, "gate_score": d.score, "gate_status": d.status})
        changed += (r.gate_status or "admitted") != d.status
    store.set_gate(conn, rows)
    return {"mode": mode, "evaluated": len(rows), "gated_out": sum(d.status == "gated_out" for d in decisions),
            "changed": changed}


JOB = ConversationLayer(LAYER, version, build, needs_vectors=True)
gate_events = make_task(celery, JOB)


def regate_tenant(conn, tenant_id: int, mode: str | None = None, conversation_id: str | None = None) -> dict:  # noqa: ANN001
    """Re-decide every stored event of a tenant (or one conversation) under its gate mode (after
    setting it to `mode`). Decisions come from stored signals (`gate.decide`); events never scored
    get novelty and salience now and a pending `gate` row so the worker adds pi. Conversations
    whose admitted set changed are marked pending for the conversation-level layers."""
    s = get_settings()
    if mode is not None:
        store.set_tenant_gate_mode(conn, tenant_id, mode)
    eff = store.tenant_gate_mode(conn, tenant_id, s.gate_mode_default)
    config = gate.GateConfig(mode=eff if eff != "off" else "tag")  # type: ignore[arg-type]
    rows = store.gate_signals(conn, tenant_id, conversation_id)
    by_conv: dict[str, list[EventRow]] = defaultdict(list)
    for r in rows:
        by_conv[r.conversation_id].append(r)
    updates, need_pi = [], defaultdict(list)
    counts = {"events": len(rows), "readmitted": 0, "gated_out": 0, "scored_now": 0, "unchanged": 0}
    changed_convs: set[str] = set()
    for conv, evs in by_conv.items():
        window: list[str] = []  # newest first: admitted contents so far (for events never scored)
        for r in evs:  # time order
            before = r.gate_status or "admitted"
            if eff == "off":
                status, upd = "admitted", {"gate_novelty": r.gate_novelty, "gate_salience": r.gate_salience,
                                           "gate_prediction_error": r.gate_prediction_error,
                                           "gate_score": r.gate_score}
            elif r.gate_novelty is None or r.gate_salience is None:
                d = gate.evaluate(r.content, window[: s.gate_ingest_neighbours], None, config)
                status = d.status
                upd = {"gate_novelty": d.novelty, "gate_salience": d.salience, "gate_prediction_error": None,
                       "gate_score": d.score}
                need_pi[conv].append(r.id)
                counts["scored_now"] += 1
            else:
                pi = r.gate_prediction_error
                d = gate.decide(r.gate_novelty, r.gate_salience, pi or 0.0, gate.classify_speech_act(r.content), config)
                status = d.status
                upd = {"gate_novelty": r.gate_novelty, "gate_salience": r.gate_salience,
                       "gate_prediction_error": pi, "gate_score": d.score}
                if pi is None:
                    need_pi[conv].append(r.id)
            if status == "admitted":
                window.insert(0, r.content)
            if status != before:
                changed_convs.add(conv)
                counts["readmitted" if status == "admitted" else "gated_out"] += 1
            else:
                counts["unchanged"] += 1
            updates.append({"id": r.id, **upd, "gate_status": status if (eff != "off" or r.gate_status) else None})
    store.set_gate(conn, updates)
    if eff != "off":
        store.mark_events_pending(conn, tenant_id, [pk for pks in need_pi.values() for pk in pks], [LAYER])
    store.mark_conversations_pending(conn, tenant_id, sorted(changed_convs), list(REBUILT_AFTER_FORGET))
    counts["conversations_rebuilt"] = len(changed_convs)
    counts["mode"] = eff
    return counts
