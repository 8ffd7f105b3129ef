"""The gate layer finds each new event's nearest earlier events with a pgvector query per event of
the batch (`vectors.nearest_earlier`), not by reading the conversation's vectors. On a small
conversation (embedded PostgreSQL) the neighbours equal those of the previous path (every vector of
the conversation read, cosine by a matrix product, earlier admitted events only), and so do the
gate's stored decisions; the conversation's vectors are never loaded."""
from __future__ import annotations

import numpy as np
from sqlalchemy import text

from app.adapters.embedder import get_embedder
from app.domain import gate
from app.services import layer_job
from app.services.layers import embed_pending, run_for_pks
from app.settings import get_settings
from app.storage import vectors
from app.storage.events import conversation_log
from app.storage.tenants import set_tenant_gate_mode
from tests.support import auth

TURNS = [
    ("Ana", "I live in Boston and I work at Google as an engineer."),
    ("Ben", "ok"),
    ("Ana", "My favourite food is ramen, honestly I could eat it every day."),
    ("Ben", "lol"),
    ("Ben", "I adopted a dog named Rex last week, he is a beagle."),
    ("Ana", "I live in Boston and I work at Google as an engineer."),
    ("Ana", "Big news: we moved to Denver last month!"),
    ("Ben", "Rex chewed my shoes again, the beagle is a menace."),
    ("Ana", "ramen again tonight, the place near my office in Denver"),
    ("Ben", "ok"),
]


def _post(client, key, conv: str) -> list[int]:
    events = [{"conversation_id": conv, "event_id": str(i), "speaker": s, "content": c,
               "occurred_at": f"2024-03-04T10:{i:02d}:00Z"} for i, (s, c) in enumerate(TURNS)]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["results"]]


def _previous_path(conn, tid: int, conv: str, pks: list[int], k: int) -> dict[int, list[tuple[int, float]]]:
    """The gate's neighbours as the layer found them before: the conversation's whole vector matrix."""
    model = get_settings().embedding_model_name
    vecs = vectors.conversation_vectors(conn, tid, conv, model)
    by_id = {r.id: r for r in conversation_log(conn, tid, conv, include_gated_out=True)}
    cand = np.array(sorted(pk for pk in by_id if pk in vecs), dtype=np.int64)
    matrix = np.vstack([vecs[int(i)] for i in cand])
    admitted = np.array([by_id[int(i)].gate_status != "gated_out" for i in cand], dtype=bool)
    out = {}
    for pk in pks:
        score = matrix @ vecs[pk]
        ok = (cand < pk) & admitted
        order = [j for j in np.argsort(-score, kind="stable") if ok[j]][:k]
        out[pk] = [(int(cand[j]), float(score[j])) for j in order]
    return out


def _decisions(engine, tid: int, pks: list[int]) -> list[tuple]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, gate_status, gate_novelty, gate_prediction_error, gate_score "
                                 "FROM events WHERE tenant_id = :t AND id = ANY(:p) ORDER BY id"),
                            {"t": tid, "p": pks}).all()
    return [(r[0], r[1], round(r[2], 5), None if r[3] is None else round(r[3], 4), round(r[4], 4)) for r in rows]


def test_the_gates_neighbours_and_decisions_equal_the_previous_paths(client, make_tenant, engine, monkeypatch):
    tid, key = make_tenant()
    with engine.begin() as conn:
        set_tenant_gate_mode(conn, tid, "filter")
    pks = _post(client, key, "knn")
    embed_pending(pks)
    k = gate.GateConfig(mode="filter").max_neighbours
    model = get_settings().embedding_model_name
    with engine.connect() as conn:
        old = _previous_path(conn, tid, "knn", pks, k)
        new = vectors.nearest_earlier(conn, tid, "knn", model, pks, k, ef_search=160)
    assert set(new) == set(pks)
    assert any(old[pk] for pk in pks) and any(len(old[pk]) == k for pk in pks)
    for pk in pks:  # the same neighbours in the same order, the same similarities (float32 vs the index's)
        assert [n for n, _ in new[pk]] == [n for n, _ in old[pk]], pk
        assert np.allclose([s for _, s in new[pk]], [s for _, s in old[pk]], atol=1e-5)

    # the layer itself: its decisions equal those made from the previous path's neighbours
    expected = gate.evaluate_batch(
        [c for _, c in TURNS],
        [[TURNS[pks.index(n)][1] for n, _ in old[pk]] for pk in pks],
        get_embedder().encode,
        gate.GateConfig(mode="filter"),
        [old[pk][0][1] if old[pk] else None for pk in pks],
    )

    def no_matrix(self):  # the gate must not read the conversation's vectors any more
        raise AssertionError("the gate read the conversation's vectors")

    monkeypatch.setattr(layer_job.Context, "vectors", property(no_matrix))
    assert run_for_pks("gate", pks)["done"] == 1
    got = _decisions(engine, tid, pks)
    assert [g[1] for g in got] == [d.status for d in expected]
    assert [g[4] for g in got] == [round(d.score, 4) for d in expected]
    assert [g[3] for g in got] == [None if d.prediction_error is None else round(d.prediction_error, 4) for d in expected]
    assert {g[1] for g in got} == {"admitted", "gated_out"}  # the case is not trivial: both decisions occur
