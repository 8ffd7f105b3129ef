"""Encoding gate: True Memory §4.1 Stage 1, eq. (1).

Three signals, each by its own mechanism:

* novelty n_t -- how much an event adds to the nearest stored events of its conversation, as gzip
  compression cost: n_t = (|gz(M || e)| - |gz(M)|) / |gz(e)|.
* salience s_t -- the event on its own: a speech-act rule classifier for texts of 50 characters or
  fewer (commitment 0.8, correction 0.6, question 0.2, noise 0.02, ...), content features for longer
  texts (numbers, dates, named things, emotion markers, first-person preferences).
* prediction error pi_t = 1 - cos(emb(e [SEP] m1), emb(m1 [SEP] m1)) against the nearest stored
  event m1: the event says something different about the same topic. Zero for noise and when m1 is
  off topic (cos(e, m1) below a threshold).

Admission (eq. 1): salience below the floor s_min = 0.10 is rejected whatever the score (so that
incompressible noise -- "lol", which is novel to any memory -- cannot pass on novelty alone);
above it, admit iff (λn·n + λs·s + λπ·π) / (λn + λs + λπ) >= τ + Δc.

Modes: `off` admits everything (the benchmark setting), `tag` admits everything and keeps the
signals, `filter` stores a rejected event with status `gated_out`. Nothing is discarded: a decision
is a pure function of stored signals, so `decide()` can re-gate stored events under new settings.

Pure logic: the caller passes the neighbour texts (nearest first) and an `encode` function.
"""
from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from typing import Callable, Literal, Sequence

import numpy as np

from app.domain.layers.text import (
    EMOJI_RE,
    calendar_words_in,
    capitalised_spans,
    emotion_markers,
    numbers_in,
    words,
)
from app.domain.layers.timeparse import find_time_expressions

LAYER_VERSION = "gate/1"

Mode = Literal["off", "tag", "filter"]
Encode = Callable[[list[str]], np.ndarray]

SHORT_TEXT_CHARS = 50
SEP = " [SEP] "

# Fixed speech-act scores for short texts (the paper gives commitment, correction, noise and
# question; decision, relationship and preference sit between them, statements are neutral).
SPEECH_ACT_SCORES = {
    "commitment": 0.80,
    "decision": 0.70,
    "correction": 0.60,
    "relationship": 0.60,
    "preference": 0.60,
    "statement": 0.30,
    "question": 0.20,
    "noise": 0.02,
}


@dataclass(frozen=True)
class GateConfig:
    mode: Mode = "tag"
    lambda_novelty: float = 0.25
    lambda_salience: float = 0.20
    lambda_prediction: float = 0.30
    tau: float = 0.30
    salience_floor: float = 0.10
    # Δc: lower bars for high-value categories (paper: correction -0.06, decision/relationship -0.04).
    category_offsets: dict[str, float] = field(
        default_factory=lambda: {"correction": -0.06, "decision": -0.04, "relationship": -0.04}
    )
    # Below this cosine the nearest stored event is about something else: no prediction error.
    topic_threshold: float = 0.30
    max_neighbours: int = 5

    def __post_init__(self) -> None:
        if self.mode not in ("off", "tag", "filter"):
            raise ValueError(f"unknown gate mode {self.mode!r}")


@dataclass(frozen=True)
class GateDecision:
    novelty: float
    salience: float
    prediction_error: float
    score: float
    category: str
    admitted: bool  # what happens under the configured mode
    status: Literal["admitted", "gated_out"]
    passed: bool  # the eq. (1) verdict itself, whatever the mode (what `filter` would do)
    threshold: float  # τ + Δc for this event's category
    layer_version: str = LAYER_VERSION


# ---------------------------------------------------------------- novelty

_GZIP_FRAME = len(gzip.compress(b"", compresslevel=6, mtime=0)) - 2  # header + trailer, no payload


def _gz(data: bytes) -> int:
    """Compressed payload size at level 6. The constant gzip frame is left out: it would make every
    short message look half-redundant, and it cancels in the numerator anyway."""
    return len(gzip.compress(data, compresslevel=6, mtime=0)) - _GZIP_FRAME


def novelty(text: str, neighbours: Sequence[str]) -> float:
    """n_t = (|gz(M || e)| - |gz(M)|) / |gz(e)|, clipped to [0, 1].

    1.0 when memory is empty; 0.05 when the event, or what it adds to M, compresses to under 10 bytes.
    """
    e = text.encode("utf-8")
    if not neighbours:
        return 1.0
    m = "\n".join(neighbours).encode("utf-8")
    alone = _gz(e)
    marginal = _gz(m + b"\n" + e) - _gz(m)
    if alone < 10 or marginal < 10:
        return 0.05
    return float(min(1.0, max(0.0, marginal / alone)))


# ---------------------------------------------------------------- salience

_NOISE_TOKENS = frozenset(
    """ok okay k kk lol lmao rofl haha hahaha hehe thanks thank you thx ty cool nice great sure yes yeah
    yep yup no nope hmm hm wow omg ugh right got it sounds good np problem welcome bye goodnight good
    night hi hello hey morning awesome alright fine indeed true same agreed totally lovely sweet
    congrats congratulations oh ah aw aww cheers yay woah whoa mhm uh um xd gotcha""".split()
)
_CORRECTION_RE = re.compile(
    r"\b(actually|correction|i meant|i mean|scratch that|my (mistake|bad)|i was wrong|to clarify|"
    r"not \w+,? but|rather than|instead of|no,? (it'?s|it is|wait|not)|wait,? (it'?s|no)|"
    r"(it'?s|it is|that'?s) \w+,? not \w+)\b",
    re.I,
)
_DECISION_RE = re.compile(
    r"\b((i|we)('ve| have)? decided|let'?s go with|(i'?m|i am|we'?re) going with|i chose|we chose|"
    r"i picked|we picked|we agreed|i settled on|final decision|i'?ll take the)\b",
    re.I,
)
_COMMITMENT_RE = re.compile(
    r"\b(i'?ll|i will|i'?m going to|i am going to|i'?m gonna|i promise|count me in|will do|"
    r"i can do that|remind me|let me (do|handle|take care|check))\b",
    re.I,
)
_RELATION_NOUNS = (
    r"wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|mom|mother|dad|father|sister|brother|son|"
    r"daughter|kids?|children|friend|boss|colleague|coworker|roommate|grandma|grandpa|grandmother|"
    r"grandfather|aunt|uncle|cousin|niece|nephew|parents"
)
_RELATIONSHIP_RE = re.compile(
    rf"\b(my ({_RELATION_NOUNS})|(got|getting|get) (married|engaged|divorced)|broke up|"
    r"(we'?re|we are) (dating|together|married|engaged))\b",
    re.I,
)
_PREFERENCE_RE = re.compile(
    r"\b(i (really |absolutely |just |truly )?(love|like|enjoy|prefer|hate|dislike|adore|can'?t stand)|"
    r"my favou?rite|i'?m (a )?(big |huge )?fan of|i'?m (really )?into|i'?m passionate about)\b",
    re.I,
)
_QUESTION_START_RE = re.compile(
    r"^(who|what|when|where|why|how|which|do|does|did|is|are|was|were|can|could|would|will|should|have|has)\b",
    re.I,
)


def _is_noise(text: str) -> bool:
    stripped = EMOJI_RE.sub(" ", text)
    toks = [w.lower().strip("'") for w in words(stripped)]
    if not toks:
        return True  # only emoji / punctuation
    return all(t in _NOISE_TOKENS or re.fullmatch(r"(ha)+h?|(he)+|l+o+l+|o+k+|y+a+y+", t) for t in toks)


def classify_speech_act(text: str) -> str:
    """One of: noise, correction, decision, commitment, relationship, preference, question, statement.

    Order matters: a correction phrased as a question is still a correction.
    """
    t = text.strip()
    if _is_noise(t):
        return "noise"
    for name, rx in (
        ("correction", _CORRECTION_RE),
        ("decision", _DECISION_RE),
        ("commitment", _COMMITMENT_RE),
        ("relationship", _RELATIONSHIP_RE),
        ("preference", _PREFERENCE_RE),
    ):
        if rx.search(t):
            if name == "commitment" and t.endswith("?"):
                continue  # "will you ...?" style questions are not promises
            return name
    if t.endswith("?") or _QUESTION_START_RE.match(t):
        return "question"
    return "statement"


def _has_date(text: str) -> bool:
    return bool(calendar_words_in(text) or find_time_expressions(text) or re.search(r"\b(19|20)\d\d\b", text))


def salience(text: str) -> tuple[float, str]:
    """(s_t, category). Short texts get the fixed speech-act score; longer ones a feature sum."""
    category = classify_speech_act(text)
    has_number = bool(numbers_in(text))
    has_date = _has_date(text)
    names = capitalised_spans(text)
    if len(text.strip()) <= SHORT_TEXT_CHARS:
        score = SPEECH_ACT_SCORES[category]
        if category == "statement" and (has_number or has_date or names):
            score += 0.15  # a short statement of fact ("Flight is at 7") beats small talk
        return round(score, 4), category
    if category == "noise":
        return SPEECH_ACT_SCORES["noise"], category
    s = 0.15 + 0.10 * min(1.0, len(text) / 300.0)
    s += 0.15 * has_number + 0.15 * has_date
    s += 0.05 * min(3, len(names))
    s += 0.05 * min(3, emotion_markers(text))
    if category == "preference":
        s += 0.30
    elif category in ("correction", "decision", "commitment", "relationship"):
        s += 0.20
    elif category == "question":
        s -= 0.05
    return round(float(min(1.0, max(0.0, s))), 4), category


# ---------------------------------------------------------------- prediction error

def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na and nb else 0.0


def prediction_error(
    text: str,
    nearest: str | None,
    encode: Encode,
    *,
    nearest_similarity: float | None = None,
    noise: bool = False,
    topic_threshold: float = 0.30,
) -> float:
    """π_t = 1 - cos(emb(e [SEP] m1), emb(m1 [SEP] m1)); 0 for noise, no neighbour or off topic."""
    return _prediction_errors([text], [nearest], encode, [nearest_similarity], [noise], topic_threshold)[0]


def _prediction_errors(
    texts: Sequence[str],
    nearest: Sequence[str | None],
    encode: Encode | None,
    similarities: Sequence[float | None],
    noise: Sequence[bool],
    topic_threshold: float,
) -> list[float]:
    """Batched: one encode call for every pair that survives the early exits."""
    todo = [
        i for i, m in enumerate(nearest)
        if m and not noise[i] and encode is not None
        and (similarities[i] is None or similarities[i] >= topic_threshold)  # type: ignore[operator]
    ]
    need_sim = [i for i in todo if similarities[i] is None]
    batch: list[str] = []
    for i in need_sim:
        batch += [texts[i], nearest[i]]  # type: ignore[list-item]
    for i in todo:
        batch += [texts[i] + SEP + nearest[i], nearest[i] + SEP + nearest[i]]  # type: ignore[operator]
    vecs = encode(batch) if batch and encode is not None else np.zeros((0, 1))
    sims = list(similarities)
    k = 0
    for i in need_sim:
        sims[i] = _cos(vecs[k], vecs[k + 1])
        k += 2
    out = [0.0] * len(texts)
    for i in todo:
        cross, self_ = vecs[k], vecs[k + 1]
        k += 2
        if sims[i] is not None and sims[i] < topic_threshold:  # type: ignore[operator]
            continue
        out[i] = float(min(1.0, max(0.0, 1.0 - _cos(cross, self_))))
    return out


# ---------------------------------------------------------------- eq. (1) and the decision

def gate_score(n: float, s: float, pi: float, config: GateConfig = GateConfig()) -> float:
    """Eq. (1), left side: the weight-normalised sum, in [0, 1]."""
    w = config.lambda_novelty + config.lambda_salience + config.lambda_prediction
    return (config.lambda_novelty * n + config.lambda_salience * s + config.lambda_prediction * pi) / w


def decide(
    novelty_: float, salience_: float, prediction_error_: float, category: str, config: GateConfig = GateConfig()
) -> GateDecision:
    """The decision from stored signals: what `regate` runs, no text or model needed."""
    score = gate_score(novelty_, salience_, prediction_error_, config)
    threshold = config.tau + config.category_offsets.get(category, 0.0)
    passed = salience_ >= config.salience_floor and score >= threshold
    admitted = passed if config.mode == "filter" else True
    return GateDecision(
        novelty=round(novelty_, 4),
        salience=round(salience_, 4),
        prediction_error=round(prediction_error_, 4),
        score=round(score, 4),
        category=category,
        admitted=admitted,
        status="admitted" if admitted else "gated_out",
        passed=passed,
        threshold=round(threshold, 4),
    )


def evaluate_batch(
    texts: Sequence[str],
    neighbours: Sequence[Sequence[str]],
    encode: Encode | None = None,
    config: GateConfig = GateConfig(),
    nearest_similarities: Sequence[float | None] | None = None,
) -> list[GateDecision]:
    """Gate a batch of events. `neighbours[i]` are the nearest stored events of event i's
    conversation, nearest first (the caller's vector or lexical search); `nearest_similarities[i]`
    is cos(e_i, neighbours[i][0]) when the caller already has it. Without `encode`, π = 0."""
    if len(neighbours) != len(texts):
        raise ValueError("one neighbour list per text")
    sal = [salience(t) for t in texts]
    nov = [novelty(t, list(nb)[: config.max_neighbours]) for t, nb in zip(texts, neighbours)]
    nearest = [nb[0] if len(nb) else None for nb in neighbours]
    sims = list(nearest_similarities) if nearest_similarities is not None else [None] * len(texts)
    noise = [cat == "noise" for _, cat in sal]
    pis = _prediction_errors(texts, nearest, encode, sims, noise, config.topic_threshold)
    return [decide(n, s, p, cat, config) for n, (s, cat), p in zip(nov, sal, pis)]


def evaluate(
    text: str,
    neighbours: Sequence[str],
    encode: Encode | None = None,
    config: GateConfig = GateConfig(),
    nearest_similarity: float | None = None,
) -> GateDecision:
    """Gate one event (see `evaluate_batch`)."""
    return evaluate_batch([text], [neighbours], encode, config, [nearest_similarity])[0]
