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


def _slow_loader(monkeypatch, result):  # noqa: ANN001, ANN202
    """`load_embedder` replaced by a cached loader that blocks until released (and counts its loads)."""
    import functools
    import threading

    from app.adapters import embedder as module

    started, release, loads = threading.Event(), threading.Event(), []

    @functools.lru_cache(maxsize=1)
    def load(*args):  # noqa: ANN002, ANN202
        loads.append(args)
        started.set()
        release.wait(30)
        if isinstance(result, BaseException):
            raise result
        return result

    monkeypatch.setattr(module, "load_embedder", load)
    return started, release, loads


def test_a_preload_loads_once_and_a_caller_meanwhile_gets_the_same_model(monkeypatch):
    import threading

    from app.adapters import embedder as module

    class Fake:
        def encode(self, texts):  # noqa: ANN001, ANN202
            return np.zeros((len(texts), 3), dtype=np.float32)

    fake = Fake()
    started, release, loads = _slow_loader(monkeypatch, fake)
    done = []
    thread = module.preload(lambda seconds, err: done.append((seconds >= 0, err)))
    assert started.wait(30)
    got = []
    caller = threading.Thread(target=lambda: got.append(module.get_embedder()))  # a task arriving mid-load
    caller.start()
    release.set()
    thread.join(30)
    caller.join(30)
    assert got == [fake]
    assert len(loads) == 1  # the caller waited for the preload's load instead of loading a second model
    assert done == [(True, None)]


def test_a_failed_preload_is_reported_and_the_first_use_raises_it(monkeypatch):
    from app.adapters import embedder as module

    started, release, loads = _slow_loader(monkeypatch, FileNotFoundError("no model here"))
    release.set()
    done = []
    module.preload(lambda seconds, err: done.append(err)).join(30)
    assert len(done) == 1 and isinstance(done[0], FileNotFoundError)
    with pytest.raises(FileNotFoundError):
        module.get_embedder()


def test_a_model_loaded_in_another_thread_encodes_with_its_thread_count(embedder):
    """torch's thread count belongs to the calling thread: a model preloaded in a background thread
    (or loaded by one request thread of the API) must not encode with every core elsewhere."""
    import threading

    import torch

    from app.settings import get_settings

    path = get_settings().embedding_model_path
    box = []
    t = threading.Thread(target=lambda: box.append(Embedder(path, "threads-test", batch_size=8, threads=1)))
    t.start()
    t.join(120)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        box[0].encode(["one line", "another line"])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
