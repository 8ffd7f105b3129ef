"""The export reads a tenant's log in pages (`app.storage.transfer.tenant_events`): paged by one or two
rows it gives the same records, in the same order, as in one page: none lost or repeated where two
events share a time, a correction names the event it supersedes, and another tenant's are never in it."""
from __future__ import annotations

from app.storage.db import connect
from app.transfer import export_events
from tests.support import auth


def test_small_pages_give_the_same_export_as_one(client, make_tenant):
    tid, key = make_tenant()
    _, other = make_tenant()
    same_time = "2024-02-01T10:00:00Z"
    events = [{"conversation_id": conv, "event_id": f"{conv}-{i}", "speaker": "Ana", "content": f"{conv} turn {i}",
               "occurred_at": same_time if i < 3 else f"2024-02-0{i}T10:00:00Z"}
              for conv in ("b-conv", "a-conv") for i in range(5)]
    fix = {"conversation_id": "a-conv", "event_id": "a-conv-fix", "speaker": "Ana",
           "content": "a-conv turn 4, corrected", "occurred_at": "2024-02-09T10:00:00Z", "supersedes": "a-conv-4"}
    for k, evs in ((key, events), (key, [fix]), (other, events)):
        assert client.post("/v1/events", headers=auth(k), json={"events": evs}).status_code == 200
    with connect() as conn:
        whole = list(export_events(conn, tid))
        pages = [list(export_events(conn, tid, batch=n)) for n in (1, 2, 3)]
    assert all(p == whole for p in pages)
    assert len(whole) == 11 and len({r["event_id"] for r in whole}) == 11
    assert [r["conversation_id"] for r in whole] == ["a-conv"] * 6 + ["b-conv"] * 5
    assert [r["supersedes"] for r in whole if "supersedes" in r] == ["a-conv-4"]
