"""Re-gating: re-decide stored events under a tenant's (new) encoding-gate mode, from the signals
stored with them (`app.domain.gate.decide`, no model needed). Re-admits events a stricter setting
held back, holds back what the new one rejects (nothing is deleted), and makes the conversations
whose admitted events changed pending for the conversation-level layers, which rebuild them.
"""
from __future__ import annotations

from collections import defaultdict

from sqlalchemy import Connection

from app.domain import gate
from app.domain.layer_registry import REBUILT_AFTER_FORGET
from app.settings import get_settings
from app.storage import events as event_store
from app.storage import outbox
from app.storage.events import EventRow
from app.storage.tenants import set_tenant_gate_mode, tenant_gate_mode


def regate_tenant(conn: Connection, tenant_id: int, mode: str | None = None, conversation_id: str | None = None) -> dict:
    """Re-decide every stored event of a tenant (or one conversation) under its gate mode (after
    setting it to `mode`). Decisions come from stored signals (`gate.decide`); events never scored
    get novelty and salience now and a pending `gate` row so the worker adds pi. Conversations
    whose admitted set changed are marked pending for the conversation-level layers."""
    s = get_settings()
    if mode is not None:
        set_tenant_gate_mode(conn, tenant_id, mode)
    eff = tenant_gate_mode(conn, tenant_id, s.gate_mode_default)
    config = gate.GateConfig(mode=eff if eff != "off" else "tag")  # type: ignore[arg-type]
    rows = event_store.tenant_log(conn, tenant_id, conversation_id)
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
    event_store.set_gate(conn, updates)
    if eff != "off":
        outbox.mark_events_pending(conn, tenant_id, [pk for pks in need_pi.values() for pk in pks], ["gate"])
    outbox.mark_conversations_pending(conn, tenant_id, sorted(changed_convs), list(REBUILT_AFTER_FORGET))
    counts["conversations_rebuilt"] = len(changed_convs)
    counts["mode"] = eff
    return counts
