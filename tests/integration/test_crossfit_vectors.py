"""Cross-fitting the fusion ranker's rows (docs/models.md, "Stop 32"): an embedder that was not trained
on a train conversation stores its vectors there beside the default's, and rows are only collected
for conversations the configured embedder did not see."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.support import auth

pytest.importorskip("lightgbm")


def _models(engine, tenant_id: int) -> dict[str, set[str]]:  # noqa: ANN001
    with engine.connect() as c:
        rows = c.execute(text("SELECT e.model, e.conversation_id FROM embeddings e WHERE e.tenant_id = :t"),
                         {"t": tenant_id}).all()
    out: dict[str, set[str]] = {}
    for model, conv in rows:
        out.setdefault(model, set()).add(conv)
    return out


def test_an_unseen_embedder_adds_its_vectors_to_train_conversations_only(client, engine, monkeypatch):
    from app.services.layers import embed_pending
    from app.settings import SHIPPED_EMBEDDER_NAME, get_settings, packaged_minilm_path
    from tests.support import new_tenant
    from training import fusion

    tid, key = new_tenant(engine)
    events = [{"conversation_id": conv, "event_id": f"{conv}-{i}", "speaker": "Ana", "content": words,
               "occurred_at": f"2024-05-0{i + 1}T10:00:00Z"}
              for conv in ("beam/beam-1", "beam/beam-15")  # a train and a validation conversation
              for i, words in enumerate(["We adopted a greyhound.", "My sister moved to Lisbon."])]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    embed_pending([x["id"] for x in r.json()["results"]])
    assert _models(engine, tid) == {SHIPPED_EMBEDDER_NAME: {"beam/beam-1", "beam/beam-15"}}
    # the shipped embedder saw every BEAM train conversation: nothing of its own to add, no row to collect
    assert fusion.embed_unseen(tid, ("beam",)) == {"beam": 0}
    assert "beam-1" in fusion.embedder_saw("beam")

    # the packaged model (no training manifest) stands in for an embedder trained without beam-1's fold
    monkeypatch.setenv("PALIMPSEST_EMBEDDING_MODEL_PATH", packaged_minilm_path())
    monkeypatch.setenv("PALIMPSEST_EMBEDDING_MODEL_NAME", "crossfit-test")
    get_settings.cache_clear()
    try:
        assert fusion.embedder_saw("beam") == set()
        assert fusion.embed_unseen(tid, ("beam",)) == {"beam": 2}
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    # its vectors sit beside the default's, on the train conversation alone; the default's are untouched
    assert _models(engine, tid) == {SHIPPED_EMBEDDER_NAME: {"beam/beam-1", "beam/beam-15"},
                                    "crossfit-test": {"beam/beam-1"}}
