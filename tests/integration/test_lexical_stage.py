"""The lexical stage against the real database: BM25's scope statistics reused within their age,
and common terms (by PostgreSQL's own statistics) scoring without enumerating their events."""
from __future__ import annotations

import math


def test_scope_stats_are_reused_within_their_age(engine):
    """BM25's N and avgdl: counted once per scope and age, recounted after it (or every time at 0)."""
    from sqlalchemy import event as sa_event

    from app.storage.candidates import Scope, scope_stats
    from tests.support import new_tenant

    tid, _ = new_tenant(engine)
    statements: list[str] = []

    def count(conn, cursor, statement, *args):  # noqa: ANN001
        statements.append(statement)

    sa_event.listen(engine, "before_cursor_execute", count)
    try:
        with engine.connect() as conn:
            first = scope_stats(conn, Scope(tid, "c"), max_age_s=60)
            again = scope_stats(conn, Scope(tid, "c"), max_age_s=60)
            n_cached = len(statements)
            scope_stats(conn, Scope(tid, "c"), max_age_s=0)
            scope_stats(conn, Scope(tid, "other"), max_age_s=60)
    finally:
        sa_event.remove(engine, "before_cursor_execute", count)
    assert first == again == (0, 0.0)
    assert n_cached == 1 and len(statements) == 3


def test_lexeme_shares_come_from_postgres_statistics(client, tenant, engine, monkeypatch):
    """After ANALYZE, a word in every event of this conversation is among the table's most common
    lexemes; in a big scope the lexical stage then finds by the rare word alone, and still scores
    the common one (BM25 over both). Words of this test only: the table holds other tests' events,
    so the threshold is set from the common word's own share."""
    from sqlalchemy import text

    from app.services.retrievers import lexical_signal
    from app.settings import get_settings
    from app.storage import candidates as search
    from app.storage.candidates import Scope
    from tests.support import auth

    tid, key = tenant
    events = [{"conversation_id": "common", "event_id": str(i), "speaker": "A",
               "content": f"the flumpering today is fine, number {i}" + (" and I visited Quixotrel" if i == 7 else "")}
              for i in range(300)]
    assert client.post("/v1/events", headers=auth(key), json={"events": events}).status_code == 200
    with engine.begin() as conn:
        conn.execute(text("ANALYZE events"))
    search._SHARES = None
    with engine.connect() as conn:
        shares = search.lexeme_shares(conn, max_age_s=0)
        common = shares.get("flumper", 0.0)
        assert common > 0 and shares.get("quixotrel", 0.0) < common / 2
        small = lexical_signal(conn, Scope(tid, "common"), "flumpering in Quixotrel", 50, max_share=common / 2)
        monkeypatch.setattr(get_settings(), "lexical_prune_above", 100)  # the scope counts as big
        rare_only = lexical_signal(conn, Scope(tid, "common"), "flumpering in Quixotrel", 50, max_share=common / 2)
        every = lexical_signal(conn, Scope(tid, "common"), "flumpering in Quixotrel", 50, max_share=1.0,
                               find_budget=math.inf)
        # no share limit, but a budget of matches the common word alone would exceed: the rare one finds
        n_docs = search.scope_stats(conn, Scope(tid, "common"), max_age_s=0)[0]
        budgeted = lexical_signal(conn, Scope(tid, "common"), "flumpering in Quixotrel", 50, max_share=1.0,
                                  find_budget=common * n_docs / 2)
        rare = lexical_signal(conn, Scope(tid, "common"), "Quixotrel", 50, max_share=1.0)
    assert len(small) == 50  # a small scope: every term finds, whatever the statistics say
    assert len(rare_only) == 1 and len(every) == 50 and len(budgeted) == 1
    assert rare_only[0][0] == every[0][0] == rare[0][0] == budgeted[0][0]
    assert rare_only[0][1] > rare[0][1]  # "flumpering" did not find, but it still scored



def test_term_frequencies_of_the_best_matches_by_cover_density(client, tenant, engine):
    """Every matching event with each query term's frequency and its distinct lexemes while the matches
    fit the cap; past the cap, the best by cover density (ties by id) and only those."""
    from app.storage.candidates import Scope, lexical_term_frequencies
    from tests.support import auth

    tid, key = tenant
    texts = {"a": "the glimmerfox ran; the glimmerfox hid; the glimmerfox slept near the old mill",
             "b": "a glimmerfox passed by the mill", "c": "glimmerfox and glimmerfox", "d": "nothing to see here",
             "e": "the mill by the river, the mill of stone"}
    events = [{"conversation_id": "tf", "event_id": k, "speaker": "A", "content": v} for k, v in texts.items()]
    assert client.post("/v1/events", headers=auth(key), json={"events": events}).status_code == 200
    scope = Scope(tid, "tf")
    with engine.connect() as conn:
        pk = dict(conn.exec_driver_sql(f"SELECT event_id, id FROM events WHERE tenant_id = {tid}").all())
        tfs, lengths = lexical_term_frequencies(conn, scope, ["glimmerfox", "mill"], 10)
        capped, _ = lexical_term_frequencies(conn, scope, ["glimmerfox", "mill"], 2)
        found_by_one, _ = lexical_term_frequencies(conn, scope, ["glimmerfox", "mill"], 10, finding=["glimmerfox"])
        best_two = [r[0] for r in conn.exec_driver_sql(
            "SELECT id FROM events WHERE tenant_id = %s AND search_tsv @@ 'glimmerfox | mill'::tsquery "
            "ORDER BY ts_rank_cd(search_tsv, 'glimmerfox | mill'::tsquery, 1) DESC, id LIMIT 2", (tid,))]
    assert tfs == {pk["a"]: {"glimmerfox": 3, "mill": 1}, pk["b"]: {"glimmerfox": 1, "mill": 1},
                   pk["c"]: {"glimmerfox": 2}, pk["e"]: {"mill": 2}}
    assert lengths[pk["c"]] == 1 and lengths[pk["e"]] == 3  # distinct lexemes: glimmerfox / mill, river, stone
    assert set(capped) == set(best_two) and all(capped[p] == tfs[p] for p in capped)
    assert set(found_by_one) == {pk["a"], pk["b"], pk["c"]} and found_by_one[pk["b"]] == {"glimmerfox": 1, "mill": 1}
