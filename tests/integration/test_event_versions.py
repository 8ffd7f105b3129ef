"""Idempotent by default and no silent conflicts, through the HTTP API: the server derives an
`event_id` when none is given (a re-post creates nothing), a changed retry is a 409 naming the event
and its fields with nothing of the batch written, and a correction (`supersedes`) keeps the old
version verbatim, links the new one, and is what queries find. Issues #20 item 3 and #18 item 2."""
from __future__ import annotations

import json
import uuid
from datetime import datetime

from sqlalchemy import func, select, text
from typer.testing import CliRunner

from app.domain.event import derive_event_id
from app.storage.models import Event
from tests.support import auth


def post(client, key, *events):
    return client.post("/v1/events", json={"events": list(events)}, headers=auth(key))


def count_events(engine, tenant_id: int) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(Event).where(Event.tenant_id == tenant_id)).scalar_one()


def event_list(client, key, conv: str) -> list[dict]:
    r = client.get(f"/v1/conversations/{conv}/events", headers=auth(key))
    assert r.status_code == 200, r.text
    return r.json()["events"]


def ev(content: str, conv: str = "c1", speaker: str = "Ana", **kw) -> dict:
    return {"conversation_id": conv, "speaker": speaker, "content": content, **kw}


# ---------------------------------------------------------------- derived ids


def test_an_event_without_event_id_gets_a_derived_one_and_a_repost_creates_nothing(client, tenant, engine):
    tid, key = tenant
    a = ev("We moved to Denver last spring.", occurred_at="2024-03-02T10:00:00Z")
    b = ev("My dog Rex loves the snow.", speaker="Ben", occurred_at="2024-03-02T10:01:00Z")
    first = post(client, key, a, b).json()["results"]
    assert [r["status"] for r in first] == ["created", "created"]
    # the documented scheme: conversation, speaker, time (UTC) and content
    assert first[0]["event_id"] == derive_event_id("c1", "Ana", datetime.fromisoformat("2024-03-02T10:00:00+00:00"),
                                                   "We moved to Denver last spring.")
    assert first[0]["event_id"].startswith("sdk1-") and first[0]["event_id"] != first[1]["event_id"]
    # the same request again (a re-run example, a retry after a timeout): nothing new
    again = post(client, key, a, b).json()["results"]
    assert [r["status"] for r in again] == ["duplicate", "duplicate"]
    assert [r["id"] for r in again] == [r["id"] for r in first]
    # the same time written with another offset is the same instant, so the same event
    same_instant = dict(a, occurred_at="2024-03-02T11:00:00+01:00")
    assert post(client, key, same_instant).json()["results"][0]["status"] == "duplicate"
    # the stored event shows the id it got
    got = client.get(f"/v1/events/{first[0]['id']}", headers=auth(key)).json()
    assert got["event_id"] == first[0]["event_id"]
    assert count_events(engine, tid) == 2


def test_without_a_time_the_same_words_are_one_event_and_an_event_id_overrides(client, tenant, engine):
    tid, key = tenant
    plain = ev("ok", conv="c2")
    r1 = post(client, key, plain).json()["results"][0]
    r2 = post(client, key, plain).json()["results"][0]
    assert (r1["status"], r2["status"]) == ("created", "duplicate") and r1["id"] == r2["id"]
    # another speaker, conversation or wording is another event
    assert post(client, key, ev("ok", conv="c2", speaker="Ben")).json()["results"][0]["status"] == "created"
    assert post(client, key, ev("ok", conv="c3")).json()["results"][0]["status"] == "created"
    # the client's own ids keep repeats apart: the derived id is only the default
    mine = post(client, key, ev("ok", conv="c2", event_id="t7"), ev("ok", conv="c2", event_id="t8")).json()["results"]
    assert [r["status"] for r in mine] == ["created", "created"]
    assert [r["event_id"] for r in mine] == ["t7", "t8"]
    assert count_events(engine, tid) == 5


# ---------------------------------------------------------------- changed retries


def test_a_changed_retry_is_a_409_naming_the_event_and_fields_and_writes_nothing(client, tenant, engine):
    tid, key = tenant
    post(client, key, ev("I work at the bakery.", event_id="m1", occurred_at="2024-01-01T00:00:00Z"))
    changed = ev("I work at the bank.", speaker="Ben", event_id="m1", occurred_at="2024-01-01T00:00:00Z")
    r = post(client, key, ev("A new line.", event_id="m2"), changed)
    assert r.status_code == 409
    said = json.dumps(r.json())
    assert "'m1'" in said and "'c1'" in said  # the event and its conversation
    assert "content" in said and "speaker" in said  # the fields that differ
    assert "occurred_at" not in said  # ... and only those
    assert "nothing in this batch was written" in said
    # nothing of the batch: not the new event either, and the stored one is as it was
    assert count_events(engine, tid) == 1
    [stored] = event_list(client, key, "c1")
    assert (stored["event_id"], stored["speaker"], stored["content"]) == ("m1", "Ana", "I work at the bakery.")


# ---------------------------------------------------------------- corrections


def test_a_correction_keeps_the_old_version_verbatim_and_links_the_new_one(client, tenant, engine):
    tid, key = tenant
    old = post(client, key, ev("I live in Lisbon.", event_id="v1", occurred_at="2024-05-01T09:00:00Z"),
               ev("Nice city.", speaker="Ben", event_id="v1b", occurred_at="2024-05-01T09:01:00Z")).json()["results"][0]
    fix = ev("I live in Porto.", event_id="v2", supersedes="v1")
    r = post(client, key, fix)
    assert r.status_code == 200, r.text
    new = r.json()["results"][0]
    assert new["status"] == "created" and new["id"] != old["id"]
    # the old version is unchanged, and says what replaced it
    was = client.get(f"/v1/events/{old['id']}", headers=auth(key)).json()
    assert (was["content"], was["event_id"], was["superseded_by"], was["supersedes"]) == \
        ("I live in Lisbon.", "v1", "v2", None)
    now = client.get(f"/v1/events/{new['id']}", headers=auth(key)).json()
    assert (now["content"], now["supersedes"], now["superseded_by"]) == ("I live in Porto.", "v1", None)
    # without a time of its own a correction takes the time of the version it replaces
    assert now["occurred_at"] == was["occurred_at"]
    # the log keeps both, linked
    listed = {e["event_id"]: e for e in event_list(client, key, "c1")}
    assert set(listed) == {"v1", "v1b", "v2"} and listed["v1"]["superseded_by"] == "v2"
    # a retried correction creates nothing
    assert post(client, key, fix).json()["results"][0]["status"] == "duplicate"
    # the same event_id pointing elsewhere is a changed retry
    r = post(client, key, dict(fix, supersedes="v1b"))
    assert r.status_code == 409 and "supersedes" in json.dumps(r.json())
    # a second correction of the old version is refused: correct the newest one
    r = post(client, key, ev("A new line.", event_id="x1"), ev("I live in Faro.", event_id="v3", supersedes="v1"))
    assert r.status_code == 409
    said = json.dumps(r.json())
    assert "'v1'" in said and "'v2'" in said and "newest" in said
    assert count_events(engine, tid) == 3
    # correcting the newest version makes a chain
    r = post(client, key, ev("I live in Faro.", event_id="v3", supersedes="v2"))
    assert r.status_code == 200 and r.json()["results"][0]["status"] == "created"
    assert client.get(f"/v1/events/{new['id']}", headers=auth(key)).json()["superseded_by"] == "v3"
    assert count_events(engine, tid) == 4


def test_a_correction_of_nothing_is_a_409_and_writes_nothing(client, tenant, make_tenant, engine):
    tid, key = tenant
    post(client, key, ev("I live in Lisbon.", event_id="v1"))
    for bad in (ev("x", event_id="n1", supersedes="nope"),          # no such event
                ev("x", conv="other", event_id="n1", supersedes="v1"),  # another conversation
                ev("x", event_id="n1", supersedes="n1")):           # itself
        r = post(client, key, ev("A new line.", event_id="n0"), bad)
        assert r.status_code == 409, r.text
        assert "supersedes" in json.dumps(r.json())
    assert count_events(engine, tid) == 1
    # another tenant cannot correct this tenant's events
    _, other = make_tenant()
    r = post(client, other, ev("I live in Faro.", event_id="v2", supersedes="v1"))
    assert r.status_code == 409 and "no other event" in r.json()["detail"]
    was = event_list(client, key, "c1")
    assert [(e["content"], e["superseded_by"]) for e in was] == [("I live in Lisbon.", None)]


def test_a_correction_in_the_same_batch_as_its_old_version(client, tenant):
    _, key = tenant
    r = post(client, key, ev("I have two cats.", event_id="k1", occurred_at="2024-06-01T08:00:00Z"),
             ev("I have three cats.", event_id="k2", supersedes="k1"))
    assert r.status_code == 200, r.text
    listed = {e["event_id"]: e for e in event_list(client, key, "c1")}
    assert listed["k1"]["superseded_by"] == "k2" and listed["k2"]["supersedes"] == "k1"
    assert listed["k2"]["occurred_at"] == listed["k1"]["occurred_at"]


def test_queries_find_the_newest_version_only(client, tenant):
    _, key = tenant
    post(client, key, ev("My sister works as a pharmacist in Boston.", conv="q1", event_id="s1",
                         occurred_at="2024-02-01T10:00:00Z"),
         ev("Good to know.", conv="q1", speaker="Ben", event_id="s2", occurred_at="2024-02-01T10:01:00Z"))
    r = post(client, key, ev("My sister works as a nurse in Boston.", conv="q1", event_id="s1-fix", supersedes="s1"))
    assert r.status_code == 200, r.text
    out = client.post("/v1/query", headers=auth(key),
                      json={"query": "Where does my sister work in Boston?", "conversation_id": "q1"})
    assert out.status_code == 200, out.text
    body = out.json()
    ids = [it["event_id"] for it in body["items"]]
    assert "s1-fix" in ids and "s1" not in ids
    # the item says it is a correction, of which stored event
    [fixed] = [it for it in body["items"] if it["event_id"] == "s1-fix"]
    old = client.get(f"/v1/events/{fixed['supersedes_id']}", headers=auth(key)).json()
    assert (old["event_id"], old["superseded_by"]) == ("s1", "s1-fix")
    assert "nurse" in body["context"] and "pharmacist" not in body["context"]


# ---------------------------------------------------------------- import and restore


def test_reimporting_lines_without_event_ids_creates_nothing(tmp_path, engine):
    from app.cli import app as cli

    src, dst = f"h2-reimport-{uuid.uuid4().hex[:8]}", f"h2-restored-{uuid.uuid4().hex[:8]}"
    lines = [ev("We moved to Denver last spring.", conv="imp", occurred_at="2024-03-02T10:00:00Z"),
             ev("My dog Rex loves the snow.", conv="imp", speaker="Ben"),
             ev("I live in Porto.", conv="imp", event_id="p2", supersedes="p1"),
             ev("I live in Lisbon.", conv="imp", event_id="p1", occurred_at="2024-03-01T10:00:00Z")]
    path = tmp_path / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(cli, ["import", str(path), "--tenant", src])
    assert r.exit_code == 0 and "imported 4 events (0 already present)" in r.output, r.output
    r = runner.invoke(cli, ["import", str(path), "--tenant", src])
    assert r.exit_code == 0 and "imported 0 events (4 already present)" in r.output, r.output
    # and an export carries the correction's link, so a restore keeps it
    out = tmp_path / "out.jsonl"
    r = runner.invoke(cli, ["export", "--tenant", src, "--out", str(out)])
    assert r.exit_code == 0, r.output
    exported = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x.get("supersedes") for x in exported if x["event_id"] == "p2"] == ["p1"]
    assert all(x["event_id"] for x in exported)
    r = runner.invoke(cli, ["import", str(out), "--tenant", dst])
    assert r.exit_code == 0 and "imported 4 events" in r.output, r.output
    with engine.connect() as conn:
        links = conn.execute(text(
            "SELECT n.event_id, o.event_id FROM events n JOIN events o ON o.id = n.supersedes_id "
            "JOIN tenants t ON t.id = n.tenant_id WHERE t.name = :n"), {"n": dst}).all()
    assert [tuple(x) for x in links] == [("p2", "p1")]


# ---------------------------------------------------------------- the SDK


def test_the_sdk_corrects_an_event_and_reads_both_versions(client, tenant):
    import asyncio

    import httpx
    import pytest

    from app.api.main import app
    from palimpsest.client import AsyncPalimpsest, Conflict

    _, key = tenant

    async def run() -> None:
        async with AsyncPalimpsest("http://sdk.test", api_key=key, transport=httpx.ASGITransport(app=app)) as pal:
            first = await pal.add_event("sdk", "Ana", "I have two cats.", event_id="c1",
                                        occurred_at=datetime.fromisoformat("2024-07-01T08:00:00+00:00"))
            fix = await pal.correct_event("sdk", "c1", "Ana", "I have three cats.")
            assert fix.status == "created" and fix.event_id.startswith("sdk1-")
            assert (await pal.correct_event("sdk", "c1", "Ana", "I have three cats.")).status == "duplicate"
            old, new = await pal.get_event(first.id), await pal.get_event(fix.id)
            assert (old.content, old.superseded_by) == ("I have two cats.", fix.event_id)
            assert (new.supersedes, new.occurred_at) == ("c1", old.occurred_at)
            with pytest.raises(Conflict) as conflict:
                await pal.correct_event("sdk", "c1", "Ana", "I have four cats.")
            assert "newest" in str(conflict.value) and conflict.value.fields == ["events[0].supersedes"]
            with pytest.raises(Conflict) as missing:
                await pal.correct_event("sdk", "nope", "Ana", "I have four cats.")
            assert missing.value.status_code == 409 and "'nope'" in str(missing.value)

    asyncio.run(run())
