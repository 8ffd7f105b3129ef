"""What the layer wiring tests share, and what other integration tests use to build a conversation's
layers (tests/integration/test_layers_wiring.py, test_layers_gate_heat.py, test_layers_api.py, ...): a small
hand-made conversation (Boston, then Denver), posting it, building every layer synchronously, and a
module-scoped tenant maker."""
from __future__ import annotations

import pytest

from app.services.layers import embed_pending, run_for_pks
from tests.support import auth


LAYERS = ("gate", "consolidate", "surprise", "engrams", "graph")


# Monday 8 May 2023; a 7-hour gap before the second visit.
TURNS = [
    ("Ana", "I live in Boston and I work at Google as an engineer.", "2023-05-08T10:00:00Z"),
    ("Ben", "Nice! My sister Clara lives in Boston too.", "2023-05-08T10:01:00Z"),
    ("Ana", "We ran the Boston Marathon last Saturday with my brother.", "2023-05-08T10:02:00Z"),
    ("Ben", "I adopted a dog named Rex because my old cat died.", "2023-05-08T10:03:00Z"),
    ("Ana", "I live in Boston and I work at Google as an engineer.", "2023-05-08T10:04:00Z"),
    ("Ana", "Big news: we moved to Denver last month!", "2023-05-08T17:30:00Z"),
    ("Ben", "Wow, Denver! Did you leave Boston because of a new job?", "2023-05-08T17:31:00Z"),
    ("Ana", "Yes, I got a job at Stripe, so we relocated to Denver.", "2023-05-08T17:32:00Z"),
]


def post_conversation(client, key, conv="hm", turns=TURNS) -> list[int]:
    events = [{"conversation_id": conv, "event_id": str(i), "speaker": s, "content": c, "occurred_at": t}
              for i, (s, c, t) in enumerate(turns)]
    r = client.post("/v1/events", json={"events": events}, headers=auth(key))
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["results"]]


def build_all(pks: list[int]) -> dict[str, dict]:
    embed_pending(pks)
    return {layer: run_for_pks(layer, pks) for layer in LAYERS}


@pytest.fixture(scope="module")
def make_tenant(engine):  # module-scoped variant of conftest's
    from tests.support import new_tenant

    return lambda scopes=("read", "write"): new_tenant(engine, scopes)
