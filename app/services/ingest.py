"""Ingest: write a batch of verbatim events in one transaction, then hand the new ones to the
background layers. The API, the CLI's import, MCP (through the API) and restores all come here.

An event without an `event_id` gets the derived one (`app.domain.event.derive_event_id`: a hash
of conversation, speaker, time and content), so a re-post or a re-import creates nothing. A retry
of a known `event_id` maps to the stored row and creates nothing; the same `event_id` twice in one
batch is written once (`app.domain.event.plan_batch`). A correction names the `event_id` it
`supersedes`: it is written as a new version linked to the old one (`events.supersedes_id`), the
old row is never touched, and an event is superseded at most once (correct the newest version).
A retry that says something else under a known `event_id` (other content, speaker, time, ...)
raises `ChangedRetry` and the whole batch is rolled back: the log is never silently overwritten,
and a change is never silently dropped. Work is enqueued only after
the transaction commits, so a worker never sees an uncommitted event; if the broker is down the
outbox rows written with the events let the beat sweeper send it later. A tenant whose encoding
gate is off gets no `gate` outbox rows and no gate tasks (`layers_for`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from app.domain import gate
from app.domain.event import Event, changed_fields, plan_batch, with_event_id
from app.domain.layer_registry import LAYERS
from app.ports import Dispatcher
from app.settings import get_settings
from app.storage import events as store
from app.storage import outbox, tenants
from app.storage.db import get_engine

GATE_LAYER = "gate"  # the outbox layer that adds the prediction error once vectors exist


@dataclass(frozen=True)
class WriteResult:
    id: int
    event_id: str | None
    conversation_id: str
    status: str  # "created" | "duplicate"


class ChangedRetry(ValueError):
    """Events whose `event_id` is already taken by a different event: (position in the batch,
    event_id, the fields that differ). `conversations` maps a position to its conversation."""

    def __init__(self, changes: list[tuple[int, str, list[str]]], conversations: dict[int, str] | None = None):
        self.changes = changes
        self.conversations = conversations or {}
        first = changes[0]
        super().__init__(f"event_id {first[1]!r} already holds a different event ({', '.join(first[2])} differ)")


class BadCorrection(ValueError):
    """A `supersedes` that cannot be taken: (position in the batch, message). A conflict with the
    log as it is (409): the name matches no event, or that event was corrected already."""

    def __init__(self, problems: list[tuple[int, str]], status: int):
        self.problems, self.status = problems, status
        super().__init__(problems[0][1])


def ingest(tenant_id: int, batch: Sequence[Event], dispatcher: Dispatcher) -> list[WriteResult]:
    """Write the batch (one transaction), then enqueue the work of each layer it wrote outbox rows
    for (the gate's only when the tenant's gate is on), for the events it created."""
    try:
        with get_engine().begin() as conn:
            mode = tenants.tenant_gate_mode(conn, tenant_id, get_settings().gate_mode_default)
            layers = layers_for(mode)
            results = write_batch(conn, tenant_id, batch, layers, mode=mode)
    except IntegrityError as exc:  # two corrections of one event committed at once: the later one loses
        if "uq_events_supersedes" not in str(exc.orig):
            raise
        raise BadCorrection([(0, "an event this batch corrects was corrected at the same time by another "
                                 "request; read it again and correct the newest version")], 409) from None
    owners = {r.id: (tenant_id, r.conversation_id) for r in results if r.status == "created"}
    created = list(owners)
    for layer in layers:
        dispatcher.enqueue(layer, created, owners)
    return results


def layers_for(gate_mode: str, layers: Sequence[str] = LAYERS) -> list[str]:
    """Those of `layers` (default: all) an event of a tenant with this gate mode gets outbox rows
    (and tasks) for: less the gate's when the gate is off (no layer then waits for it: `DEPENDS`
    counts pending rows)."""
    return [layer for layer in layers if gate_mode != "off" or layer != GATE_LAYER]


def write_batch(
    conn: Connection, tenant_id: int, batch: Sequence[Event], layers: list[str], now: datetime | None = None,
    mode: str | None = None,
) -> list[WriteResult]:
    """Write a batch inside the caller's transaction, with an outbox row per created event and layer
    (nothing is enqueued: see `ingest`); returns one result per input, in order. `mode`: the
    tenant's gate mode when the caller read it already."""
    now = now or datetime.now(timezone.utc)
    batch = [with_event_id(ev) for ev in batch]
    to_write, repeats = plan_batch(batch)
    s = get_settings()
    mode = mode or tenants.tenant_gate_mode(conn, tenant_id, s.gate_mode_default)
    decisions: dict[int, gate.GateDecision] = {}
    layers = layers_for(mode, layers)
    if mode != "off":
        decisions = gate_at_ingest(conn, tenant_id, batch, to_write, mode, now, s.gate_ingest_neighbours)
    ids = store.reserve_ids(conn, len(to_write))
    targets = resolve_supersedes(conn, tenant_id, batch, dict(zip(to_write, ids)))
    # a correction without a time of its own takes the time of the version it replaces
    pk_pos = dict(zip(ids, to_write))
    target_rows = store.get_events(conn, tenant_id, [t for t in targets.values() if t not in pk_pos])
    target_time = {i: target_rows[t].occurred_at if t in target_rows else (batch[pk_pos[t]].occurred_at or now)
                   for i, t in targets.items()}
    rows = []
    for pk, i in zip(ids, to_write):
        ev = batch[i]
        d = decisions.get(i)
        gate_cols = {} if d is None else {
            "gate_novelty": d.novelty, "gate_salience": d.salience, "gate_prediction_error": None,
            "gate_score": d.score, "gate_status": d.status,
        }
        rows.append(
            {
                **gate_cols,
                "id": pk,
                "tenant_id": tenant_id,
                "conversation_id": ev.conversation_id,
                "event_id": ev.event_id,
                "speaker": ev.speaker,
                "recipient": ev.recipient,
                "role": ev.role,
                "content": ev.content,
                "occurred_at": ev.occurred_at or target_time.get(i) or now,
                "metadata_": ev.metadata or {},
                "supersedes_id": targets.get(i),
            }
        )
    inserted = store.insert_events(conn, rows)
    conflicts = [(batch[i].conversation_id, batch[i].event_id) for pk, i in zip(ids, to_write) if pk not in inserted]
    existing = store.find_by_client_ids(conn, tenant_id, conflicts)

    stored = store.get_events(conn, tenant_id, list(existing.values()))
    changes = []
    for pk, i in zip(ids, to_write):
        if pk not in inserted:
            ev = batch[i]
            was = stored[existing[(ev.conversation_id, ev.event_id)]]
            diff = changed_fields(ev, was)
            if ev.supersedes is not None and targets.get(i) != was.supersedes_id:
                diff.append("supersedes")
            if diff:
                changes.append((i, ev.event_id, diff))
    for i, j in repeats.items():
        diff = changed_fields(batch[i], batch[j])
        if diff:
            changes.append((i, batch[i].event_id, diff))
    if changes:
        raise ChangedRetry(sorted(changes), {i: batch[i].conversation_id for i, _, _ in changes})

    results: dict[int, WriteResult] = {}
    for pk, i in zip(ids, to_write):
        ev = batch[i]
        if pk in inserted:
            results[i] = WriteResult(pk, ev.event_id, ev.conversation_id, "created")
        else:
            results[i] = WriteResult(existing[(ev.conversation_id, ev.event_id)], ev.event_id, ev.conversation_id, "duplicate")
    for i, j in repeats.items():
        r = results[j]
        results[i] = WriteResult(r.id, r.event_id, r.conversation_id, "duplicate")
    outbox.add_indexing_rows(
        conn, tenant_id, [(r.id, r.conversation_id) for r in results.values() if r.status == "created"], layers
    )
    return [results[i] for i in range(len(batch))]


def resolve_supersedes(conn: Connection, tenant_id: int, batch: list[Event], pk_of: dict[int, int]) -> dict[int, int]:
    """Position -> pk of the event it corrects, for the events of the batch that name one
    (`supersedes`: an `event_id` of the same conversation, stored or earlier in this batch).

    Raises `BadCorrection` when the name matches no other event of the conversation, or that event
    was corrected already by another version (a correction goes to the newest version).
    `pk_of`: the pk reserved for each position that will be written.
    """
    asks = {i: ev for i, ev in enumerate(batch) if ev.supersedes is not None and i in pk_of}
    if not asks:
        return {}
    in_batch = {(batch[i].conversation_id, batch[i].event_id): pk for i, pk in pk_of.items()}
    stored = store.find_by_client_ids(conn, tenant_id, sorted({(ev.conversation_id, ev.supersedes) for ev in asks.values()}))
    missing, out = [], {}
    for i, ev in asks.items():
        key = (ev.conversation_id, ev.supersedes)
        target = stored.get(key, in_batch.get(key))
        if ev.supersedes == ev.event_id or target is None:
            missing.append((i, f"supersedes {ev.supersedes!r}: no other event with that event_id in conversation "
                               f"{ev.conversation_id!r}"))
        else:
            out[i] = target
    if missing:
        raise BadCorrection(missing, 409)
    taken = store.successors(conn, tenant_id, list(out.values()))
    by_key = {(batch[i].conversation_id, batch[i].event_id): i for i in out}
    clashes, claimed = [], {}
    for i, target in sorted(out.items()):
        ev = batch[i]
        holder = taken.get(target)
        if holder is not None and holder[1] != ev.event_id:
            clashes.append((i, f"event {ev.supersedes!r} in conversation {ev.conversation_id!r} was corrected "
                               f"already by {holder[1]!r}; correct the newest version"))
        elif target in claimed and batch[claimed[target]].event_id != ev.event_id:
            clashes.append((i, f"event {ev.supersedes!r} is corrected twice in this batch "
                               f"(also by {batch[claimed[target]].event_id!r})"))
        claimed.setdefault(target, by_key[(ev.conversation_id, ev.event_id)])
    if clashes:
        raise BadCorrection(clashes, 409)
    return out


def gate_at_ingest(
    conn: Connection, tenant_id: int, batch: list[Event], positions: list[int], mode: str, now: datetime, n: int
) -> dict[int, gate.GateDecision]:
    """The encoding gate before the write returns: novelty and salience, which are cheap.

    Each event is measured against the `n` latest admitted events of its conversation before it
    (the stored ones, then earlier events of this batch, in time order). The prediction error needs
    the embedding model twice per event, so it is left to the `gate` layer after the embed layer
    (workers/gate.py); until then it counts as 0, which makes this score a lower bound. In `filter`
    mode an event below the bar is stored with status `gated_out` (verbatim, never deleted) and
    re-decided there.
    """
    config = gate.GateConfig(mode=mode)  # type: ignore[arg-type]
    convs = sorted({batch[i].conversation_id for i in positions})
    window = {c: list(v) for c, v in store.recent_contents(conn, tenant_id, convs, n).items()}
    out: dict[int, gate.GateDecision] = {}
    for i in sorted(positions, key=lambda i: (batch[i].occurred_at or now, i)):
        ev = batch[i]
        recent = window.setdefault(ev.conversation_id, [])  # newest first
        d = gate.evaluate(ev.content, recent[:n], None, config)
        out[i] = d
        if d.status == "admitted":
            recent.insert(0, ev.content)
    return out
