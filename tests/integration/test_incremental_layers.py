"""Incremental layers (#18 item 4): a conversation posted in several batches, each batch built by the
layers as the worker builds it (the surprise and engrams layers extend their stored state with the
batch alone), ends with exactly what a full rebuild from the log computes (`palimpsest rebuild`'s
function): the same surprise scores per event, the same speaker profiles and style vectors through
the API, the same stored state. Late events (earlier than what was folded) and a speaker who joins
later make a run recompute in full, and the result is still the rebuild's.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from app.services.layers import embed_pending, rebuild, run_for_pks
from app.storage import layer_state
from app.storage.layer_runs import runs_for
from tests.support import auth

LAYERS = ("gate", "consolidate", "surprise", "engrams", "graph")
STATEFUL = ("surprise", "engrams")
T0 = datetime(2023, 5, 8, 9, 0, tzinfo=timezone.utc)

LINES = [
    ("Ana", "I live in Boston and I work at Google as an engineer."),
    ("Ben", "Nice! My sister Clara lives in Boston too. She loves hiking."),
    ("Ana", "We ran the Boston Marathon last Saturday with my brother, 42 km!"),
    ("Ben", "I adopted a dog named Rex because my old cat died."),
    ("Ana", "Ben, I like jazz and I like climbing. Do you like jazz?"),
    ("Ben", "I like jazz too. Rex likes the park on Sundays."),
    ("Ana", "Big news: we moved to Denver last month!"),
    ("Ben", "Wow, Denver! Did you leave Boston because of a new job?"),
    ("Ana", "Yes, I got a job at Stripe, so we relocated to Denver."),
    ("Ben", "Ana, my favourite book is Dune. What is yours?"),
    ("Ana", "I don't like climbing anymore, my knee hurts since March 3, 2023."),
    ("Ben", "Clara is getting married in June in Lisbon."),
    ("Ana", "I no longer work at Stripe. I work at Figma now."),
    ("Ben", "Congrats! I still live in Portland with Rex :)"),
    ("Ana", "Actually we moved to Austin, Denver was too cold."),
    ("Ben", "Austin is great. My brother Tom lives there, he is a nurse."),
]


def turns(n: int, start: int = 0, speakers: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    out = []
    for i in range(start, start + n):
        speaker, line = LINES[i % len(LINES)]
        out.append((speakers[i % len(speakers)] if speakers else speaker, f"{line} ({i})"))
    return out


def post(client, key, conv: str, items: list[tuple[str, str, datetime]], first: int) -> list[int]:
    events = [{"conversation_id": conv, "event_id": f"e{first + i}", "speaker": s, "content": c,
               "occurred_at": t.isoformat()} for i, (s, c, t) in enumerate(items)]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["results"]]


def build(pks: list[int]) -> None:
    embed_pending(pks)
    for layer in LAYERS:
        run_for_pks(layer, pks)


def last_run(engine, tid: int, conv: str, layer: str) -> dict:
    with engine.connect() as conn:
        return next(r for r in runs_for(conn, tid, conv, layer)).stats


def snapshot(engine, client, key, tid: int, conv: str) -> dict:
    """What the stateful layers produced: per event its surprise group (minus heat, which moves with
    the clock), the speakers as the API returns them (style vectors included), the stored states."""
    with engine.connect() as conn:
        signals = [tuple(r) for r in conn.execute(text(
            "SELECT event_pk, surprise_version, surprise, surprise_facts, surprise_new_facts, surprise_contradiction, "
            "salience, importance FROM event_signals WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1"),
            {"t": tid, "c": conv})]
        states = {}
        for layer in STATEFUL:
            versions = [v for (v,) in conn.execute(text(
                "SELECT layer_version FROM layer_state WHERE tenant_id = :t AND conversation_id = :c AND layer = :l"),
                {"t": tid, "c": conv, "l": layer})]
            assert len(versions) == 1, (layer, versions)
            st = layer_state.load(conn, tid, conv, layer, versions[0], lock=False)
            states[layer] = (st.events, st.last_at, st.last_pk, st.data)
    r = client.get(f"/v1/conversations/{conv}/speakers", params={"include_vectors": "true"}, headers=auth(key))
    assert r.status_code == 200, r.text
    return {"signals": signals, "speakers": r.json()["speakers"], "states": states}


def rebuilt(engine, client, key, tid: int, conv: str) -> dict:
    for layer in STATEFUL:
        rebuild(layer, tid, conv)
        assert last_run(engine, tid, conv, layer)["run"] == "full"
    return snapshot(engine, client, key, tid, conv)


def test_batches_extend_the_state_and_end_equal_to_a_full_rebuild(engine, client, tenant):
    tid, key = tenant
    conv = "grow"
    when = [T0 + timedelta(minutes=3 * i) + (timedelta(hours=8) if i >= 20 else timedelta()) for i in range(40)]
    lines = turns(40)
    runs = []
    for b in range(0, 40, 8):  # five batches
        pks = post(client, key, conv, [(s, c, when[b + i]) for i, (s, c) in enumerate(lines[b:b + 8])], b)
        build(pks)
        runs.append({layer: last_run(engine, tid, conv, layer) for layer in STATEFUL})
    # the first batch has no state to extend; every later one extends it with its 8 events alone
    assert [r["surprise"]["run"] for r in runs] == ["full"] + ["incremental"] * 4
    assert [r["engrams"]["run"] for r in runs] == ["full"] + ["incremental"] * 4
    assert [r["surprise"]["events"] for r in runs] == [8] * 5  # events scored by the run
    assert [r["engrams"]["log_events"] for r in runs] == [8, 16, 24, 32, 40]
    grown = snapshot(engine, client, key, tid, conv)
    assert len(grown["signals"]) == 40 and all(s[2] is not None for s in grown["signals"])
    assert {p["speaker"]: p["message_count"] for p in grown["speakers"]} == {"Ana": 20, "Ben": 20}
    ana = next(p for p in grown["speakers"] if p["speaker"] == "Ana")
    assert ana["attributes"]["lives_in"] == ["Denver"]  # Boston superseded by Denver, folded batch by batch
    assert rebuilt(engine, client, key, tid, conv) == grown


def test_a_late_event_or_a_new_speaker_recomputes_and_still_equals_the_rebuild(engine, client, tenant):
    tid, key = tenant
    conv = "late"
    lines = turns(24)
    build(post(client, key, conv, [(s, c, T0 + timedelta(minutes=i)) for i, (s, c) in enumerate(lines[:12])], 0))
    # an event said before the last one folded: the fold cannot take it, the run recomputes
    build(post(client, key, conv, [("Ben", "Before all that, I lived in Chicago. (late)", T0 - timedelta(days=1))], 12))
    assert {last_run(engine, tid, conv, layer)["run"] for layer in STATEFUL} == {"full"}
    # a speaker the state does not know yet (names are told apart from topics by the speakers)
    build(post(client, key, conv, [("Clara", "Hi Ana, hi Ben! I live in Lisbon now.", T0 + timedelta(hours=1))], 13))
    assert {last_run(engine, tid, conv, layer)["run"] for layer in STATEFUL} == {"full"}
    # and then it extends again
    build(post(client, key, conv, [(s, c, T0 + timedelta(hours=2, minutes=i))
                                   for i, (s, c) in enumerate(lines[12:24])], 14))
    assert {last_run(engine, tid, conv, layer)["run"] for layer in STATEFUL} == {"incremental"}
    grown = snapshot(engine, client, key, tid, conv)
    assert {p["speaker"] for p in grown["speakers"]} == {"Ana", "Ben", "Clara"}
    assert rebuilt(engine, client, key, tid, conv) == grown


def test_an_erased_event_under_the_watermark_makes_the_next_run_recompute(engine, client, tenant):
    tid, key = tenant
    conv = "erased"
    lines = turns(16)
    pks = post(client, key, conv, [(s, c, T0 + timedelta(minutes=i)) for i, (s, c) in enumerate(lines[:8])], 0)
    build(pks)
    with engine.begin() as conn:  # an event gone from the log (as an erasure removes it)
        conn.execute(text("DELETE FROM events WHERE id = :pk"), {"pk": pks[2]})
    build(post(client, key, conv, [(s, c, T0 + timedelta(hours=1, minutes=i))
                                   for i, (s, c) in enumerate(lines[8:16])], 8))
    assert {last_run(engine, tid, conv, layer)["run"] for layer in STATEFUL} == {"full"}
    grown = snapshot(engine, client, key, tid, conv)
    assert sum(p["message_count"] for p in grown["speakers"]) == 15
    assert rebuilt(engine, client, key, tid, conv) == grown


def test_a_correction_takes_its_old_version_out_and_equals_the_rebuild(engine, client, tenant):
    tid, key = tenant
    conv = "corrected"
    lines = turns(16)
    build(post(client, key, conv, [(s, c, T0 + timedelta(minutes=i)) for i, (s, c) in enumerate(lines[:8])], 0))
    fix = {"conversation_id": conv, "event_id": "e0-fixed", "supersedes": "e0", "speaker": "Ana",
           "content": "I live in Chicago and I work at Google as an engineer.",
           "occurred_at": (T0 + timedelta(hours=1)).isoformat()}
    r = client.post("/v1/events", json={"events": [fix]}, headers=auth(key))
    assert r.status_code == 200, r.text
    pks = [x["id"] for x in r.json()["results"]]
    pks += post(client, key, conv, [(s, c, T0 + timedelta(hours=2, minutes=i))
                                    for i, (s, c) in enumerate(lines[8:16])], 8)
    build(pks)
    assert {last_run(engine, tid, conv, layer)["run"] for layer in STATEFUL} == {"full"}
    grown = snapshot(engine, client, key, tid, conv)
    assert {p["speaker"]: p["message_count"] for p in grown["speakers"]} == {"Ana": 8, "Ben": 8}  # e0 replaced
    assert rebuilt(engine, client, key, tid, conv) == grown


@pytest.mark.parametrize("layer", STATEFUL)
def test_incremental_can_be_switched_off(engine, client, tenant, layer):
    from app.services.layers import process_conversation

    tid, key = tenant
    conv = f"off-{layer}"
    lines = turns(8)
    build(post(client, key, conv, [(s, c, T0 + timedelta(minutes=i)) for i, (s, c) in enumerate(lines[:4])], 0))
    pks = post(client, key, conv, [(s, c, T0 + timedelta(hours=1, minutes=i)) for i, (s, c) in enumerate(lines[4:])], 4)
    embed_pending(pks)
    for other in ("gate", "consolidate", "graph"):
        run_for_pks(other, pks)
    out = process_conversation(layer, tid, conv, incremental=False)
    assert out.status == "done" and out.stats["run"] == "full" and out.events == 8
