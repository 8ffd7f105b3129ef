"""L0 speaker engrams: True Memory §4.1 Stage 5.

Per speaker: a profile (message count, first/last seen, topic keywords, relationships = whom they
address and whom they mention, style features, and the attribute map of their standing assertions:
the paper's "speaker-preference attribute map") and a 256-d style vector of hashed character
3-, 4- and 5-grams, L2-normalised per message, mean-pooled over the speaker's messages and
re-normalised. The vector is part of the profile a client reads (`GET .../speakers?include_vectors=true`;
`style_similarity` is the cosine a client would use to ask "who writes like this?"); retrieval does
not read it: it is not one of the learned ranker's features, and no stage uses it as a prior.

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

from app.domain.layers.assertions import extract_assertions
from app.domain.layers.consolidation import LiveTimeline, current_values
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
    """Cosine between a speaker's style vector and one message (what the profile's vector means)."""
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


@lru_cache(maxsize=262144)
def _name_matches(token: str, speaker: str) -> bool:
    """"Sam" names "Samantha": a known speaker's name or a prefix of 3+ letters of it."""
    t, s = norm_name(token), norm_name(speaker)
    first = s.split(" ")[0] if s else ""
    return bool(t) and (t == s or t == first or (len(t) >= 3 and first.startswith(t)))


def build_profiles(events: Sequence[LayerEvent], top_topics: int = 12) -> dict[str, SpeakerProfile]:
    """One profile per speaker of one conversation (or of a tenant's whole history): the fold of
    every event, in time order, into an empty `EngramState` that knows every speaker."""
    evs = in_time_order(events)
    state = EngramState(list(dict.fromkeys(e.speaker for e in evs if e.speaker)))
    for e in evs:
        state.add(e)
    return state.profiles(top_topics)


def _pairs(c: Counter[str]) -> list[list]:
    return [[k, v] for k, v in c.items()]  # insertion order kept: it breaks most_common's ties


def _counter(pairs: list[list]) -> Counter[str]:
    return Counter({k: v for k, v in pairs})


@dataclass
class _Speaker:
    count: int = 0
    first: datetime | None = None
    last: datetime | None = None
    tf: Counter[str] = field(default_factory=Counter)  # content words
    replies: Counter[str] = field(default_factory=Counter)  # whom they replied to
    naming: Counter[str] = field(default_factory=Counter)  # speakers they named
    mentions: Counter[str] = field(default_factory=Counter)
    sums: list[int] = field(default_factory=lambda: [0] * 8)  # chars, words, ?, !, emoji, 1st person, letters, upper
    style_sum: np.ndarray = field(default_factory=lambda: np.zeros(STYLE_DIM, dtype=np.float32))

    def to_dict(self) -> dict:
        return {"count": self.count, "first": self.first.isoformat() if self.first else None,
                "last": self.last.isoformat() if self.last else None, "tf": _pairs(self.tf),
                "replies": _pairs(self.replies), "naming": _pairs(self.naming), "mentions": _pairs(self.mentions),
                "sums": self.sums, "style_sum": [float(x) for x in self.style_sum]}

    @classmethod
    def from_dict(cls, d: dict) -> "_Speaker":
        return cls(d["count"], datetime.fromisoformat(d["first"]) if d["first"] else None,
                   datetime.fromisoformat(d["last"]) if d["last"] else None, _counter(d["tf"]),
                   _counter(d["replies"]), _counter(d["naming"]), _counter(d["mentions"]), list(d["sums"]),
                   np.asarray(d["style_sum"], dtype=np.float32))


@dataclass
class EngramState:
    """The engrams of a conversation as a fold over its events in time order: per speaker the
    counters the profile is computed from, the conversation's document frequencies, and the live
    assertions (`LiveTimeline`). `add` is O(one event); `profiles` is O(vocabulary), not O(log).
    The state knows its speakers up front (names are told apart from topics and mentions by them):
    an event by a speaker it does not know needs a fold from scratch (`knows`)."""

    speakers: list[str]
    events: int = 0
    df: Counter[str] = field(default_factory=Counter)
    prev_speaker: str | None = None
    per: dict[str, _Speaker] = field(default_factory=dict)
    timeline: LiveTimeline = field(default_factory=LiveTimeline)

    def knows(self, speakers: Sequence[str]) -> bool:
        return set(s for s in speakers if s) <= set(self.speakers)

    def add(self, e: LayerEvent) -> None:
        t = e.content
        self.events += 1
        self.df.update(set(content_words(t)))
        self.timeline.add(extract_assertions(e))
        prev, self.prev_speaker = self.prev_speaker, e.speaker
        if not e.speaker:
            return  # events without a speaker have no engram
        sp = self.per.setdefault(e.speaker, _Speaker())
        sp.count += 1
        sp.first = sp.first or e.occurred_at
        sp.last = e.occurred_at
        sp.tf.update(content_words(t))
        if e.recipient:
            sp.replies[e.recipient] += 1
        elif prev and prev != e.speaker:
            sp.replies[prev] += 1
        known = frozenset(norm_name(s) for s in self.speakers)
        for span in capitalised_spans(t, known):
            other = next((s for s in self.speakers if s != e.speaker and _name_matches(span, s)), None)
            if other:
                sp.naming[other] += 1  # naming someone in conversation is addressing them
            elif not _name_matches(span, e.speaker):
                sp.mentions[span] += 1
        for m in _FAMILY_RE.finditer(t):
            sp.mentions[f"my {m.group(1).lower()}"] += 1
        toks = words(t)
        for i, v in enumerate((len(t), len(toks), "?" in t, "!" in t, bool(EMOJI_RE.search(t)),
                               sum(w.lower().replace("’", "'") in _FIRST_PERSON for w in toks),
                               sum(c.isalpha() for c in t), sum(c.isupper() for c in t))):
            sp.sums[i] += int(v)
        sp.style_sum += message_style_vector(t)

    def profiles(self, top_topics: int = 12) -> dict[str, SpeakerProfile]:
        n_docs = max(1, self.events)
        standing = current_values(self.timeline.standing())
        out: dict[str, SpeakerProfile] = {}
        for speaker in self.speakers:
            sp = self.per.get(speaker)
            if sp is None or not sp.count:
                continue
            scored = {
                w: c * math.log((n_docs + 1) / (self.df[w] + 0.5))
                for w, c in sp.tf.items()
                if c >= 2 and not any(_name_matches(w, s) for s in self.speakers)  # "mel" is a name, not a topic
            }
            top = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:top_topics]
            total = sum(v for _, v in top) or 1.0
            addresses = Counter(sp.replies)
            for k, v in sp.naming.items():
                addresses[k] += v
            n = sp.count
            chars, n_words, q, ex, emo, fp, letters, upper = sp.sums
            style = StyleFeatures(
                mean_chars=round(chars / n, 2), mean_words=round(n_words / n, 2), question_rate=round(q / n, 4),
                exclamation_rate=round(ex / n, 4), emoji_rate=round(emo / n, 4),
                first_person_rate=round(fp / max(1, n_words), 4), uppercase_rate=round(upper / max(1, letters), 4))
            m = sp.style_sum / np.float32(n)
            norm = float(np.linalg.norm(m))
            vec = (m / norm if norm else m).astype(np.float32)
            out[speaker] = SpeakerProfile(
                speaker=speaker,
                message_count=n,
                first_seen=sp.first,  # type: ignore[arg-type]
                last_seen=sp.last,  # type: ignore[arg-type]
                topics=[(w, round(v / total, 4)) for w, v in top],
                addresses=dict(addresses.most_common()),
                mentions=dict(sp.mentions.most_common(20)),
                style=style,
                attributes={attr: vals for (ent, attr), vals in standing.items() if norm_name(ent) == norm_name(speaker)},
                style_vector=[round(float(x), 6) for x in vec],
            )
        return out

    def to_dict(self) -> dict:
        return {"version": LAYER_VERSION, "speakers": self.speakers, "events": self.events, "df": _pairs(self.df),
                "prev_speaker": self.prev_speaker, "per": {k: v.to_dict() for k, v in self.per.items()},
                "timeline": self.timeline.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> "EngramState | None":
        if d.get("version") != LAYER_VERSION:
            return None
        return cls(list(d["speakers"]), int(d["events"]), _counter(d["df"]), d["prev_speaker"],
                   {k: _Speaker.from_dict(v) for k, v in d["per"].items()}, LiveTimeline.from_dict(d["timeline"]))
