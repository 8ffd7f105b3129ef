"""Intent routing's first two tiers and the weight profiles (PRISM N4, eq. 7; Cortex §3.3).

Labels: temporal, causal, multi_hop, entity_centric, knowledge_update, preference, general. Each has a
weight profile over the retrieval signals (lexical, dense, graph, recency, temporal, expansion) for
weighted RRF; `profile_weights` blends it with `general` by the routing confidence, so a weak label
moves the weights only a little. The profiles are engineering defaults in the spirit of Cortex's
(§6.4: lexical and heat/recency weights balanced across benchmarks); the benchmark's ablations tune them.

1. **keyword** — high-precision English patterns on question form and trigger phrases ("when ...",
   "why ...", "what led to", "favourite", "currently", ...): `keyword_scores`.
2. **prototype** — the query embedding against a small bank of prototype questions per label,
   embedded once per encoder and cached (`PrototypeBank`); `prototype_decision` commits the best label
   only when its best cosine exceeds θ = 0.55 AND beats the runner-up label by a margin of 0.10
   (PRISM Table 5).

The router that runs them, and asks an LLM last, is `app.domain.retrieval.intent`.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np

LABELS = ("temporal", "causal", "multi_hop", "entity_centric", "knowledge_update", "preference", "general")
SIGNALS = ("lexical", "dense", "graph", "recency", "temporal", "expansion")

PROTOTYPE_THRESHOLD = 0.55  # PRISM Table 5, θ_proto
PROTOTYPE_MARGIN = 0.10  # PRISM Table 5, top-2 margin

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

Encode = Callable[[list[str]], np.ndarray]


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
                                    r"switch(?:ed)?\s+(?:to|from)|(?:move|moved|relocate|relocated)\s+to)\b"), 0.85),
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
PRIORITY = ("causal", "temporal", "knowledge_update", "preference", "multi_hop", "entity_centric", "general")


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


def pick(scores: Mapping[str, float]) -> tuple[str, float]:
    """The strongest label and its strength; a tie goes to the label first in `PRIORITY`."""
    best = max(scores.values())
    for label in PRIORITY:
        if scores.get(label) == best:
            return label, best
    return max(scores.items(), key=lambda kv: kv[1])  # pragma: no cover - labels outside PRIORITY


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

