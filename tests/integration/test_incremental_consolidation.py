"""The consolidation layer built batch by batch (#18 item 4) ends with what a full rebuild from the
log computes (`palimpsest rebuild`'s function), as a user reads it: /episodes (boundaries, events,
summaries), /timeline (assertions, superseded-by links, contradictions), and per event its episode
and the later event that superseded it. The conversation has 6-hour gaps, topic shifts, a move and
a job change (supersessions), a cancelled plan; batches are split at random; a late event, a
correction and an erased event make the next run recompute in full, and it still equals the rebuild.
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from app.services.layers import embed_pending, rebuild, run_for_pks
from app.storage.layer_runs import runs_for
from tests.support import auth

T0 = datetime(2023, 5, 8, 9, 0, tzinfo=timezone.utc)
LAYERS = ("gate", "consolidate", "graph")

BREAD = [
    ("Ann", "I baked sourdough bread this morning with my new starter."),
    ("Bob", "Nice! How long did you let the dough proof?"),
    ("Ann", "About twelve hours in the fridge, then two hours at room temperature."),
    ("Bob", "My loaves always come out flat, maybe my oven is not hot enough."),
    ("Ann", "Preheat a Dutch oven to 250 degrees and bake the bread covered for twenty minutes."),
    ("Bob", "I will try that recipe with whole wheat flour this weekend."),
    ("Ann", "Add a little more water, whole wheat flour soaks it up."),
    ("Bob", "Thanks, I love the smell of fresh bread in the kitchen."),
]
CARS = [
    ("Bob", "By the way, my car's transmission broke down on the highway yesterday."),
    ("Ann", "Oh no, did you have to get the car towed to a mechanic?"),
    ("Bob", "Yes, the mechanic says replacing the gearbox costs 3,000 dollars."),
    ("Ann", "That is expensive, maybe a used transmission from a junkyard is cheaper."),
    ("Bob", "The garage also found worn brake pads and a leaking radiator."),
    ("Ann", "Get a second quote from another auto repair shop before paying."),
    ("Bob", "Good idea, I'll call the dealership service center tomorrow."),
    ("Ann", "Ask them whether the car warranty covers the engine parts."),
]
LIFE = [
    ("Ann", "I live in Boston and I work at Google as an engineer."),
    ("Bob", "My sister Clara lives in Boston too."),
    ("Ann", "We are planning a trip to Lisbon in June."),
    ("Ann", "Big news: we moved to Denver last month!"),
    ("Bob", "Wow, Denver! Did you leave Boston because of a new job?"),
    ("Ann", "Yes, I got a job at Stripe, so we relocated to Denver."),
    ("Ann", "We called off the trip, the flights were too expensive."),
    ("Ann", "I no longer work at Stripe. I work at Figma now."),
    ("Bob", "I still live in Portland with my dog Rex."),
    ("Ann", "Actually we moved to Austin, Denver was too cold."),
]


def script() -> list[tuple[str, str, datetime]]:
    """48 events: bread, cars, life (no gaps), then 8 hours later bread and life again, then a 7-hour
    gap and cars."""
    out, t = [], T0
    for block, jump in ((BREAD, None), (CARS, None), (LIFE, None), (BREAD, timedelta(hours=8)),
                        (LIFE[:6], None), (CARS, timedelta(hours=7))):
        if jump:
            t += jump
        for s, c in block:
            out.append((s, f"{c} ({len(out)})", t))
            t += timedelta(minutes=2)
    return out


def post(client, key, conv: str, items, first: int) -> list[int]:
    events = [{"conversation_id": conv, "event_id": f"e{first + i}", "speaker": s, "content": c,
               "occurred_at": t.isoformat()} for i, (s, c, t) in enumerate(items)]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["results"]]


def build(pks: list[int]) -> None:
    embed_pending(pks)
    for layer in LAYERS:
        run_for_pks(layer, pks)


def last_run(engine, tid: int, conv: str) -> dict:
    with engine.connect() as conn:
        return next(r for r in runs_for(conn, tid, conv, "consolidate")).stats


def read(engine, client, key, tid: int, conv: str) -> dict:
    """What a user reads of the layer, and the per-event consolidation signals."""
    h = auth(key)
    eps = client.get(f"/v1/conversations/{conv}/episodes", params={"limit": 1000}, headers=h)
    tl = client.get(f"/v1/conversations/{conv}/timeline", params={"limit": 1000}, headers=h)
    assert eps.status_code == 200 and tl.status_code == 200, (eps.text, tl.text)
    assert eps.json()["next_cursor"] is None and tl.json()["next_cursor"] is None
    with engine.connect() as conn:
        signals = [tuple(r) for r in conn.execute(text(
            "SELECT event_pk, consolidation_version, episode_index, superseded_by_event_pk FROM event_signals "
            "WHERE tenant_id = :t AND conversation_id = :c ORDER BY 1"), {"t": tid, "c": conv})]
    return {"episodes": eps.json()["episodes"], "assertions": tl.json()["assertions"],
            "contradictions": sorted(tl.json()["contradictions"], key=lambda c: c["id"]), "signals": signals}


def rebuilt(engine, client, key, tid: int, conv: str) -> dict:
    rebuild("consolidate", tid, conv)
    assert last_run(engine, tid, conv)["run"] == "full"
    return read(engine, client, key, tid, conv)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_batches_end_equal_to_a_full_rebuild(engine, client, tenant, seed):
    tid, key = tenant
    conv = f"grow-{seed}"
    items = script()
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(items)), 6))
    runs = []
    for a, b in zip([0, *cuts], [*cuts, len(items)]):
        build(post(client, key, conv, items[a:b], a))
        runs.append(last_run(engine, tid, conv)["run"])
    assert runs == ["full"] + ["incremental"] * 6
    grown = read(engine, client, key, tid, conv)
    # the conversation exercises what the comparison is about
    assert {e["boundary"] for e in grown["episodes"]} == {"start", "gap", "topic"}
    assert [i for e in grown["episodes"] for i in e["event_ids"]] == [s[0] for s in grown["signals"]]
    assert {c["kind"] for c in grown["contradictions"]} == {"update", "retraction"}
    lives = [a for a in grown["assertions"] if a["entity"] == "Ann" and a["attribute"] == "lives_in"]
    # Boston -> Denver -> Austin -> (8 hours later) Boston -> Denver: only the last one stands
    assert {a["value"] for a in lives if a["superseded_by"] is None} == {"Denver"}
    assert any(a["value"] == "Austin" and a["superseded_by"] for a in lives)
    assert any(s[3] is not None for s in grown["signals"])  # superseded-by events recorded
    assert rebuilt(engine, client, key, tid, conv) == grown
    # the graph's episode nodes (a full recompute per batch) are the episodes the layer extended
    with engine.connect() as conn:
        nodes = conn.execute(text(
            "SELECT (data->>'index')::int, data->>'boundary', (data->>'events')::int FROM graph_nodes "
            "WHERE tenant_id = :t AND conversation_id = :c AND kind = 'episode' ORDER BY 1"), {"t": tid, "c": conv}).all()
    assert [tuple(n) for n in nodes] == [(e["index"], e["boundary"], len(e["event_ids"])) for e in grown["episodes"]]


def test_late_corrected_or_erased_events_recompute_and_equal_the_rebuild(engine, client, tenant):
    tid, key = tenant
    conv = "late"
    items = script()
    pks = post(client, key, conv, items[:20], 0)
    build(pks)
    build(post(client, key, conv, items[20:30], 20))
    assert last_run(engine, tid, conv)["run"] == "incremental"
    # an event said before the last one folded
    build(post(client, key, conv, [("Bob", "Before all that, I lived in Chicago. (late)", T0 - timedelta(days=1))], 30))
    assert last_run(engine, tid, conv)["run"] == "full"
    # a correction of an earlier event
    fix = {"conversation_id": conv, "event_id": "e0-fixed", "supersedes": "e0", "speaker": "Ann",
           "content": "I live in Chicago and I work at Google as an engineer.",
           "occurred_at": (items[29][2] + timedelta(minutes=1)).isoformat()}
    r = client.post("/v1/events", json={"events": [fix]}, headers=auth(key))
    assert r.status_code == 200, r.text
    build([x["id"] for x in r.json()["results"]])
    assert last_run(engine, tid, conv)["run"] == "full"
    # an event gone from the log under the watermark (as an erasure removes it)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM events WHERE id = :pk"), {"pk": pks[3]})
    build(post(client, key, conv, [(s, c, t + timedelta(minutes=5)) for s, c, t in items[31:40]], 31))
    assert last_run(engine, tid, conv)["run"] == "full"
    build(post(client, key, conv, [(s, c, t + timedelta(minutes=5)) for s, c, t in items[40:]], 40))
    assert last_run(engine, tid, conv)["run"] == "incremental"
    grown = read(engine, client, key, tid, conv)
    assert rebuilt(engine, client, key, tid, conv) == grown


def test_an_incremental_run_rewrites_only_the_open_episodes(engine, client, tenant):
    """Closed episodes keep their rows (ids included): the batch touched the open tail only."""
    tid, key = tenant
    conv = "rows"
    items = script()
    build(post(client, key, conv, items[:40], 0))
    with engine.connect() as conn:
        before = dict(conn.execute(text("SELECT idx, id FROM episodes WHERE tenant_id = :t AND conversation_id = :c"),
                                   {"t": tid, "c": conv}).all())
    build(post(client, key, conv, items[40:44], 40))
    assert last_run(engine, tid, conv)["run"] == "incremental"
    with engine.connect() as conn:
        after = dict(conn.execute(text("SELECT idx, id FROM episodes WHERE tenant_id = :t AND conversation_id = :c"),
                                  {"t": tid, "c": conv}).all())
    kept = [i for i in before if after.get(i) == before[i]]
    assert kept and len(kept) >= len(before) - 2
