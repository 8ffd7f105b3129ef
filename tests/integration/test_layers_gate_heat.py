"""The encoding gate and heat wired to storage: tag and filter at ingest, then the worker adds the
prediction error; regate re-admits from stored signals; heat refresh and bump, also for an event no
layer has seen yet."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import text

from app.services.heat import bump_access, refresh_active, refresh_heat
from app.services.layers import process_conversation, run_for_pks
from app.storage.episodes import episodes_for
from app.storage.signals import signals_for
from app.storage.tenants import set_tenant_gate_mode
from tests.support import auth
from tests.integration.layers_wiring_support import (  # noqa: F401  (make_tenant: a fixture)
    post_conversation,
    build_all,
    make_tenant,
)


NOISY = [
    ("Ana", "I really love hiking in the mountains near Denver every weekend.", "2024-02-01T10:00:00Z"),
    ("Ben", "ok", "2024-02-01T10:01:00Z"),
    ("Ana", "I really love hiking in the mountains near Denver every weekend.", "2024-02-01T10:02:00Z"),
    ("Ana", "Actually, I meant Boulder, not Denver: the trails near Boulder.", "2024-02-01T10:03:00Z"),
    ("Ben", "lol", "2024-02-01T10:04:00Z"),
]


def _gate_of(client, key, pks):
    return [client.get(f"/v1/events/{pk}", headers=auth(key)).json()["gate"] for pk in pks]


def test_gate_tag_and_filter_at_ingest_then_the_worker_adds_prediction_error(client, make_tenant, engine):
    tag_tid, tag_key = make_tenant()
    flt_tid, flt_key = make_tenant()
    with engine.begin() as conn:
        set_tenant_gate_mode(conn, tag_tid, "tag")
        set_tenant_gate_mode(conn, flt_tid, "filter")
    tag_pks = post_conversation(client, tag_key, "g", NOISY)
    flt_pks = post_conversation(client, flt_key, "g", NOISY)
    tagged, filtered = _gate_of(client, tag_key, tag_pks), _gate_of(client, flt_key, flt_pks)
    # tag: every event admitted, signals stored; filter: noise held back (stored, not deleted)
    assert {g["status"] for g in tagged} == {"admitted"}
    assert all(g["novelty"] is not None and g["salience"] is not None for g in tagged)
    assert all(g["prediction_error"] is None for g in tagged)  # not yet: needs the vectors
    assert [g["status"] for g in filtered] == ["admitted", "gated_out", filtered[2]["status"], "admitted", "gated_out"]
    assert filtered[2]["novelty"] < filtered[0]["novelty"]  # the restated preference adds little ...
    assert filtered[2]["salience"] >= 0.5  # ... but is salient
    with engine.connect() as conn:
        st = {layer: n for layer, n in _pending(conn, flt_tid, "g").items()}
    assert st["gate"] == 5 and st["embed"] == 5
    # the gate layer waits for the vectors, then adds pi and re-decides
    assert run_for_pks("gate", flt_pks) == {"done": 0, "nothing": 0, "waiting": 1}
    assert run_for_pks("consolidate", flt_pks)["waiting"] == 1  # and the layers wait for the gate
    counts = build_all(flt_pks)
    assert counts["gate"]["done"] == 1 and counts["consolidate"]["done"] == 1
    after = _gate_of(client, flt_key, flt_pks)
    assert [g["status"] for g in after][1::3] == ["gated_out", "gated_out"]  # "ok", "lol"
    assert after[3]["status"] == "admitted" and after[3]["prediction_error"] is not None
    assert after[1]["prediction_error"] == 0.0  # noise has no prediction error
    with engine.connect() as conn:
        _, eps = episodes_for(conn, flt_tid, "g")
    held = {pk for pk, g in zip(flt_pks, after) if g["status"] == "gated_out"}
    assert held and not held & {pk for e in eps for pk in e.event_pks}  # gated-out events are not in layers


def _pending(conn, tid, conv):
    from app.storage.events import conversation_status

    return conversation_status(conn, tid, conv)[1]


def test_regate_readmits_from_stored_signals(client, make_tenant, engine):
    from typer.testing import CliRunner

    from app.cli import app as cli

    tid, key = make_tenant()
    with engine.begin() as conn:
        set_tenant_gate_mode(conn, tid, "filter")
        name = conn.execute(text("SELECT name FROM tenants WHERE id = :t"), {"t": tid}).scalar_one()
    pks = post_conversation(client, key, "rg", NOISY)
    build_all(pks)
    held = [pk for pk, g in zip(pks, _gate_of(client, key, pks)) if g["status"] == "gated_out"]
    assert len(held) >= 2
    r = CliRunner().invoke(cli, ["regate", "--tenant", name, "--mode", "off"])
    assert r.exit_code == 0, r.output
    assert f"readmitted {len(held)}" in r.output
    after = _gate_of(client, key, pks)
    assert {g["status"] for g in after} == {"admitted"}
    assert all(g["novelty"] is not None for g in after)  # signals kept
    with engine.connect() as conn:
        pending = _pending(conn, tid, "rg")
    assert pending["consolidate"] == len(pks) and pending["graph"] == len(pks)  # the layers rebuild
    build_all(pks)
    with engine.connect() as conn:
        _, eps = episodes_for(conn, tid, "rg")
    assert set(held) <= {pk for e in eps for pk in e.event_pks}
    r = CliRunner().invoke(cli, ["regate", "--tenant", name, "--mode", "filter"])
    assert r.exit_code == 0 and f"gated_out {len(held)}" in r.output, r.output
    assert [g["status"] for g in _gate_of(client, key, pks)].count("gated_out") == len(held)


def test_heat_refresh_and_bump(client, make_tenant, engine):
    tid, key = make_tenant()
    other, _ = make_tenant()
    now = datetime.now(timezone.utc)
    turns = [("Ana", t, (now - timedelta(minutes=5 - i)).isoformat()) for i, t in enumerate(
        ["We adopted a kitten called Miso yesterday!", "She sleeps all day.", "Vet visit on Friday at 3pm."])]
    pks = post_conversation(client, key, "heat", turns)
    assert run_for_pks("surprise", pks)["done"] == 1
    with engine.connect() as conn:
        before = signals_for(conn, tid, pks)
    assert all(s.heat is not None and s.access_count == 0 for s in before.values())
    with engine.begin() as conn:
        assert bump_access(conn, other, pks) == {}  # another tenant's events are not touched
        bumped = bump_access(conn, tid, [pks[1], pks[1], pks[2]])
    with engine.begin() as conn:
        bumped2 = bump_access(conn, tid, [pks[1]])
    with engine.connect() as conn:
        after = signals_for(conn, tid, pks)
    assert after[pks[1]].access_count == 2 and after[pks[2]].access_count == 1 and after[pks[0]].access_count == 0
    assert bumped2[pks[1]] > before[pks[1]].heat and bumped[pks[2]] > before[pks[2]].heat
    assert after[pks[1]].last_access_at is not None
    # beat: the refresh recomputes heat for active conversations; two days later it has cooled
    assert refresh_active(tenant_id=tid) == 3
    with engine.begin() as conn:
        n = refresh_heat(conn, now=now + timedelta(days=2), tenant_id=tid)
        cooled = signals_for(conn, tid, pks)
    assert n == 3
    assert cooled[pks[1]].heat < after[pks[1]].heat and cooled[pks[1]].heat_stage == "consolidated"
    assert min(s.heat for s in cooled.values()) >= 0.10  # the consolidated stage's floor
    # the accesses survive a recompute of the surprise layer (it only changes importance)
    assert process_conversation("surprise", tid, "heat", force=True).status == "done"
    with engine.connect() as conn:
        rec = conn.execute(text("SELECT heat_record FROM event_signals WHERE event_pk = :p"), {"p": pks[1]}).scalar_one()
    assert len(rec["accesses"]) == 3  # creation + two retrievals


def test_bump_creates_signals_for_an_event_no_layer_has_seen(client, tenant, engine):
    tid, key = tenant
    pks = post_conversation(client, key, "fresh", [("Ana", "Hello there, new memory.", "2024-05-01T10:00:00Z")])
    with engine.begin() as conn:
        heat = bump_access(conn, tid, pks)
    with engine.connect() as conn:
        s = signals_for(conn, tid, pks)[pks[0]]
    assert heat[pks[0]] == s.heat and s.access_count == 1 and s.importance is None
