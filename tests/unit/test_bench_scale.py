"""The scale benchmark: its corpus generator, report and seed vectors (fast, pure; the generator reads
the shared LoCoMo data). Its runs through a database: tests/integration/test_lexical_scale.py and
tests/e2e/test_bench_scale.py."""
from __future__ import annotations

import hashlib
import io
import itertools
import os
import re
from datetime import datetime, timedelta

import pytest

from bench.scale_data import ASSISTANT, FIRST_NAMES, Corpus, SourcePool, _perturb, coin, dump

SOURCE_SPEAKERS = {"Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Joanna", "Nate", "Tim", "Audrey",
                   "Andrew", "James"}


@pytest.fixture(scope="module")
def pool(shared_data) -> SourcePool:
    return SourcePool.load(shared_data)


def _digest(corpus: Corpus, n: int) -> str:
    ev, qs = io.StringIO(), io.StringIO()
    assert dump(corpus, n, ev, qs) == n
    return hashlib.sha256((ev.getvalue() + qs.getvalue()).encode()).hexdigest()


@pytest.mark.needs_shared_data("locomo")
def test_same_seed_same_bytes_other_seed_other_bytes(pool):
    assert _digest(Corpus(pool, 7), 3000) == _digest(Corpus(pool, 7), 3000)
    assert _digest(Corpus(pool, 7), 3000) != _digest(Corpus(pool, 8), 3000)


@pytest.mark.needs_shared_data("locomo")
def test_sizes_are_exact_and_a_bigger_corpus_extends_a_smaller_one(pool):
    corpus = Corpus(pool, 7)
    whole = [e for e, _ in corpus.events(0, 2500)]
    assert len(whole) == 2500
    assert len({e["event_id"] for e in whole}) == 2500
    # grown in steps (as the runner does), the stream is the same as generated at once
    steps = [e for a, b in ((0, 1000), (1000, 1737), (1737, 2500)) for e, _ in corpus.events(a, b)]
    assert steps == whole


@pytest.mark.needs_shared_data("locomo")
def test_generation_streams(pool):
    # the first events of the 1M corpus come without generating the rest
    first = list(itertools.islice(Corpus(pool, 7).events(0, 1_000_000), 5))
    assert [e["event_id"] for e, _ in first] == [f"s{i:07d}" for i in range(5)]


@pytest.mark.needs_shared_data("locomo")
def test_each_planted_fact_is_said_once_and_asked_in_other_words(pool):
    pairs, events = [], []
    for ev, planted in Corpus(pool, 7).events(0, 20_000):
        events.append(ev)
        if planted:
            pairs.append(planted)
    assert len(pairs) >= 5 * (len({e["conversation_id"] for e in events}) - 1)
    by_id = {e["event_id"]: e for e in events}
    tokens = {p.token for p in pairs}
    assert len(tokens) == len(pairs)
    found: dict[str, list[str]] = {t: [] for t in tokens}
    for e in events:
        for word in re.findall(r"[A-Z][a-z]+", e["content"]):
            if word in found:
                found[word].append(e["event_id"])
    for p in pairs:
        assert found[p.token] == [p.gold]  # once in the whole tenant, in the gold event
        gold = by_id[p.gold]
        assert gold["content"] == p.statement and gold["conversation_id"] == p.conversation_id
        assert p.token in p.question and p.answer in p.statement and p.answer not in p.question
        assert p.question.lower() not in p.statement.lower()
        assert events[p.index]["event_id"] == p.gold


@pytest.mark.needs_shared_data("locomo")
def test_names_and_dates_are_new(pool):
    events = [e for e, _ in Corpus(pool, 7).events(0, 10_000)]
    speakers = {e["speaker"] for e in events}
    assert speakers <= set(FIRST_NAMES) | {ASSISTANT}
    # LoCoMo speakers are renamed in what they say too (BEAM texts name third parties: left as they are)
    chats = {e["conversation_id"] for e in events} - {e["conversation_id"] for e in events if e["speaker"] == ASSISTANT}
    text = " ".join(e["content"] for e in events if e["conversation_id"] in chats)
    leaked = [n for n in SOURCE_SPEAKERS if re.search(rf"\b{n}\b", text)]
    assert not leaked
    # every conversation is in time order, over several sessions days apart
    for _, group in itertools.groupby(events, key=lambda e: e["conversation_id"]):
        times = [datetime.fromisoformat(e["occurred_at"]) for e in group]
        assert times == sorted(times)
        assert sum(b - a > timedelta(hours=12) for a, b in zip(times, times[1:])) >= 5
    # explicit dates in the text move with the session
    assert _perturb("due March 15, 2024 to Ana", {}, timedelta(days=20)) == "due April 4, 2024 to Ana"
    assert _perturb("Caroline met Mel", {"Caroline": "Hugo", "Melanie": "Vera"}, timedelta(0)) == "Hugo met Vera"


def test_coined_words_do_not_repeat():
    words = [coin(n, 7) for n in range(20_000)]
    assert len(set(words)) == len(words)


def test_report_files_from_a_result(tmp_path):
    from bench.scale import peak_rss_mb
    from bench.scale_report import write

    point = {"events": 1000, "created": 1000, "committed_eps": 400.0, "indexed_eps": 9.0, "worker_embed_eps": 9.5,
             "raw_embed": {"texts_per_s": 12.0}, "embed_share": 0.75, "worker_embed_share": 0.79,
             "queries": {"pairs": 5, "tenant": {"recall_at_10": 1.0, "p50_ms": 120.0, "p95_ms": 130.0},
                         "conversation": {"recall_at_10": 0.8, "p50_ms": 90.0, "p95_ms": 95.0},
                         "tenant+rerank": None, "conversation+rerank": None},
             "db": {"bytes_per_event": 5900, "database_bytes_per_event": 15000},
             "memory_mb": {"api": peak_rss_mb(os.getpid()), "worker": {"sum": 1200.0}}}
    result = {"run_id": "x", "git": {"commit": "abc"}, "machine": {"cpus": 2}, "points": [point],
              "options": {"sizes": [1000], "queries": 5, "seed": 7, "layers": "embed", "batch": 1000, "clients": 3,
                          "top_k": 10, "token_budget": 1000}}
    paths = write(result, tmp_path, "scale-test")
    md = paths["markdown"].read_text()
    assert "| 1,000 | 400 | 9 | 9.5 | 12.0 | 75% (79%) | 120 / 130 | 90 / 95 | n/a / n/a | 1.000 | 0.800 | n/a" in md
    assert paths["png"].read_bytes()[:4] == b"\x89PNG"


def _vectors(tmp_path, pool, events: int, seed: int = 7):
    """A real `bench.scale_vectors` folder: the service's embedder on this machine's CPU."""
    from app.adapters.embedder import get_embedder
    from bench.scale_vectors import compute, folder

    corpus = Corpus(pool, seed, assistant_share=0.0)
    return compute(corpus, events, get_embedder(), folder(tmp_path / "vectors", seed, events), log=lambda m: None)


@pytest.mark.needs_shared_data("locomo")
def test_seed_vectors_are_the_embedders_and_checked_against_their_text(tmp_path, pool):
    import numpy as np

    from app.adapters.embedder import get_embedder
    from bench.scale_vectors import SeedVectors, corpus_texts

    path = _vectors(tmp_path, pool, 40)
    vecs = SeedVectors(path)
    assert vecs.events == 40 and vecs.meta["model"] == get_embedder().name and vecs.meta["device"] == "cpu"
    texts = list(corpus_texts(Corpus(pool, 7, assistant_share=0.0), 0, 40))
    want = get_embedder().encode(texts[30:])
    got = np.stack([vecs.row(30 + i, t) for i, t in enumerate(texts[30:])])
    assert np.allclose(got, want, atol=2e-3)  # float16 on disk
    with pytest.raises(ValueError, match="differs"):
        vecs.row(31, texts[30])  # another position's text: refused, not silently mismatched


@pytest.mark.needs_shared_data("locomo")
def test_seed_vectors_of_another_corpus_are_refused(tmp_path, pool):
    from bench.scale_seed import check
    from bench.scale_vectors import SeedVectors

    vecs = SeedVectors(_vectors(tmp_path, pool, 5, seed=8))
    with pytest.raises(ValueError, match="seed"):
        check(vecs, Corpus(pool, 7, assistant_share=0.0), vecs.meta["model"])
    check(vecs, Corpus(pool, 8, assistant_share=0.0), vecs.meta["model"])  # its own corpus passes
