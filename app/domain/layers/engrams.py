"""L0 speaker engrams: True Memory §4.1 Stage 5.

Per speaker: a profile (message count, first/last seen, topic keywords, relationships = whom they
address and whom they mention, style features, and the attribute map of their standing assertions:
the paper's "speaker-preference attribute map") and a 256-d style vector of hashed character
3-, 4- and 5-grams, L2-normalised per message, mean-pooled over the speaker's messages and
re-normalised. At query time the style vector is a retrieval prior: `style_similarity` scores a
message by cosine to a speaker's vector.

The n-gram hash is CRC-32 (stable across processes; Python's hash() is salted per process), with
its 9th bit as a sign so that collisions cancel rather than pile up (signed feature hashing).
"""
from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Sequence

import numpy as np

from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline, current_values
from app.domain.layers.events import LayerEvent, in_time_order
from app.domain.layers.text import EMOJI_RE, capitalised_spans, content_words, norm_name, words

LAYER_VERSION = "engrams/1"
STYLE_DIM = 256
NGRAM_SIZES = (3, 4, 5)

_FAMILY_RE = re.compile(
    r"\b(?:my|our)\s+((?:little\s+|older\s+|younger\s+|best\s+)?(?:wife|husband|partner|girlfriend|boyfriend|"
    r"fianc[ée]e?|mom|mum|mother|dad|father|sister|brother|son|daughter|kids|children|friends?|boss|"
    r"roommate|grandma|grandpa|grandmother|grandfather|aunt|uncle|cousin|parents|family|dog|cat|pets?))\b",
    re.I,
)
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})


@dataclass(frozen=True)
class StyleFeatures:
    mean_chars: float
    mean_words: float
    question_rate: float  # share of messages with a question mark
    exclamation_rate: float
    emoji_rate: float  # share of messages with an emoji or emoticon
    first_person_rate: float  # first-person pronouns per word
    uppercase_rate: float  # share of letters in upper case


@dataclass(frozen=True)
class SpeakerProfile:
    speaker: str
    message_count: int
    first_seen: datetime
    last_seen: datetime
    topics: list[tuple[str, float]]  # distinctive keywords with weights
    addresses: dict[str, int]  # speaker -> how often this speaker replies to / names them
    mentions: dict[str, int]  # named things and family members they talk about
    style: StyleFeatures
    attributes: dict[str, list[str]]  # standing assertions: "lives_in" -> ["Denver"]
    style_vector: list[float] = field(repr=False)
    layer_version: str = LAYER_VERSION


@lru_cache(maxsize=262144)
def _slot(gram: str) -> int:
    """Signed bucket: +(index+1) or -(index+1)."""
    h = zlib.crc32(gram.encode("utf-8"))
    return (h % STYLE_DIM + 1) * (1 if (h >> 8) & 1 else -1)


def message_style_vector(text: str) -> np.ndarray:
    """Hashed char 3-5-gram counts of one message, L2-normalised (zeros for an empty message)."""
    v = np.zeros(STYLE_DIM, dtype=np.float32)
    t = f" {text} "
    for n in NGRAM_SIZES:
        for i in range(len(t) - n + 1):
            s = _slot(t[i : i + n])
            v[abs(s) - 1] += 1.0 if s > 0 else -1.0
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


def style_vector(texts: Sequence[str]) -> np.ndarray:
    """Mean of the per-message vectors, re-normalised."""
    if not texts:
        return np.zeros(STYLE_DIM, dtype=np.float32)
    m = np.mean([message_style_vector(t) for t in texts], axis=0)
    norm = float(np.linalg.norm(m))
    return (m / norm if norm else m).astype(np.float32)


def style_similarity(speaker_vector: Sequence[float] | np.ndarray, text: str) -> float:
    """Cosine between a speaker's style vector and one message (the query-time L0 prior)."""
    return float(np.asarray(speaker_vector, dtype=np.float32) @ message_style_vector(text))


def style_features(texts: Sequence[str]) -> StyleFeatures:
    n = max(1, len(texts))
    toks = [words(t) for t in texts]
    n_words = sum(len(t) for t in toks)
    letters = sum(sum(c.isalpha() for c in t) for t in texts)
    upper = sum(sum(c.isupper() for c in t) for t in texts)
    return StyleFeatures(
        mean_chars=round(sum(len(t) for t in texts) / n, 2),
        mean_words=round(n_words / n, 2),
        question_rate=round(sum("?" in t for t in texts) / n, 4),
        exclamation_rate=round(sum("!" in t for t in texts) / n, 4),
        emoji_rate=round(sum(bool(EMOJI_RE.search(t)) for t in texts) / n, 4),
        first_person_rate=round(sum(w.lower().replace("’", "'") in _FIRST_PERSON for t in toks for w in t) / max(1, n_words), 4),
        uppercase_rate=round(upper / max(1, letters), 4),
    )


def _name_matches(token: str, speaker: str) -> bool:
    """"Sam" names "Samantha": a known speaker's name or a prefix of 3+ letters of it."""
    t, s = norm_name(token), norm_name(speaker)
    first = s.split(" ")[0] if s else ""
    return bool(t) and (t == s or t == first or (len(t) >= 3 and first.startswith(t)))


def build_profiles(events: Sequence[LayerEvent], top_topics: int = 12) -> dict[str, SpeakerProfile]:
    """One profile per speaker of one conversation (or of a tenant's whole history)."""
    evs = in_time_order(events)
    by_speaker: dict[str, list[LayerEvent]] = {}
    for e in evs:
        by_speaker.setdefault(e.speaker, []).append(e)
    speakers = [s for s in by_speaker if s]
    known = frozenset(norm_name(s) for s in speakers)

    # topics: speaker term frequency against document frequency over all speakers' messages (tf-idf)
    df: Counter[str] = Counter()
    for e in evs:
        df.update(set(content_words(e.content)))
    n_docs = max(1, len(evs))

    timeline, _ = build_timeline(extract_all(evs))
    standing = current_values(timeline)

    profiles: dict[str, SpeakerProfile] = {}
    prev_speaker: str | None = None
    replies: dict[str, Counter[str]] = {s: Counter() for s in by_speaker}
    for e in evs:
        if e.recipient:
            replies[e.speaker][e.recipient] += 1
        elif prev_speaker and prev_speaker != e.speaker:
            replies[e.speaker][prev_speaker] += 1
        prev_speaker = e.speaker
    for speaker, items in by_speaker.items():
        if not speaker:
            continue  # events without a speaker have no engram
        texts = [e.content for e in items]
        tf: Counter[str] = Counter(w for t in texts for w in content_words(t))
        scored = {
            w: c * math.log((n_docs + 1) / (df[w] + 0.5))
            for w, c in tf.items()
            if c >= 2 and not any(_name_matches(w, s) for s in speakers)  # "mel" is a name, not a topic
        }
        top = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:top_topics]
        total = sum(v for _, v in top) or 1.0
        addresses = Counter(replies[speaker])
        mentions: Counter[str] = Counter()
        for t in texts:
            for span in capitalised_spans(t, known):
                other = next((s for s in speakers if s != speaker and _name_matches(span, s)), None)
                if other:
                    addresses[other] += 1  # naming someone in conversation is addressing them
                elif not _name_matches(span, speaker):
                    mentions[span] += 1
            for m in _FAMILY_RE.finditer(t):
                mentions[f"my {m.group(1).lower()}"] += 1
        attrs = {attr: vals for (ent, attr), vals in standing.items() if norm_name(ent) == norm_name(speaker)}
        profiles[speaker] = SpeakerProfile(
            speaker=speaker,
            message_count=len(items),
            first_seen=items[0].occurred_at,
            last_seen=items[-1].occurred_at,
            topics=[(w, round(v / total, 4)) for w, v in top],
            addresses=dict(addresses.most_common()),
            mentions=dict(mentions.most_common(20)),
            style=style_features(texts),
            attributes=attrs,
            style_vector=[round(float(x), 6) for x in style_vector(texts)],
        )
    return profiles
