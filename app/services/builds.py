"""The builds of the conversation-level layers other than the graph (`app.services.graph_build`):
each takes one conversation's log (`Context`), computes with `app.domain`, and writes its slice
or its column group in the caller's transaction; it returns the run's stats.

- gate: the encoding gate's second half (True Memory §4.1 Stage 1), for tenants whose gate is on.
  At ingest the writer scores each event with what is cheap there: novelty (gzip cost against the
  conversation's latest admitted events) and salience (rules). The prediction error needs the
  embedding model twice per event, so it is computed here, after the embed layer stored the
  vectors: the event's nearest earlier admitted events are found by a pgvector nearest-neighbour
  query per event of the batch (`vectors.nearest_earlier`: the HNSW index or an exact scan, in the
  database; the conversation's vectors are not read) (novelty is re-measured against them), and pi = 1 - cos(emb(e [SEP] m1), emb(m1 [SEP] m1)) is
  computed for events that are not noise and whose nearest neighbour is on topic. Because pi >= 0,
  the score at ingest (pi taken as 0) is a lower bound: in `filter` mode an event admitted at
  ingest can only lose its place through the better neighbours, and an event held back at ingest
  (`gated_out`, not deleted) is re-admitted here when pi lifts it.
- consolidate (L4): in `app.services.consolidation_build` (it uses `new_rows`/`save_state` here).
- surprise (L5): sigma per event, in time order over the whole log, and each event's importance
  for heat, max(salience, sigma). The heat record keeps its access history across recomputes.
- engrams (L0): a profile per speaker (message count, topics, relationships, style features,
  standing attributes) and a 256-d style vector.
"""
from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Connection

from app.domain import gate
from app.domain.gate import salience
from app.domain.layers import assertions as assertion_rules
from app.domain.layers import engrams, surprise, timeparse
from app.domain.layers.events import LayerEvent, jsonable
from app.domain.layers.heat import HeatRecord, compute_heat, memory_created_at, with_importance
from app.services.layer_job import Context, ConversationLayer
from app.settings import get_settings
from app.storage import events as event_store
from app.storage import profiles as profile_store
from app.storage import layer_state
from app.storage import signals as signal_store
from app.storage import vectors
from app.storage.events import EventRow
from app.storage.tenants import tenant_gate_mode


# ---------------------------------------------------------------- gate

def build_gate(conn: Connection, ctx: Context) -> dict:
    s = get_settings()
    mode = tenant_gate_mode(conn, ctx.tenant_id, s.gate_mode_default)
    if mode == "off":  # nothing to score: the log is not read
        return {"mode": mode, "evaluated": 0,
                "log_events": layer_state.admitted_count(conn, ctx.tenant_id, ctx.conversation_id)}
    config = gate.GateConfig(mode=mode)  # type: ignore[arg-type]
    todo = pending_rows(conn, ctx)
    near = vectors.nearest_earlier(conn, ctx.tenant_id, ctx.conversation_id, s.embedding_model_name,
                                   [r.id for r in todo], config.max_neighbours, s.hnsw_ef_search)
    known = {r.id: r for r in todo}
    known |= event_store.get_events(conn, ctx.tenant_id, sorted({n for ns in near.values() for n, _ in ns} - set(known)))
    texts, neighbours, sims = [], [], []
    for r in todo:
        if r.id in near:  # the nearest earlier admitted events, from the index (never the whole matrix)
            neighbours.append([known[n].content for n, _ in near[r.id]])
            sims.append(near[r.id][0][1] if near[r.id] else None)
        else:  # no vector (should not happen after embed): the latest earlier events
            in_time = sorted(ctx.all_rows, key=lambda e: (e.occurred_at, e.id))
            before = [e.content for e in in_time if e.id < r.id and e.gate_status != "gated_out"]
            neighbours.append(before[::-1][: config.max_neighbours])
            sims.append(None)
        texts.append(r.content)
    from app.adapters.embedder import get_embedder

    decisions = gate.evaluate_batch(texts, neighbours, get_embedder().encode, config, sims) if texts else []
    rows, changed = [], 0
    for r, d in zip(todo, decisions):
        rows.append({"id": r.id, "gate_novelty": d.novelty, "gate_salience": d.salience,
                     "gate_prediction_error": d.prediction_error, "gate_score": d.score, "gate_status": d.status})
        changed += (r.gate_status or "admitted") != d.status
    event_store.set_gate(conn, rows)
    return {"mode": mode, "evaluated": len(rows), "gated_out": sum(d.status == "gated_out" for d in decisions),
            "changed": changed}


def pending_rows(conn: Connection, ctx: Context) -> list[EventRow]:
    """The run's pending events of the conversation, gated-out ones included, a version a correction
    superseded left out (as the log leaves it out), by pk: read by pk, not from the whole log."""
    rows = event_store.get_events(conn, ctx.tenant_id, list(ctx.pending))
    mine = [r for r in rows.values() if r.conversation_id == ctx.conversation_id]
    replaced = event_store.successors(conn, ctx.tenant_id, [r.id for r in mine])
    return sorted((r for r in mine if r.id not in replaced), key=lambda r: r.id)


GATE = ConversationLayer("gate", lambda: gate.LAYER_VERSION, build_gate, needs_vectors=True)


# ---------------------------------------------------------------- state (incremental runs)

def new_rows(conn: Connection, ctx: Context, stored: layer_state.StoredState | None) -> list[EventRow] | None:
    """The admitted pending events a stored state can be extended with, in time order; None when
    it cannot: no state, an event at or before the watermark (late, or re-gated), a correction, or
    a log that no longer holds exactly the events folded (an erasure)."""
    if stored is None:
        return None
    new = layer_state.admitted_rows(conn, ctx.tenant_id, ctx.conversation_id, ctx.pending)
    if stored.last_at is not None and any((r.occurred_at, r.id) <= (stored.last_at, stored.last_pk) for r in new):
        return None
    if any(r.supersedes_id is not None for r in new):
        return None  # a correction takes its earlier version out of the log
    if layer_state.folded_count(conn, ctx.tenant_id, ctx.conversation_id, stored.last_at, stored.last_pk) != stored.events:
        return None
    return new


def save_state(conn: Connection, ctx: Context, layer: str, events: int, last: EventRow | None,
               last_at: datetime | None, last_pk: int | None, data: dict) -> int:
    if last is not None:
        last_at, last_pk = last.occurred_at, last.id
    return layer_state.save(conn, ctx.tenant_id, ctx.conversation_id, layer, ctx.version, events, last_at, last_pk,
                            data)


# ---------------------------------------------------------------- surprise (L5) and importance

def _surprise_rows(rows: list[EventRow], scores: dict[int, surprise.SurpriseScore], records: dict[int, dict],
                   version: str) -> list[dict]:
    now = datetime.now(timezone.utc)
    out = []
    for r in rows:
        sc = scores[r.id]
        sal = r.gate_salience if r.gate_salience is not None else salience(r.content)[0]
        importance = round(max(sal, sc.sigma), 4)
        rec = with_importance(HeatRecord.from_dict(records[r.id]) if r.id in records else None,
                              memory_created_at(r.occurred_at, r.ingested_at), importance)
        state = compute_heat(rec, now)
        out.append({
            "event_pk": r.id, "surprise_version": version, "surprise": sc.sigma, "surprise_facts": sc.fact_count,
            "surprise_new_facts": sc.new_fact_count, "surprise_contradiction": sc.contradiction, "salience": sal,
            "importance": importance, "heat": state.heat, "heat_stage": state.stage.value,
            "heat_record": rec.to_dict(), "heat_updated_at": now,
        })
    return out


def _surprise_stats(rows: list[dict], run: str, log_events: int, state_bytes: int) -> dict:
    sig = [r["surprise"] for r in rows]
    return {"events": len(rows), "mean_sigma": round(sum(sig) / len(sig), 4) if sig else 0.0,
            "contradictions": sum(r["surprise_contradiction"] for r in rows), "run": run,
            "log_events": log_events, "state_bytes": state_bytes}


def build_surprise(conn: Connection, ctx: Context) -> dict:
    st = surprise.SurpriseState()
    scores = {int(s.event_id): s for s in surprise.score_conversation(ctx.events, st)}
    records = signal_store.heat_records(conn, ctx.tenant_id, ctx.conversation_id, lock=True)
    rows = _surprise_rows(ctx.rows, scores, records, ctx.version)
    signal_store.set_surprise_signals(conn, ctx.tenant_id, ctx.conversation_id, rows)
    speakers = sorted({r.speaker for r in ctx.rows if r.speaker})
    size = save_state(conn, ctx, "surprise", len(ctx.rows), ctx.rows[-1] if ctx.rows else None, None, None,
                      {"fold": st.to_dict(), "speakers": speakers})
    return _surprise_stats(rows, "full", len(ctx.rows), size)


def extend_surprise(conn: Connection, ctx: Context) -> dict | None:
    """The batch's events scored against the stored state (seen facts, current values): the same
    scores a full run gives them, because a full run is this fold over the whole log. An event by a
    speaker the state does not know needs a full run (speakers' names are known names up front)."""
    stored = layer_state.load(conn, ctx.tenant_id, ctx.conversation_id, "surprise", ctx.version)
    new = new_rows(conn, ctx, stored)
    if new is None or stored is None:
        return None
    speakers = set(stored.data["speakers"])
    if {r.speaker for r in new if r.speaker} - speakers:
        return None
    st = surprise.SurpriseState.from_dict(stored.data["fold"])
    if st.events != stored.events:
        return None
    events = [LayerEvent.of(r, seq=stored.events + i) for i, r in enumerate(new)]
    scores = {int(e.id): st.update(e) for e in events}
    records = {pk: rec for pk, (rec, _) in signal_store.heat_inputs(conn, ctx.tenant_id, [r.id for r in new]).items()
               if rec is not None}
    rows = _surprise_rows(new, scores, records, ctx.version)
    signal_store.add_surprise_signals(conn, ctx.tenant_id, ctx.conversation_id, rows)
    size = save_state(conn, ctx, "surprise", st.events, new[-1] if new else None, stored.last_at, stored.last_pk,
                      {"fold": st.to_dict(), "speakers": sorted(speakers)})
    return _surprise_stats(rows, "incremental", st.events, size)


def surprise_version() -> str:
    """Its facts come from the assertion rules and the time resolver: a change in either rebuilds it."""
    return f"{surprise.LAYER_VERSION}+{assertion_rules.LAYER_VERSION}+{timeparse.LAYER_VERSION}"


SURPRISE = ConversationLayer("surprise", surprise_version, build_surprise, extend=extend_surprise)


# ---------------------------------------------------------------- engrams (L0)

def profile_json(p: engrams.SpeakerProfile) -> dict:
    d = jsonable(p)
    d.pop("style_vector", None)
    d["topics"] = [{"term": t, "weight": w} for t, w in p.topics]
    return d


def _write_profiles(conn: Connection, ctx: Context, st: engrams.EngramState, last: EventRow | None,
                    last_at: datetime | None, last_pk: int | None, run: str) -> dict:
    profiles = st.profiles()
    profile_store.replace_profiles(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, [
        {"speaker": p.speaker, "message_count": p.message_count, "profile": profile_json(p), "style": p.style_vector}
        for p in profiles.values()
    ])
    size = save_state(conn, ctx, "engrams", st.events, last, last_at, last_pk, st.to_dict())
    return {"speakers": len(profiles), "run": run, "log_events": st.events, "state_bytes": size}


def build_engrams(conn: Connection, ctx: Context) -> dict:
    st = engrams.EngramState(list(dict.fromkeys(e.speaker for e in ctx.events if e.speaker)))
    for e in ctx.events:
        st.add(e)
    return _write_profiles(conn, ctx, st, ctx.rows[-1] if ctx.rows else None, None, None, "full")


def extend_engrams(conn: Connection, ctx: Context) -> dict | None:
    """The batch folded into the stored per-speaker counters; the profiles (a handful of rows) are
    rewritten from them. A new speaker needs a full run (the state tells names from topics by them)."""
    stored = layer_state.load(conn, ctx.tenant_id, ctx.conversation_id, "engrams", ctx.version)
    new = new_rows(conn, ctx, stored)
    if new is None or stored is None:
        return None
    st = engrams.EngramState.from_dict(stored.data)
    if st is None or st.events != stored.events or not st.knows([r.speaker for r in new]):
        return None
    for i, r in enumerate(new):
        st.add(LayerEvent.of(r, seq=stored.events + i))
    return _write_profiles(conn, ctx, st, new[-1] if new else None, stored.last_at, stored.last_pk, "incremental")


def engrams_version() -> str:
    """Standing attributes come from the assertion rules: a change there rebuilds the profiles."""
    return f"{engrams.LAYER_VERSION}+{assertion_rules.LAYER_VERSION}"


ENGRAMS = ConversationLayer("engrams", engrams_version, build_engrams, extend=extend_engrams)
