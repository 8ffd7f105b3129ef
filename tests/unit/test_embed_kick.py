"""The embed task's success hook starts the layers waiting on the vectors only when the task marked
rows done (its return value): a re-sent task that found its rows done sends nothing."""
from __future__ import annotations


def test_only_an_embed_task_that_marked_rows_done_starts_the_waiting_layers(monkeypatch):
    from app.services import layers
    from workers import layerbase
    from workers.embed import embed_events

    kicked = []
    monkeypatch.setattr(layers, "kick_after_embed", lambda pks, dispatcher: kicked.append(pks) or {})
    layerbase._after_embed(task=embed_events, args=([1, 2, 3],), state="SUCCESS", retval=0)
    assert kicked == []  # nothing embedded, nothing changed: the task that did it kicked
    layerbase._after_embed(task=embed_events, args=([1, 2, 3],), state="FAILURE", retval=None)
    assert kicked == []
    layerbase._after_embed(task=embed_events, args=([1, 2, 3],), state="SUCCESS", retval=2)
    assert kicked == [[1, 2, 3]]
