"""The embedder loads from a local path (a setting) and counts tokens exactly."""
from __future__ import annotations

import numpy as np
import pytest

from app.adapters.embedder import Embedder


def test_embeddings_are_normalised_and_meaningful(embedder):
    v = embedder.encode(["The cat sat on the mat.", "A kitten rested on the rug.", "Quarterly tax filing deadline."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_token_counts(embedder):
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens_batch(["hello world", "a b c"]) == [2, 3]


def test_token_counts_are_remembered_within_a_bound(embedder, monkeypatch):
    from app.adapters import embedder as module

    monkeypatch.setattr(module, "TOKEN_COUNT_CACHE", 3)
    embedder.__dict__.pop("_token_counts", None)
    texts = ["[2023-05-08 13:56] Ana: the support group was powerful", "a b c", "hello world", "one more line"]
    assert [embedder.count_tokens(t) for t in texts] == embedder.count_tokens_batch(texts)
    assert [embedder.count_tokens(t) for t in texts] == embedder.count_tokens_batch(texts)  # from memory
    assert 0 < len(embedder._token_counts) <= 3


def test_missing_model_path_fails_loudly(tmp_path):
    with pytest.raises(FileNotFoundError):
        Embedder(str(tmp_path), "nothing-here")


def test_the_device_is_a_setting_and_a_bad_one_fails_loudly(monkeypatch):
    from app.adapters.embedder import get_embedder, load_embedder
    from app.settings import get_settings

    monkeypatch.setenv("PALIMPSEST_EMBEDDING_DEVICE", "cpu")
    get_settings.cache_clear()
    try:
        assert get_embedder().device == "cpu"
        s = get_settings()
        with pytest.raises(RuntimeError):  # torch names the device it does not know
            load_embedder(s.embedding_model_path, s.embedding_model_name, device="no-such-device")
    finally:
        get_settings.cache_clear()
