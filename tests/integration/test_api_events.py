"""Ingest and read over HTTP: idempotent retries, 422s naming the field, cursor paging."""
from __future__ import annotations

import threading

from sqlalchemy import func, select

from app.storage.models import Event, IndexingState
from tests.support import auth


def post(client, key, events):
    return client.post("/v1/events", json={"events": events}, headers=auth(key))


def turn(i: int, conv: str = "c1", **kw) -> dict:
    return {"conversation_id": conv, "event_id": f"e{i}", "speaker": "Ana", "content": f"turn {i}",
            "occurred_at": f"2024-01-01T00:00:{i:02d}Z", **kw}


def count_events(engine, tenant_id: int) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(Event).where(Event.tenant_id == tenant_id)).scalar_one()


def test_batch_write_and_idempotent_retry(client, tenant, engine):
    tid, key = tenant
    r = post(client, key, [turn(1), turn(2)])
    assert r.status_code == 200
    first = r.json()["results"]
    assert [x["status"] for x in first] == ["created", "created"]
    retry = post(client, key, [turn(1), turn(2), turn(3)]).json()["results"]
    assert [x["status"] for x in retry] == ["duplicate", "duplicate", "created"]
    assert [x["id"] for x in retry[:2]] == [x["id"] for x in first]
    assert count_events(engine, tid) == 3
    # the same event_id twice inside one batch is written once
    dup = post(client, key, [turn(9), turn(9)]).json()["results"]
    assert [x["status"] for x in dup] == ["created", "duplicate"] and dup[0]["id"] == dup[1]["id"]
    assert count_events(engine, tid) == 4


def test_changed_retry_is_a_conflict_and_writes_nothing(client, tenant, engine):
    tid, key = tenant
    first = post(client, key, [turn(1)]).json()["results"]
    # the same event_id with other content, beside a new event: 409 naming the field, nothing written
    changed = dict(turn(1), content="turn 1, edited")
    r = post(client, key, [turn(2), changed])
    assert r.status_code == 409
    body = r.json()
    assert body["error"] == "conflict"
    assert [f["path"] for f in body["fields"]] == ["events[1].content"]
    assert "'e1'" in body["detail"] and "nothing in this batch was written" in body["detail"]
    assert count_events(engine, tid) == 1
    # the stored event is still the first version, verbatim
    got = client.get(f"/v1/events/{first[0]['id']}", headers=auth(key)).json()
    assert got["content"] == "turn 1"
    # a retry that leaves out what the server filled in (time, metadata) is the same event
    same = {k: v for k, v in turn(1).items() if k != "occurred_at"}
    assert post(client, key, [same]).json()["results"][0]["status"] == "duplicate"
    # another speaker or time under one event_id inside a single batch is a conflict too
    r = post(client, key, [turn(5), dict(turn(5), occurred_at="2024-02-01T00:00:00Z")])
    assert r.status_code == 409 and [f["path"] for f in r.json()["fields"]] == ["events[1].occurred_at"]
    assert count_events(engine, tid) == 1


def test_outbox_row_written_with_each_event(client, tenant, engine):
    tid, key = tenant
    ids = [x["id"] for x in post(client, key, [turn(1), turn(2)]).json()["results"]]
    with engine.connect() as conn:
        rows = conn.execute(select(IndexingState.event_pk, IndexingState.layer).where(IndexingState.event_pk.in_(ids))).all()
    from app.domain.layer_registry import LAYERS, OPTIONAL_LAYERS

    assert sorted(rows) == sorted((i, layer) for i in ids for layer in LAYERS if layer not in OPTIONAL_LAYERS)


def test_concurrent_identical_posts_make_one_row(client, tenant, engine):
    tid, key = tenant
    results = []

    def go():
        results.append(post(client, key, [turn(i) for i in range(20)]).json()["results"])

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count_events(engine, tid) == 20
    ids = {tuple(x["id"] for x in r) for r in results}
    assert len(ids) == 1  # every caller got the same ids back
    statuses = [x["status"] for r in results for x in r]
    assert statuses.count("created") == 20


def test_content_is_stored_verbatim(client, tenant):
    _, key = tenant
    text = "  Ünïcode ✓ 😀 עברית\ttabs\nnewline  "
    r = post(client, key, [turn(1, content=text, metadata={"nested": {"a": [1, 2]}})])
    # content from kw overrides the default
    eid = r.json()["results"][0]["id"]
    got = client.get(f"/v1/events/{eid}", headers=auth(key)).json()
    assert got["content"] == text
    assert got["metadata"] == {"nested": {"a": [1, 2]}}
    assert got["occurred_at"] == "2024-01-01T00:00:01Z"


def _fields(resp) -> set[str]:
    assert resp.status_code == 422, resp.text
    return {f["path"] for f in resp.json()["fields"]}


def test_bad_input_gets_422_naming_the_field_and_writes_nothing(client, tenant, engine):
    tid, key = tenant
    assert "events[1].content" in _fields(post(client, key, [turn(1), {**turn(2), "content": ""}]))
    assert "events[0].content" in _fields(post(client, key, [{**turn(1), "content": "   "}]))
    assert "events[0].content" in _fields(post(client, key, [{**turn(1), "content": "x" * (64 * 1024 + 1)}]))
    assert "events[0].occurred_at" in _fields(post(client, key, [{**turn(1), "occurred_at": "yesterday-ish"}]))
    assert "events[0].colour" in _fields(post(client, key, [{**turn(1), "colour": "red"}]))
    assert "events[0].speaker" in _fields(post(client, key, [{k: v for k, v in turn(1).items() if k != "speaker"}]))
    assert "events" in _fields(post(client, key, [turn(i) for i in range(1001)]))
    assert "events" in _fields(post(client, key, []))
    assert count_events(engine, tid) == 0


def test_timestamps_without_offset_are_utc(client, tenant):
    _, key = tenant
    r = post(client, key, [{**turn(1), "occurred_at": "2023-05-08T13:56:00"}, {**turn(2), "occurred_at": "2023-05-08T15:56:00+02:00"}])
    ids = [x["id"] for x in r.json()["results"]]
    got = [client.get(f"/v1/events/{i}", headers=auth(key)).json()["occurred_at"] for i in ids]
    assert got == ["2023-05-08T13:56:00Z", "2023-05-08T13:56:00Z"]


def test_list_conversation_pages_in_time_order(client, tenant):
    _, key = tenant
    # posted out of order; listed by event time
    post(client, key, [turn(i) for i in (5, 1, 4, 2, 3)] + [turn(7, conv="other")])
    seen, cursor = [], None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = client.get("/v1/conversations/c1/events", params=params, headers=auth(key)).json()
        seen += [e["event_id"] for e in page["events"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == ["e1", "e2", "e3", "e4", "e5"]
    bad = client.get("/v1/conversations/c1/events", params={"cursor": "%%%"}, headers=auth(key))
    assert bad.status_code == 422


def test_status_counts_pending_embedding(client, tenant):
    _, key = tenant
    post(client, key, [turn(1), turn(2)])
    st = client.get("/v1/conversations/c1/status", headers=auth(key)).json()
    assert st["events"] == 2
    assert st["pending"]["embed"] == 2  # no worker runs in this test


def test_status_of_a_conversation_the_tenant_does_not_have_is_404_naming_it(client, make_tenant):
    _, key = make_tenant(("read", "write", "admin"))
    url = "/v1/conversations/never-posted/status"

    def gone() -> None:
        r = client.get(url, headers=auth(key))
        assert r.status_code == 404, r.text
        body = r.json()
        assert set(body) == {"error", "detail", "fields"} and body["error"] == "not_found"
        assert "'never-posted'" in body["detail"]

    gone()
    assert post(client, key, [turn(1, conv="never-posted")]).status_code == 200
    st = client.get(url, headers=auth(key))  # at once after the write: it has events, so it has a status
    assert st.status_code == 200 and st.json()["events"] == 1 and st.json()["pending"]["embed"] == 1
    assert client.delete("/v1/conversations/never-posted", headers=auth(key)).status_code == 200
    gone()  # erased: as if never posted
    spec = client.get("/openapi.json").json()["paths"]["/v1/conversations/{conversation_id}/status"]["get"]
    assert "404" in spec["responses"] and "404 when the tenant has no event in it" in spec["description"]


def test_missing_event_is_404(client, tenant):
    _, key = tenant
    assert client.get("/v1/events/999999999", headers=auth(key)).status_code == 404


def test_a_full_batch_is_stored_verbatim_position_by_position(client, tenant, engine):
    """1,000 events in one POST (the largest batch): the rows go in as executemany pages and the
    outbox from arrays, so check every field of every position, and one outbox row per layer."""
    from app.domain.layer_registry import LAYERS, OPTIONAL_LAYERS

    tid, key = tenant
    events = [{"conversation_id": f"big-{i % 3}", "event_id": f"b{i}", "speaker": "Ana" if i % 2 else "Ben",
               "content": f"turn {i}: ünïcode ✓ and a 'quote' {'x' * (i % 50)}", "metadata": {"i": i, "tags": ["t"] * (i % 3)},
               "occurred_at": f"2024-03-0{1 + i % 9}T10:{i % 60:02d}:00Z"} for i in range(1000)]
    r = post(client, key, events)
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert [x["status"] for x in res] == ["created"] * 1000 and [x["event_id"] for x in res] == [e["event_id"] for e in events]
    ids = [x["id"] for x in res]
    with engine.connect() as conn:
        stored = {row.id: row for row in conn.execute(select(Event).where(Event.id.in_(ids)))}
        outbox = conn.execute(select(func.count()).select_from(IndexingState).where(IndexingState.event_pk.in_(ids))).scalar_one()
    for pk, e in zip(ids, events):
        row = stored[pk]
        assert (row.conversation_id, row.event_id, row.speaker, row.content) == (
            e["conversation_id"], e["event_id"], e["speaker"], e["content"])
        assert row.metadata == e["metadata"] and row.occurred_at.isoformat().startswith(e["occurred_at"][:16])
    assert outbox == 1000 * len([x for x in LAYERS if x not in OPTIONAL_LAYERS])
