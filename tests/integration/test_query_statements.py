"""No N+1 on the read path: the SQL statements one POST /v1/query executes do not grow with the
number of events in the conversation or with the candidates and items it returns.

Counted with a `before_cursor_execute` listener on the engine, around the request only, for a
conversation of 8 events and one of 240 (every layer built, so every signal has candidates:
lexical, dense, derived, graph), at top_k 5 and 50.
"""
from __future__ import annotations

import re
from collections import Counter
from contextlib import contextmanager

import pytest
from sqlalchemy import event

from tests.support import auth

PEOPLE = ["Ana", "Ben"]
PLACES = ["Denver", "Boulder", "Aspen", "Vail", "Golden", "Estes Park"]
FRIENDS = ["Clara", "Rex", "Miso", "David", "Elena"]
QUESTION = "Where did Ana go hiking with Clara in Denver?"
# Graph breadth-first steps: each hop is a bounded number of lookups, whatever the candidates.
# A hop more in the larger graph may add this many statements; an N+1 would add hundreds.
HOP_SLACK = 6
BOUND = 60  # the whole request: auth, intent, 4 signals, fusion, reweight, neighbours, heat bump


def turns(n: int) -> list[dict]:
    out = []
    for i in range(n):
        day, minute = divmod(i, 40)
        out.append({
            "event_id": str(i), "speaker": PEOPLE[i % 2],
            "content": f"Last weekend I went hiking near {PLACES[i % len(PLACES)]} with {FRIENDS[i % len(FRIENDS)]}; "
                       f"the trail number {i} was {'steep' if i % 3 else 'muddy'} and we saw {i % 7} elk.",
            "occurred_at": f"2024-0{1 + day % 9}-{1 + (day // 9) % 28:02d}T10:{minute:02d}:00Z",
        })
    return out


@pytest.fixture
def convs(client, make_tenant):
    from app.services.layers import embed_pending, run_for_pks

    _, key = make_tenant()
    pks = []
    for conv, n in (("few", 8), ("many", 240)):
        events = [{"conversation_id": conv, **t} for t in turns(n)]
        r = client.post("/v1/events", headers=auth(key), json={"events": events})
        assert r.status_code == 200, r.text
        pks += [x["id"] for x in r.json()["results"]]
    embed_pending(pks)
    for layer in ("consolidate", "surprise", "engrams", "graph"):
        run_for_pks(layer, pks)
    return key


@contextmanager
def statements(engine):
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ARG001
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def _shape(sql: str) -> str:
    """The statement with expanded IN lists collapsed: one shape per query in the code."""
    return re.sub(r"(%\([^)]+\)s(, )?)+", "?", " ".join(sql.split()))[:120]


def count_query(client, engine, key, conv: str, top_k: int) -> tuple[int, dict, Counter]:
    body = {"query": QUESTION, "conversation_id": conv, "top_k": top_k, "token_budget": 4000}
    client.post("/v1/query", headers=auth(key), json=body)  # warm: lazy loads and first-use lookups
    with statements(engine) as seen:
        r = client.post("/v1/query", headers=auth(key), json=body)
    assert r.status_code == 200, r.text
    return len(seen), r.json(), Counter(_shape(s) for s in seen)


def test_statements_per_query_do_not_grow_with_candidates(client, engine, convs):
    key = convs
    runs = {(conv, k): count_query(client, engine, key, conv, k) for conv in ("few", "many") for k in (5, 50)}
    n = {ck: v[0] for ck, v in runs.items()}
    detail = {f"{c}/top{k}": dict(v[2]) for (c, k), v in runs.items()}

    many = runs[("many", 50)][1]
    assert len(many["items"]) == 50  # the large conversation really hands back many candidates
    signals = {name for it in many["items"] for name in it["signals"]}
    assert {"lexical", "dense"} <= signals, signals
    assert len(runs[("few", 50)][1]["items"]) <= 8

    # top_k changes what is returned, never how it is read
    assert n[("few", 5)] == n[("few", 50)], detail
    assert n[("many", 5)] == n[("many", 50)], detail
    # 30x the events (and the candidate pool full) costs at most a bounded few graph hops more
    assert n[("many", 50)] <= n[("few", 5)] + HOP_SLACK, detail
    assert max(n.values()) <= BOUND, detail
    # and no single statement is repeated per candidate
    for shapes in runs.values():
        assert max(shapes[2].values()) <= 4, shapes[2]


ARRAY_READS = ("FROM graph_edges", "FROM graph_nodes", "FROM event_signals", "FROM events")


def test_id_and_key_lists_go_in_as_one_array_so_statement_texts_repeat(client, engine, convs):
    """The graph hops and the candidate reads bind their key and id lists as one array (`= ANY`):
    the same text whatever the list's length, so psycopg prepares it once. An `IN (...)` list renders
    one placeholder per value, a new statement text for nearly every query."""
    key = convs
    texts: dict[str, set[str]] = {}
    for conv in ("few", "many"):
        body = {"query": QUESTION, "conversation_id": conv, "top_k": 10, "token_budget": 4000}
        with statements(engine) as seen:
            assert client.post("/v1/query", headers=auth(key), json=body).status_code == 200
        texts[conv] = {" ".join(s.split()) for s in seen if any(t in s for t in ARRAY_READS)}
    graph_reads = {t for t in texts["many"] if "graph_edges" in t or "graph_nodes" in t}
    assert len(graph_reads) >= 2, texts["many"]  # the hops really ran
    for t in texts["few"] | texts["many"]:
        assert not re.search(r"IN \(%\(\w+\)s(::\w+)?, %\(", t), t
    # the edge and node statements of the small graph are the large graph's, character for character
    assert {t for t in texts["few"] if "graph_edges" in t} <= {t for t in texts["many"] if "graph_edges" in t}


def test_refresh_statistics_analyzes_the_tables(engine):
    """The benchmark harness calls this after a bulk load so the planner stops treating the new rows
    as an empty table; it must reach every table the read path joins."""
    from sqlalchemy import text

    from app.storage.db import refresh_statistics

    sql = text("SELECT relname, coalesce(last_analyze, 'epoch') FROM pg_stat_user_tables "
               "WHERE relname IN ('events', 'embeddings', 'graph_edges', 'graph_nodes', 'event_signals')")
    with engine.connect() as conn:
        before = dict(conn.execute(sql).all())
    refresh_statistics(engine)
    with engine.connect() as conn:
        after = dict(conn.execute(sql).all())
    assert set(after) == set(before) and len(after) == 5
    assert all(after[t] > before[t] for t in after)


def test_every_index_the_models_declare_is_migrated(engine):
    """A model index without its Alembic migration exists in tests that build from the models only."""
    from sqlalchemy import text

    from app.storage.models import Base

    with engine.connect() as conn:
        have = set(conn.execute(text("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")).scalars())
    declared = {ix.name for table in Base.metadata.tables.values() for ix in table.indexes}
    assert declared - have == set()


def test_a_tenant_wide_reference_time_is_one_index_descent(engine):
    """`latest_event_time` over a whole tenant reads the end of ix_events_tenant_time, not every event
    of the tenant (725 ms at 1M events before migration 0004)."""
    from sqlalchemy import text

    from app.storage.events import latest_event_time

    seen: list[tuple[str, object]] = []

    def grab(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement, parameters))

    with engine.connect() as conn:
        event.listen(conn, "before_cursor_execute", grab)
        latest_event_time(conn, 1, None)
        event.remove(conn, "before_cursor_execute", grab)
        (statement, params), = seen
        conn.execute(text("SET LOCAL enable_seqscan = off"))  # a test table is small enough to scan
        plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + statement, params))
    assert "ix_events_tenant_time" in plan, plan
