"""Stage 1: intent routing (PRISM N4, eq. 7; Cortex §3.3 intent weight profiles).

A three-tier cascade, cheapest first:

1. **keyword** — high-precision English patterns on question form and trigger phrases ("when ...",
   "why ...", "what led to", "favourite", "currently", ...). Commits when any rule fires.
2. **prototype** — the query embedding against a small bank of prototype questions per label,
   embedded once per encoder and cached. Commits the best label only when its best cosine exceeds
   θ = 0.55 AND beats the runner-up label by a margin of 0.10 (PRISM Table 5).
3. **llm** — only when an LLM is configured (an OpenAI-compatible chat endpoint over httpx): the LLM
   scores every label in [0, 1]; the best at ≥ 0.5 wins. Any error falls back to `general`.

Labels: temporal, causal, multi_hop, entity_centric, knowledge_update, preference, general. Each has a
weight profile over the retrieval signals (lexical, dense, graph, recency, temporal, expansion) for
weighted RRF. The profile is blended with `general` by the routing confidence, so a weak label moves
the weights only a little. The profiles are engineering defaults in the spirit of Cortex's (§6.4:
lexical and heat/recency weights balanced across benchmarks); the benchmark's ablations tune them.

Independently of the label, the question's own time expression ("last summer", "in May 2023",
"yesterday", "between March and June", "before 2022") is resolved against a reference time into a
half-open window [start, end) (`None` for an open end); the reweighting stage boosts candidates inside it.
"""
from __future__ import annotations

import calendar
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

import numpy as np

from app.models.llm import LLMConfig, chat

LABELS = ("temporal", "causal", "multi_hop", "entity_centric", "knowledge_update", "preference", "general")
SIGNALS = ("lexical", "dense", "graph", "recency", "temporal", "expansion")

PROTOTYPE_THRESHOLD = 0.55  # PRISM Table 5, θ_proto
PROTOTYPE_MARGIN = 0.10  # PRISM Table 5, top-2 margin
LLM_THRESHOLD = 0.5

# Weight profiles (weighted RRF, eq. 3). `general` keeps lexical = dense = 1 (today's fusion).
PROFILES: dict[str, dict[str, float]] = {
    "general":          {"lexical": 1.0, "dense": 1.0, "graph": 0.4, "recency": 0.2, "temporal": 0.2, "expansion": 0.5},
    "temporal":         {"lexical": 1.0, "dense": 1.0, "graph": 0.4, "recency": 0.2, "temporal": 1.0, "expansion": 0.3},
    "causal":           {"lexical": 0.8, "dense": 1.0, "graph": 0.8, "recency": 0.1, "temporal": 0.2, "expansion": 0.6},
    "multi_hop":        {"lexical": 0.8, "dense": 1.0, "graph": 1.0, "recency": 0.1, "temporal": 0.3, "expansion": 0.8},
    "entity_centric":   {"lexical": 1.2, "dense": 1.0, "graph": 0.8, "recency": 0.2, "temporal": 0.1, "expansion": 0.3},
    "knowledge_update": {"lexical": 1.0, "dense": 1.0, "graph": 0.5, "recency": 0.8, "temporal": 0.3, "expansion": 0.3},
    "preference":       {"lexical": 0.7, "dense": 1.2, "graph": 0.5, "recency": 0.4, "temporal": 0.1, "expansion": 0.6},
}

Window = tuple[datetime | None, datetime | None]
Encode = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Intent:
    label: str
    confidence: float
    tier: str  # "keyword" | "prototype" | "llm" | "default"
    weights: dict[str, float]
    time_window: Window | None = None  # half-open [start, end); None for an open end
    time_expression: str | None = None
    labels: frozenset[str] = frozenset()  # every label with evidence (PRISM's h(q) is a set)
    scores: dict[str, float] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()  # the rules / prototype / model answer that decided

    def in_window(self, when: datetime | date | None) -> bool:
        return in_window(when, self.time_window)

    def to_dict(self) -> dict[str, Any]:
        w = None
        if self.time_window is not None:
            w = [d.isoformat() if d else None for d in self.time_window]
        return {
            "label": self.label, "confidence": round(self.confidence, 4), "tier": self.tier,
            "weights": {k: round(v, 4) for k, v in self.weights.items()}, "time_window": w,
            "time_expression": self.time_expression, "labels": sorted(self.labels),
            "scores": {k: round(v, 4) for k, v in self.scores.items()}, "evidence": list(self.evidence),
        }


def profile_weights(label: str, confidence: float = 1.0) -> dict[str, float]:
    """The label's profile blended with `general` by confidence: c·profile + (1 − c)·general."""
    c = min(1.0, max(0.0, confidence))
    prof, gen = PROFILES.get(label, PROFILES["general"]), PROFILES["general"]
    return {s: round(c * prof[s] + (1.0 - c) * gen[s], 6) for s in SIGNALS}


# ------------------------------------------------------------------ tier 1: keyword rules

_R = lambda p: re.compile(p, re.I)  # noqa: E731

# (label, name, pattern, strength). Question-initial wh-words are the strongest cues.
RULES: list[tuple[str, str, re.Pattern[str], float]] = [
    # temporal: when, what year/month/date, how long, ordering, durations
    ("temporal", "when", _R(r"^\s*(?:and\s+|so\s+)?when\b"), 0.95),
    ("temporal", "what-time-unit", _R(r"\b(?:what|which)\s+(?:year|month|day|date|time|week|season|decade)\b"), 0.9),
    ("temporal", "how-long", _R(r"\bhow\s+long\b"), 0.9),
    ("temporal", "since-when", _R(r"\bsince\s+when\b|\bhow\s+(?:many|much)\s+(?:days|weeks|months|years|time)\b"), 0.9),
    ("temporal", "order", _R(r"\b(?:in\s+what\s+order|which\s+came\s+first|first\s+time|last\s+time|"
                             r"(?:before|after)\s+or\s+(?:before|after)|earlier\s+than|later\s+than|"
                             r"how\s+(?:long\s+)?ago)\b"), 0.85),
    ("temporal", "when-clause", _R(r"\bwhen\s+did\b|\bat\s+what\s+(?:age|point)\b"), 0.85),
    # causal
    ("causal", "why", _R(r"^\s*(?:and\s+|so\s+)?why\b|\bhow\s+come\b"), 0.95),
    ("causal", "what-caused", _R(r"\bwhat\s+(?:caused|causes|led|leads|made|makes|motivated|motivates|inspired|"
                                r"inspires|prompted|prompts|drove|drives|triggered|pushed|encouraged)\b"), 0.9),
    ("causal", "reason", _R(r"\b(?:reasons?|motivations?|cause|causes|purpose)\s+(?:for|of|why|behind)\b|"
                           r"\bwhat\s+was\s+the\s+(?:reason|cause|motivation)\b|\bas\s+a\s+result\s+of\b|"
                           r"\bbecause\s+of\s+what\b|\bwhy\b"), 0.85),
    ("causal", "effect", _R(r"\bwhat\s+(?:happened|was\s+the\s+(?:result|outcome|effect|impact))\s+"
                           r"(?:as\s+a\s+result|because|after\s+that)\b|\b(?:consequences?|effects?)\s+of\b"), 0.8),
    # knowledge update: the current value of something that may have changed
    ("knowledge_update", "current", _R(r"\b(?:currently|current|nowadays|these\s+days|at\s+the\s+moment|"
                                      r"right\s+now|at\s+present|presently|as\s+of\s+now)\b"), 0.9),
    ("knowledge_update", "now-final", _R(r"\bnow\s*[?.!]*\s*$"), 0.85),
    ("knowledge_update", "still", _R(r"\b(?:still|anymore|any\s+more|no\s+longer|latest|most\s+recent(?:ly)?|"
                                    r"up\s+to\s+date|updated?|changed?\s+(?:to|from|her|his|their|its)|"
                                    r"switch(?:ed)?\s+(?:to|from))\b"), 0.85),
    ("knowledge_update", "recently", _R(r"\b(?:recently|lately|these\s+days|new\s+(?:job|home|house|apartment|"
                                       r"car|address|partner|boyfriend|girlfriend|phone))\b"), 0.75),
    # preference
    ("preference", "favourite", _R(r"\bfavou?rites?\b|\bprefer(?:s|red|ence|ences)?\b"), 0.9),
    ("preference", "likes", _R(r"\b(?:like|likes|love|loves|enjoy|enjoys|dislike|dislikes|hate|hates)\s+"
                              r"(?:to|doing|the\s+most|most|best|about)\b|\bwhat\s+(?:kind|kinds|type|types|sort|sorts)"
                              r"\s+of\s+\w+(?:\s+\w+)?\s+(?:does|do|did|would|might)\s+\w+\s+(?:like|enjoy|love|prefer)\b"), 0.85),
    ("preference", "recommend", _R(r"\b(?:recommend|suggest|suggestions?|recommendations?|should\s+(?:I|we)\s+"
                                  r"(?:try|get|buy|watch|read|cook|visit))\b|\binterested\s+in\b|\bhobb(?:y|ies)\b|"
                                  r"\btaste\s+in\b"), 0.8),
    ("preference", "likes-final", _R(r"\b(?:like|likes|love|loves|enjoy|enjoys|prefer|prefers)\s*[?.!]*\s*$"), 0.8),
    # multi-hop: combining, inference, aggregation across events
    ("multi_hop", "combine", _R(r"\b(?:based\s+on|given\s+that|considering|in\s+common|both\s+of|both\b.+\band\b|\band\b.+\bboth\b|"
                               r"relate\s+to|related\s+to|relationship\s+between|compare|compared|comparison|"
                               r"differ(?:ence|ent)?\s+(?:between|from)|similar(?:ities)?\s+(?:between|to)|"
                               r"across|over\s+time|pattern|trend|overall|in\s+total|altogether)\b"), 0.85),
    ("multi_hop", "inference", _R(r"\b(?:would|could|might)\s+\w+(?:\s+\w+)?\s+(?:likely|probably|be\s+considered|"
                                 r"be\s+interested|want|enjoy|be\s+open|be\s+more|be\s+a\s+good)\b|\blikely\b|"
                                 r"\bprobably\b|\bwhat\s+might\b|\bis\s+it\s+likely\b"), 0.8),
    ("multi_hop", "aggregate", _R(r"\bhow\s+many\s+(?:times|different|kinds|types|of\s+the)\b|"
                                 r"\bhow\s+many\s+\w+\s+(?:has|have|had|did)\b|\ball\s+(?:the\s+)?"
                                 r"(?:places|things|events|activities|books|people|times|ways)\b|\bwhat\s+are\s+"
                                 r"(?:some|all|the)\b.*\b(?:has|have|did)\b|\bwhich\s+(?:\w+\s+)?(?:both|each)\b"), 0.75),
    # entity-centric: a stored attribute of a named thing
    ("entity_centric", "who", _R(r"^\s*who\b|\bwho\s+(?:is|was|are|were)\b"), 0.8),
    ("entity_centric", "attribute", _R(r"\b(?:what|where)\s+(?:is|was|are|were)\s+(?:[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?'s|"
                                      r"(?:his|her|their|its|the)\s+name)\b|\bwhat\s+is\s+the\s+name\s+of\b|"
                                      r"\bwhere\s+(?:does|did|do)\s+\w+\s+(?:live|work|study|come\s+from|grow\s+up)\b|"
                                      r"\bwhat\s+(?:does|did)\s+\w+\s+do\s+for\s+(?:a\s+)?(?:living|work)\b|"
                                      r"\b(?:job|occupation|profession|age|birthday|nationality|hometown)\s+of\b"), 0.8),
]

# Resolution order when several labels fire at the same strength (first wins): wh-form labels first,
# then the specific routing labels, then the broad ones. MULTI_HOP suppresses ENTITY_CENTRIC (PRISM §3.6).
_PRIORITY = ("causal", "temporal", "knowledge_update", "preference", "multi_hop", "entity_centric", "general")


def keyword_scores(query: str) -> tuple[dict[str, float], list[str]]:
    """Per-label strongest rule strength, and the names of the rules that fired."""
    scores: dict[str, float] = {}
    fired: list[str] = []
    for label, name, rx, strength in RULES:
        if rx.search(query):
            fired.append(f"{label}:{name}")
            scores[label] = max(scores.get(label, 0.0), strength)
    if "multi_hop" in scores and "entity_centric" in scores:
        scores.pop("entity_centric")
    return scores, fired


def _pick(scores: Mapping[str, float]) -> tuple[str, float]:
    best = max(scores.values())
    for label in _PRIORITY:
        if scores.get(label) == best:
            return label, best
    return max(scores.items(), key=lambda kv: kv[1])  # pragma: no cover - labels outside _PRIORITY


# ------------------------------------------------------------------ tier 2: prototypes

# Generic prototype questions (no data set's names or topics). PRISM used 46 over four labels.
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "temporal": (
        "When did this happen?", "What date did she start the new job?", "How long ago did they meet?",
        "What year did he move to the city?", "Which happened first, the trip or the wedding?",
        "How long has she been doing that?", "On which day did they go there?",
        "At what point did he decide to leave?",
    ),
    "causal": (
        "Why did she decide to do that?", "What was the reason he quit?", "What led them to move away?",
        "What made her change her mind?", "What motivated him to start?", "What caused the problem?",
        "What inspired her to begin painting?", "How come they stopped talking?",
    ),
    "multi_hop": (
        "What do these two people have in common?", "Based on everything he said, what would he probably enjoy?",
        "Would she likely be interested in joining?", "How did his feelings about work change over time?",
        "What activities has she done with her family across all our conversations?",
        "Given what happened before, what might she do next?", "How are these two events connected?",
        "What are all the places they have visited?",
    ),
    "entity_centric": (
        "Who is her best friend?", "What is his sister's name?", "Where does she live?",
        "What does he do for a living?", "What kind of dog does she have?", "What is the name of their band?",
        "Who did he go to the concert with?", "What car does she drive?",
    ),
    "knowledge_update": (
        "Where does she live now?", "What is his current job?", "Is she still working at the same company?",
        "What is the latest update on the project?", "Has he changed his plans since then?",
        "What does she use these days?", "Which phone does he have at the moment?",
    ),
    "preference": (
        "What is her favorite food?", "What kind of music does he like?", "Which do they prefer, tea or coffee?",
        "What books would you recommend for her?", "What does she enjoy doing on weekends?",
        "What are his hobbies?", "What type of movies does she dislike?",
    ),
    "general": (
        "Tell me more about that.", "What did they talk about?", "What did she say?", "What happened?",
        "Can you summarize the conversation?", "What was discussed?",
    ),
}


class PrototypeBank:
    """Prototype embeddings for one encoder, computed once (thread-safe) and reused."""

    def __init__(self, encode: Encode, prototypes: Mapping[str, Sequence[str]] = PROTOTYPES):
        self._encode = encode
        self._prototypes = {k: tuple(v) for k, v in prototypes.items() if v}
        self._lock = threading.Lock()
        self._labels: list[str] | None = None
        self._texts: list[str] = []
        self._matrix: np.ndarray | None = None

    def _ensure(self) -> None:
        if self._matrix is not None:
            return
        with self._lock:
            if self._matrix is not None:
                return
            labels, texts = [], []
            for label, protos in self._prototypes.items():
                labels += [label] * len(protos)
                texts += list(protos)
            m = np.asarray(self._encode(texts), dtype=np.float32)
            m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
            self._labels, self._texts, self._matrix = labels, texts, m

    def scores(self, qvec: np.ndarray) -> tuple[dict[str, float], dict[str, str]]:
        """Per label: the best cosine to one of its prototypes, and which prototype that was."""
        self._ensure()
        assert self._matrix is not None and self._labels is not None
        q = np.asarray(qvec, dtype=np.float32).reshape(-1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        sims = self._matrix @ q
        best: dict[str, float] = {}
        which: dict[str, str] = {}
        for label, text, s in zip(self._labels, self._texts, sims.tolist()):
            if s > best.get(label, -2.0):
                best[label], which[label] = float(s), text
        return best, which


def prototype_decision(scores: Mapping[str, float], threshold: float = PROTOTYPE_THRESHOLD,
                       margin: float = PROTOTYPE_MARGIN) -> str | None:
    """The committed label, or None: top-1 above `threshold` and ahead of the runner-up by `margin`."""
    if not scores:
        return None
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    top_label, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else -1.0
    if top > threshold and top - second >= margin:
        return top_label
    return None


# ------------------------------------------------------------------ tier 3: LLM

# LLMConfig lives with the one HTTP client every LLM use shares (app/models/llm.py).
_LLM_SYSTEM = (
    "You classify questions that an assistant asks of its long-term conversation memory. "
    "Reply with one JSON object only, no prose."
)
_LLM_USER = """Score how strongly the question below shows each intent, from 0.0 to 1.0. Several may be high.

- temporal: asks when something happened, for how long, or in what order.
- causal: asks why something happened, its reason, motivation or consequence.
- multi_hop: needs several separate facts combined, or an inference, comparison or count across conversations.
- entity_centric: looks up one stored attribute of a named person, place or thing.
- knowledge_update: asks for the current or latest value of something that may have changed.
- preference: asks what someone likes, prefers, enjoys or would recommend.

A vague continuation ("go on", "tell me more") scores 0.0 everywhere.

Question: {query}

Answer with exactly: {{"temporal": x, "causal": x, "multi_hop": x, "entity_centric": x, "knowledge_update": x, "preference": x}}"""


def llm_scores(query: str, cfg: LLMConfig, client: Any | None = None) -> dict[str, float]:
    """Ask an OpenAI-compatible chat endpoint for per-label scores. Raises on any failure."""
    content = chat(cfg, [{"role": "system", "content": _LLM_SYSTEM},
                         {"role": "user", "content": _LLM_USER.format(query=query)}], max_retries=0, client=client)
    m = re.search(r"\{.*\}", content, re.S)
    if not m:
        raise ValueError(f"no JSON object in the LLM reply: {content[:200]!r}")
    raw = json.loads(m.group(0))
    out = {k: min(1.0, max(0.0, float(raw[k]))) for k in LABELS if k != "general" and k in raw}
    if not out:
        raise ValueError(f"no intent scores in the LLM reply: {content[:200]!r}")
    return out


# ------------------------------------------------------------------ time windows

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MON = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|" \
       r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_NUMWORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2,
             "a few": 3, "few": 3, "several": 3}
_YEAR = r"(?:19|20)\d\d"
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
_NUM = r"(?:\d+|a couple of|a couple|a few|several|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"

# Atomic expressions: (kind, regex). Months must be capitalised ("may" is also a verb).
_ATOMS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(rf"\b({_YEAR})-(\d\d)-(\d\d)\b")),
    ("day_month", re.compile(rf"\b(?:the\s+)?({_ORD})\s+(?:of\s+)?({_MON})(?:,?\s+({_YEAR}))?\b")),
    ("month_day", re.compile(rf"\b({_MON})\s+({_ORD})\b(?!\s*(?:am|pm|:))(?:,?\s+({_YEAR}))?")),
    ("part_month", re.compile(rf"\b(early|mid|middle\s+of|late|end\s+of|beginning\s+of|start\s+of)[\s-]+({_MON})(?:,?\s+({_YEAR}))?\b", re.I)),
    ("rel_month", re.compile(rf"\b(last|this|next|this\s+past|past)\s+({_MON})(?!\s*{_YEAR})\b")),
    ("month_year", re.compile(rf"\b({_MON}),?\s+({_YEAR})\b")),
    ("in_month", re.compile(rf"\b(?:in|during|of|for)\s+({_MON})(?!\s*\d)\b")),
    ("season_year", re.compile(rf"\b(?:the\s+)?(spring|summer|fall|autumn|winter)\s+(?:of\s+)?({_YEAR})\b", re.I)),
    ("rel_season", re.compile(r"\b(last|this|next|this\s+past|past)\s+(spring|summer|fall|autumn|winter)\b", re.I)),
    ("in_season", re.compile(r"\b(?:in|during|over)\s+(?:the\s+)?(spring|summer|fall|autumn|winter)\b", re.I)),
    ("day_word", re.compile(r"\b(the\s+day\s+before\s+yesterday|yesterday|today|tonight|last\s+night|"
                            r"this\s+(?:morning|afternoon|evening)|tomorrow)\b", re.I)),
    ("ago", re.compile(rf"\b({_NUM})\s+(day|week|month|year)s?\s+(?:ago|back|earlier)\b", re.I)),
    ("rel_unit", re.compile(r"\b(last|this|next|past|this\s+past|previous)\s+(week|weekend|month|year)\b", re.I)),
    ("weekday", re.compile(r"\b(last|this\s+past|past|this|next|on)\s+(monday|tuesday|wednesday|thursday|friday|"
                           r"saturday|sunday)\b", re.I)),
    ("year", re.compile(rf"\b(?:in|during|of|since|by|until|before|after|from|for)\s+(?:the\s+year\s+)?({_YEAR})\b|^\s*({_YEAR})\b|\b({_YEAR})\s*\??$", re.I)),
]


_MONTH_RANGE = re.compile(
    rf"\b(?:between|from)\s+({_MON})(?:,?\s+({_YEAR}))?\s+(?:and|to|until|till|through|-)\s+({_MON})(?:,?\s+({_YEAR}))?\b"
)


def _int(tok: str) -> int:
    return int(re.sub(r"\D", "", tok))


def _month_num(tok: str) -> int:
    return _MONTHS[tok.lower().rstrip(".")]


def _month_span(y: int, m: int) -> tuple[date, date]:
    return date(y, m, 1), date(y, m, calendar.monthrange(y, m)[1]) + timedelta(days=1)


def _season_span(y: int, name: str) -> tuple[date, date]:
    m0 = _SEASONS[name.lower()]
    start = date(y, m0, 1)
    em, ey = (m0 + 2 - 1) % 12 + 1, y + (1 if m0 + 2 > 12 else 0)
    return start, date(ey, em, calendar.monthrange(ey, em)[1]) + timedelta(days=1)


def _resolve_atom(kind: str, m: re.Match[str], ref: date) -> tuple[date, date] | None:
    g = m.groups()
    try:
        if kind == "iso":
            d = date(int(g[0]), int(g[1]), int(g[2]))
            return d, d + timedelta(days=1)
        if kind in ("day_month", "month_day"):
            day, mon = (g[0], g[1]) if kind == "day_month" else (g[1], g[0])
            mo, dd = _month_num(mon), _int(day)
            if g[2]:
                y = int(g[2])
            else:  # no year: the most recent such day not after the reference
                y = ref.year if (mo, dd) <= (ref.month, ref.day) else ref.year - 1
            d = date(y, mo, dd)
            return d, d + timedelta(days=1)
        if kind == "part_month":
            part, mo = g[0].lower(), _month_num(g[1])
            y = int(g[2]) if g[2] else (ref.year if mo <= ref.month else ref.year - 1)
            s, e = _month_span(y, mo)
            if part == "early" or part.startswith(("beginning", "start")):
                return s, date(y, mo, 11)
            if part.startswith("mid"):
                return date(y, mo, 11), date(y, mo, 21)
            return date(y, mo, 21), e
        if kind == "rel_month":
            which, mo = re.sub(r"\s+", " ", g[0].lower()), _month_num(g[1])
            if which in ("last", "past", "this past"):
                y = ref.year if mo < ref.month else ref.year - 1
            elif which == "next":
                y = ref.year if mo > ref.month else ref.year + 1
            else:
                y = ref.year
            return _month_span(y, mo)
        if kind == "month_year":
            return _month_span(int(g[1]), _month_num(g[0]))
        if kind == "in_month":
            mo = _month_num(g[0])
            return _month_span(ref.year if mo <= ref.month else ref.year - 1, mo)
        if kind == "season_year":
            return _season_span(int(g[1]), g[0])
        if kind in ("rel_season", "in_season"):
            which = re.sub(r"\s+", " ", g[0].lower()) if kind == "rel_season" else "in"
            name = g[1] if kind == "rel_season" else g[0]
            if which in ("last", "past", "this past"):
                y = ref.year
                while _season_span(y, name)[1] > ref:  # must have ended before the reference
                    y -= 1
                return _season_span(y, name)
            if which == "next":
                y = ref.year - 1
                while _season_span(y, name)[0] <= ref:
                    y += 1
                return _season_span(y, name)
            if which == "this":
                y = ref.year - 1 if (name.lower() == "winter" and ref.month < 3) else ref.year
                return _season_span(y, name)
            y = ref.year  # "in the summer": the most recent one that has begun
            while _season_span(y, name)[0] > ref:
                y -= 1
            return _season_span(y, name)
        if kind == "day_word":
            w = re.sub(r"\s+", " ", g[0].lower())
            off = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1}.get(w, 0)
            d = ref + timedelta(days=off)
            return d, d + timedelta(days=1)
        if kind == "ago":
            n = _NUMWORDS.get(g[0].lower()) or int(g[0])
            unit = g[1].lower()
            if unit == "day":
                d = ref - timedelta(days=n)
                return d, d + timedelta(days=1)
            if unit == "week":
                d = ref - timedelta(weeks=n)
                s = d - timedelta(days=d.weekday())
                return s, s + timedelta(days=7)
            if unit == "month":
                mo, y = ref.month - n, ref.year
                while mo < 1:
                    mo += 12
                    y -= 1
                return _month_span(y, mo)
            return date(ref.year - n, 1, 1), date(ref.year - n + 1, 1, 1)
        if kind == "rel_unit":
            which, unit = re.sub(r"\s+", " ", g[0].lower()), g[1].lower()
            step = {"last": -1, "past": -1, "this past": -1, "previous": -1, "next": 1}.get(which, 0)
            if unit == "week":
                s = ref - timedelta(days=ref.weekday()) + timedelta(weeks=step)
                return s, s + timedelta(days=7)
            if unit == "weekend":
                sat = ref - timedelta(days=ref.weekday()) + timedelta(days=5)  # this week's Saturday
                if step < 0 or (step == 0 and sat > ref and which != "this"):
                    sat -= timedelta(weeks=1)
                if step > 0:
                    sat += timedelta(weeks=1) if sat <= ref else timedelta(0)
                return sat, sat + timedelta(days=2)
            if unit == "month":
                mo, y = ref.month + step, ref.year
                if mo < 1:
                    mo, y = 12, y - 1
                if mo > 12:
                    mo, y = 1, y + 1
                return _month_span(y, mo)
            return date(ref.year + step, 1, 1), date(ref.year + step + 1, 1, 1)
        if kind == "weekday":
            which, wd = re.sub(r"\s+", " ", g[0].lower()), _WEEKDAYS[g[1].lower()]
            if which == "next":
                delta = (wd - ref.weekday()) % 7 or 7
                d = ref + timedelta(days=delta)
            else:  # last / past / this / on: the most recent one before the reference
                delta = (ref.weekday() - wd) % 7 or 7
                d = ref - timedelta(days=delta)
            return d, d + timedelta(days=1)
        if kind == "year":
            y = int(next(x for x in g if x))
            return date(y, 1, 1), date(y + 1, 1, 1)
    except (ValueError, KeyError, StopIteration):
        return None
    return None


def _atoms(text: str, ref: date) -> list[tuple[int, int, str, date, date]]:
    """Non-overlapping resolved atoms (start, end, surface, from, to) in text order."""
    taken: list[tuple[int, int, str, date, date]] = []
    for kind, rx in _ATOMS:
        for m in rx.finditer(text):
            s, e = m.span()
            if any(s < te and ts < e for ts, te, *_ in taken):
                continue
            span = _resolve_atom(kind, m, ref)
            if span is not None:
                taken.append((s, e, m.group(0).strip(), span[0], span[1]))
    return sorted(taken)


def _as_dt(d: date, tz: Any) -> datetime:
    return datetime.combine(d, time.min).replace(tzinfo=tz)


def resolve_time_window(question: str, reference_time: datetime | None = None) -> tuple[Window, str] | None:
    """The half-open window [start, end) the question names, relative to `reference_time` (default:
    now, UTC), and the expression it came from; None when it names none.

    "between A and B" / "from A to B" span both; "before/until/by A" -> (None, start of A);
    "after A" -> (end of A, None); "since A" -> (start of A, None). Several unrelated expressions: the
    narrowest wins.
    """
    ref_dt = reference_time or datetime.now(timezone.utc)
    tz = ref_dt.tzinfo
    ref = ref_dt.date()
    m = _MONTH_RANGE.search(question)
    if m:  # "between March and June 2023": month names, the year from either side or the past
        a_mon, a_year, b_mon, b_year = m.groups()
        ma, mb = _month_num(a_mon), _month_num(b_mon)
        if b_year:
            yb = int(b_year)
        elif a_year:
            yb = int(a_year) + (1 if mb < ma else 0)
        else:
            yb = ref.year if mb <= ref.month else ref.year - 1
        ya = int(a_year) if a_year else (yb if ma <= mb else yb - 1)
        start, end = _month_span(ya, ma)[0], _month_span(yb, mb)[1]
        if start < end:
            return (_as_dt(start, tz), _as_dt(end, tz)), m.group(0)
    atoms = _atoms(question, ref)
    if not atoms:
        return None
    # ranges first: "between A and B", "from A to/until B"
    for i in range(len(atoms) - 1):
        a, b = atoms[i], atoms[i + 1]
        gap = question[a[1]:b[0]].strip().lower()
        pre = question[max(0, a[0] - 10):a[0]].lower()
        if gap in ("and", "to", "until", "till", "through", "-", "–") and re.search(r"(between|from)\s*$", pre):
            start, end = a[3], b[4]
            if end <= start:  # "between November and February": the end is in the next year
                end = date(end.year + 1, end.month, 1) if end.month != 12 else end
                if end <= start:
                    continue
            return (_as_dt(start, tz), _as_dt(end, tz)), question[a[0]:b[1]]
    best = None
    for s, e, surface, d0, d1 in atoms:
        pre = question[max(0, s - 12):s].lower()
        low_surface = surface.lower()
        if re.search(r"\b(before|until|till|by|prior\s+to)\s*$", pre) or re.match(r"(before|until|by)\b", low_surface):
            win: Window = (None, _as_dt(d0, tz))
            width = 10**6
        elif re.search(r"\bafter\s*$", pre) or low_surface.startswith("after"):
            win, width = (_as_dt(d1, tz), None), 10**6
        elif re.search(r"\bsince\s*$", pre) or low_surface.startswith("since"):
            win, width = (_as_dt(d0, tz), None), 10**6
        else:
            win, width = (_as_dt(d0, tz), _as_dt(d1, tz)), (d1 - d0).days
        if best is None or width < best[0]:
            best = (width, win, surface)
    assert best is not None
    return best[1], best[2]


def in_window(when: datetime | date | None, window: Window | None) -> bool:
    """Is `when` inside the half-open window? Naive datetimes are taken as UTC; dates as midnight."""
    if when is None or window is None:
        return False
    start, end = window
    if isinstance(when, datetime):
        w = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    else:
        w = datetime.combine(when, time.min).replace(tzinfo=timezone.utc)

    def norm(d: datetime) -> datetime:
        return d if d.tzinfo else d.replace(tzinfo=timezone.utc)

    if start is not None and w < norm(start):
        return False
    if end is not None and w >= norm(end):
        return False
    return True


def overlaps_window(span: tuple[datetime | date, datetime | date], window: Window | None) -> bool:
    """Does a closed date range (e.g. "May 2023" as 1 May..31 May) overlap the half-open window?"""
    if window is None:
        return False
    lo, hi = span
    if in_window(lo, window) or in_window(hi, window):
        return True
    start, end = window
    lo_d = lo if isinstance(lo, datetime) else datetime.combine(lo, time.min)
    hi_d = hi if isinstance(hi, datetime) else datetime.combine(hi, time.max)
    lo_d = lo_d if lo_d.tzinfo else lo_d.replace(tzinfo=timezone.utc)
    hi_d = hi_d if hi_d.tzinfo else hi_d.replace(tzinfo=timezone.utc)
    return start is not None and end is not None and lo_d <= start and hi_d >= end


# ------------------------------------------------------------------ the router


class IntentRouter:
    """The three-tier cascade. `encode` (the embedder's) enables tier 2; `llm` enables tier 3."""

    def __init__(self, encode: Encode | None = None, *, llm: LLMConfig | None = None,
                 prototypes: Mapping[str, Sequence[str]] = PROTOTYPES,
                 threshold: float = PROTOTYPE_THRESHOLD, margin: float = PROTOTYPE_MARGIN,
                 llm_client: Any | None = None):
        self.encode = encode
        self.bank = PrototypeBank(encode, prototypes) if encode is not None else None
        self.llm = llm
        self.threshold = threshold
        self.margin = margin
        self._llm_client = llm_client

    def route(self, query: str, *, reference_time: datetime | None = None,
              query_vec: np.ndarray | None = None, use_llm: bool = True) -> Intent:
        """Classify `query`. Pass `query_vec` (the dense signal's embedding) to skip re-encoding."""
        tw = resolve_time_window(query, reference_time)
        window, expr = (tw if tw else (None, None))

        kw, fired = keyword_scores(query)
        if window is not None:
            kw["temporal"] = max(kw.get("temporal", 0.0), 0.8)
            fired.append(f"temporal:time-expression({expr})")
        if kw:
            label, conf = _pick(kw)
            return self._intent(label, conf, "keyword", kw, fired, window, expr)

        if self.bank is not None:
            qv = query_vec if query_vec is not None else np.asarray(self.encode([query]))[0]  # type: ignore[misc]
            ps, which = self.bank.scores(qv)
            label = prototype_decision(ps, self.threshold, self.margin)
            if label is not None:
                return self._intent(label, ps[label], "prototype", ps, [f"{label}:prototype({which[label]!r})"],
                                    window, expr, labels={label})
            proto_scores = ps
        else:
            proto_scores = {}

        if self.llm is not None and use_llm:
            try:
                ls = llm_scores(query, self.llm, self._llm_client)
                label, conf = max(ls.items(), key=lambda kv: (kv[1], -_PRIORITY.index(kv[0])))
                hits = frozenset(k for k, v in ls.items() if v >= LLM_THRESHOLD)
                if conf >= LLM_THRESHOLD:
                    return self._intent(label, conf, "llm", ls, [f"{label}:llm({self.llm.model})"], window, expr,
                                        labels=hits)
                return self._intent("general", 1.0 - conf, "llm", ls, ["general:llm-no-intent"], window, expr,
                                    labels=frozenset())
            except Exception as exc:  # noqa: BLE001 - any failure falls back to the safe default
                return self._intent("general", 0.0, "default", proto_scores,
                                    [f"llm-error:{type(exc).__name__}: {str(exc)[:120]}"], window, expr,
                                    labels=frozenset())
        return self._intent("general", 0.0, "default", proto_scores, [], window, expr, labels=frozenset())

    @staticmethod
    def _intent(label: str, conf: float, tier: str, scores: Mapping[str, float], evidence: Sequence[str],
                window: Window | None, expr: str | None, labels: frozenset[str] | None = None) -> Intent:
        if labels is None:
            labels = frozenset(k for k, v in scores.items() if v >= 0.75)
        labels = frozenset(labels) | ({label} if label != "general" else frozenset())
        conf = float(min(1.0, max(0.0, conf)))
        return Intent(label=label, confidence=conf, tier=tier,
                      weights=profile_weights(label, conf if label != "general" else 1.0),
                      time_window=window, time_expression=expr, labels=labels,
                      scores={k: float(v) for k, v in scores.items()}, evidence=tuple(evidence))


_ROUTERS: dict[Any, IntentRouter] = {}
_ROUTERS_LOCK = threading.Lock()


def get_router(encode: Encode | None = None, llm: LLMConfig | None = None) -> IntentRouter:
    """A router per (encoder, LLM config), cached so the prototype bank is embedded once per process."""
    key = (id(getattr(encode, "__self__", encode)), getattr(encode, "__name__", None), llm)
    with _ROUTERS_LOCK:
        r = _ROUTERS.get(key)
        if r is None:
            r = _ROUTERS[key] = IntentRouter(encode, llm=llm)
        return r


def classify_intent(query: str, *, encode: Encode | None = None, reference_time: datetime | None = None,
                    query_vec: np.ndarray | None = None, llm: LLMConfig | None = None) -> Intent:
    """One-call form of `IntentRouter.route` with a cached router."""
    return get_router(encode, llm).route(query, reference_time=reference_time, query_vec=query_vec)
