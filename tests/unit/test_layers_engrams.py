"""L0 speaker engrams (True Memory §4.1 Stage 5): profiles and hashed char-n-gram style vectors."""
from __future__ import annotations

import zlib
from datetime import datetime, timedelta, timezone

import numpy as np

from app.domain.layers.engrams import (
    STYLE_DIM,
    _slot,
    build_profiles,
    message_style_vector,
    style_similarity,
    style_vector,
)
from app.domain.layers.events import LayerEvent

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
LINES = [
    ("Zoe", "omg hiii Max!!! guess what, my sister Lily got a puppy 🐶🐶"),
    ("Max", "Good morning, Zoe. That is wonderful news. What breed is it?"),
    ("Zoe", "a corgi!!! we took him to Riverside Park today lol 😍"),
    ("Max", "Corgis are delightful. I walked through Riverside Park on Sunday as well."),
    ("Zoe", "sooo cute right?? my sister wants to name him Biscuit haha"),
    ("Max", "Biscuit is a fine name. My brother named his terrier Pepper."),
    ("Zoe", "hahaha Pepper!!! love it 💕 the puppy loves the park"),
    ("Max", "I live in Portland now, by the way. The park there is lovely for dogs."),
]


def events():
    return [LayerEvent(f"e{i}", s, t, T0 + timedelta(minutes=i), "c1", seq=i) for i, (s, t) in enumerate(LINES)]


def test_the_hash_is_stable_and_signed():
    h = zlib.crc32("abc".encode())
    assert abs(_slot("abc")) == h % STYLE_DIM + 1
    assert (_slot("abc") > 0) == bool((h >> 8) & 1)


def test_style_vectors_are_unit_length_256d_and_deterministic():
    v = message_style_vector("Hello there, General Kenobi!")
    assert v.shape == (STYLE_DIM,) and np.isclose(np.linalg.norm(v), 1.0)
    assert np.array_equal(v, message_style_vector("Hello there, General Kenobi!"))
    assert np.linalg.norm(message_style_vector("")) == 0.0
    pooled = style_vector(["one message", "another message entirely"])
    assert np.isclose(np.linalg.norm(pooled), 1.0)


def test_profile_counts_style_and_relationships():
    p = build_profiles(events())
    zoe, max_ = p["Zoe"], p["Max"]
    assert zoe.message_count == 4 and max_.message_count == 4
    assert zoe.first_seen == T0 and max_.last_seen == T0 + timedelta(minutes=7)
    assert zoe.style.emoji_rate == 0.75 and max_.style.emoji_rate == 0.0
    assert zoe.style.exclamation_rate > max_.style.exclamation_rate
    assert max_.style.question_rate == 0.25
    assert zoe.style.mean_chars < max_.style.mean_chars
    assert zoe.addresses["Max"] >= 4 and max_.addresses["Zoe"] >= 4  # replies plus "Max"/"Zoe" by name
    assert zoe.mentions.get("my sister") == 2
    assert "Riverside Park" in max_.mentions and "Pepper" in max_.mentions
    assert max_.attributes.get("lives_in") == ["Portland"]
    assert "puppy" in dict(zoe.topics) or "sister" in dict(zoe.topics)
    assert len(zoe.style_vector) == STYLE_DIM


def test_style_vector_recognises_its_speaker():
    p = build_profiles(events())
    zoe_like = "lol ok!!! that's sooo funny 😂 omg"
    max_like = "Good evening. That is a delightful plan. I shall consider it as well."
    assert style_similarity(p["Zoe"].style_vector, zoe_like) > style_similarity(p["Max"].style_vector, zoe_like)
    assert style_similarity(p["Max"].style_vector, max_like) > style_similarity(p["Zoe"].style_vector, max_like)
