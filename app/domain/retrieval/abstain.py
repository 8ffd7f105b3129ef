"""Should the service abstain? Query-time evidence in, a probability and a decision out (issue #17 item 9).

A question the conversation never covered ("which football team do I support?") still gets ranked
candidates: the best cosine alone cannot tell, because a topical near-miss scores like real evidence,
and real evidence for a short date question can score low. What does tell, without an LLM, is whether
the question's own words are in the conversation at all, whether the evidence the ranker put first
shares them, and how sure the ranker is. `abstain_features` computes those from what the query has
already read (the candidates' text, each signal's scores, the ranked list); `AbstainModel` is a
logistic regression over them (standardised features, coefficients, a threshold), fitted with
grouped cross-validation on the validation split by `python -m training.abstain` and shipped as data
(`app/adapters/abstain_model/abstain.json`). `decide` is the whole decision; `floor_decision` is the
previous rule (best dense cosine, or cross-encoder probability, under a floor), kept as the recipe's
switch back (`abstain_learned: false`) and as the fallback when no model is installed.

Pure: no SQL, no files.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.layers.text import CALENDAR_WORDS, STOPWORDS, words

TOP_N = 10  # "the evidence the ranker put first": this many of the ranked items
# question words that ask rather than say what about (beyond the shared stop words)
QUESTION_WORDS = frozenset(
    """ask asked tell told say said mention mentioned remember recall know think talk talked discuss discussed
    kind type sort favourite favorite name called usually often ever last first time times day days""".split()
)
_SUFFIXES = ("ies", "ing", "ed", "es", "s")


def stem(word: str) -> str:
    """A crude, language-light stem for matching a question's word with a turn's: lower case, a
    possessive and one common suffix off, then at most six letters ("teams", "team's" -> "team";
    "discussing", "discussed" -> "discus")."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + ("y" if suf == "ies" else "")
            break
    return w[:6]


def question_terms(query: str) -> list[str]:
    """The question's content words (no stop words, question words, month or day names, or numbers),
    stemmed, once each."""
    out: list[str] = []
    for w in words(query):
        lw = w.lower()
        if len(lw) < 3 or lw in STOPWORDS or lw in QUESTION_WORDS or lw in CALENDAR_WORDS or lw[0].isdigit():
            continue
        s = stem(lw)
        if s not in out:
            out.append(s)
    return out


_CAP = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'’\-]+)")


def question_names(query: str) -> list[str]:
    """Capitalised words of three letters or more inside the question (not its first word): names,
    places, titles; stemmed."""
    out: list[str] = []
    for m in _CAP.finditer(query.strip()):
        w = m.group(1)
        if len(w) < 3 or w.lower() in STOPWORDS or w.lower() in QUESTION_WORDS or w.lower() in CALENDAR_WORDS:
            continue
        s = stem(w)
        if s not in out:
            out.append(s)
    return out


def text_stems(texts: Iterable[str]) -> set[str]:
    return {stem(w) for t in texts for w in words(t or "") if len(w) >= 3}


def _folded(text: str) -> str:
    """Lower case as `stem` makes it, with the one context-dependent lower case letter (final sigma)
    made plain, so a word lower-cased alone reads the same as inside its text."""
    return text.lower().replace("’", "'").replace("ς", "σ")


def _prefixes(s: str) -> tuple[str, ...]:
    """What the folded word of a stem starts with: the stem, or for a stem ending in "y", the stem or
    the "ies" it may come from ("story" <- "story", "stories")."""
    s = s.replace("ς", "σ")
    return (s, s[:-1] + "ies") if s.endswith("y") else (s,)


STEMS_CACHE = 4096  # texts whose stems are remembered (as one string, ~2 KB for a long turn)
_STEMS: dict[str, str] = {}


def _stems_of(text: str) -> str:
    """The text's stems as one string, each between line breaks (`text_stems`, remembered per text:
    the same candidates come back for every question about a conversation)."""
    got = _STEMS.get(text)
    if got is None:
        if len(_STEMS) >= STEMS_CACHE:
            _STEMS.clear()
        got = _STEMS[text] = "\n" + "\n".join(text_stems([text])) + "\n"
    return got


def stems_found(stems: Iterable[str], texts: Iterable[str]) -> set[str]:
    """Those of `stems` some word of `texts` stems to: `{s for s in stems if s in text_stems(texts)}`
    without stemming every word of every text (a long conversation's candidates are ~1 M characters).
    A stem's word, lower-cased, starts with the stem (or, for "ies" -> "y", with the "ies" form), so a
    text can only hold it when the folded text contains one of those; only such texts are stemmed,
    until every stem is found."""
    wanted = {s: _prefixes(s) for s in stems}
    texts = [t for t in texts if t]
    if not wanted or not texts:
        return set()
    folded = [_folded(t) for t in texts]
    whole = "\n".join(folded)
    wanted = {s: hs for s, hs in wanted.items() if any(h in whole for h in hs)}
    found: set[str] = set()
    for text, low in zip(texts, folded):
        maybe = [s for s, hs in wanted.items() if s not in found and any(h in low for h in hs)]
        if maybe:
            own = _stems_of(text)
            found.update(s for s in maybe if s and f"\n{s}\n" in own)
            if len(found) == len(wanted):
                break
    return found


@dataclass(frozen=True)
class AbstainFeatures:
    """What the decision reads; every value is shown in the response's `relevance`."""

    dense: float  # best cosine of the dense signal (0 when it did not run or found nothing)
    lexical: float  # best BM25 of the lexical signal, over the question's content words (per word)
    coverage: float  # share of the question's content words found in any candidate (the conversation, near enough)
    coverage_top: float  # share found in the first TOP_N ranked items
    names_missing: float  # capitalised words of the question found in no candidate
    top_score: float  # the ranker's score of its first item (learned model, else fused)
    margin: float  # that score minus the second's
    terms: float  # how many content words the question has

    def as_dict(self) -> dict[str, float]:
        return {k: round(float(v), 4) for k, v in self.__dict__.items()}


def abstain_features(query: str, signals: Mapping[str, Sequence[tuple[int, float]]], texts: Mapping[int, str],
                     ranked_ids: Sequence[int], ranked_scores: Sequence[float]) -> AbstainFeatures:
    """`signals`: each retriever's (event pk, score) list, best first; `texts`: every candidate's text
    by pk (what the query hydrated); `ranked_ids`/`ranked_scores`: the final order, best first."""
    terms = question_terms(query)
    names = question_names(query)
    pool = stems_found(terms + names, texts.values())
    top = stems_found(terms, [texts.get(pk, "") for pk in ranked_ids[:TOP_N]])
    dense = max((s for _, s in signals.get("dense") or ()), default=0.0)
    lexical = max((s for _, s in signals.get("lexical") or ()), default=0.0)
    n = len(terms)
    s0 = float(ranked_scores[0]) if ranked_scores else 0.0
    s1 = float(ranked_scores[1]) if len(ranked_scores) > 1 else s0
    return AbstainFeatures(
        dense=float(dense),
        lexical=float(lexical) / max(n, 1),
        coverage=sum(t in pool for t in terms) / n if n else 1.0,
        coverage_top=sum(t in top for t in terms) / n if n else 1.0,
        names_missing=float(sum(nm not in pool for nm in names)),
        top_score=s0,
        margin=s0 - s1,
        terms=float(n),
    )


@dataclass(frozen=True)
class AbstainModel:
    """A logistic regression: p(abstain) = σ(b + Σ coef_i · (x_i − mean_i) / scale_i); abstain when
    p ≥ threshold. `features` name `AbstainFeatures` fields; `about` says how it was fitted.

    `covered`: a question every content word of which is in the first `TOP_N` ranked items is answered,
    whatever p says (the model was then fitted on the other questions only): its evidence is there in
    so many words, and a short question's best cosine can be low (a date question, its evidence first,
    cosine 0.24), which no answerable question of the fitting data had."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    about: Mapping[str, Any] | None = None
    covered: bool = False

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> "AbstainModel":
        m = doc["model"]
        feats = tuple(doc["features"])
        unknown = set(feats) - set(AbstainFeatures.__dataclass_fields__)
        if unknown:
            raise ValueError(f"the abstain model reads features the query does not compute: {sorted(unknown)}")
        if not (len(m["mean"]) == len(m["scale"]) == len(m["coef"]) == len(feats)):
            raise ValueError("the abstain model's mean, scale and coef must each have one value per feature")
        return cls(feats, tuple(map(float, m["mean"])), tuple(map(float, m["scale"])),
                   tuple(map(float, m["coef"])), float(m["intercept"]), float(doc["threshold"]),
                   {k: v for k, v in doc.items() if k not in ("model",)}, bool(doc.get("covered", False)))

    def is_covered(self, f: AbstainFeatures) -> bool:
        return self.covered and f.terms > 0 and f.coverage_top >= 1.0

    def probability(self, f: AbstainFeatures) -> float:
        z = self.intercept
        for name, mu, sd, c in zip(self.features, self.mean, self.scale, self.coef, strict=True):
            z += c * (float(getattr(f, name)) - mu) / (sd or 1.0)
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@dataclass(frozen=True)
class AbstainDecision:
    abstain: bool
    rule: str  # "model" | "covered" | "dense_floor" | "rerank_floor" | "nothing_found"
    score: float | None = None  # the model's probability of abstaining (rule "model")
    threshold: float | None = None


def floor_decision(dense: float | None, rerank: float | None, dense_floor: float, rerank_floor: float
                   ) -> AbstainDecision:
    """The previous rule: the cross-encoder's best probability under its floor when it ran, else the
    best dense cosine under its floor."""
    if rerank is not None:
        return AbstainDecision(rerank < rerank_floor, "rerank_floor", rerank, rerank_floor)
    if dense is not None:
        return AbstainDecision(dense < dense_floor, "dense_floor", dense, dense_floor)
    return AbstainDecision(False, "dense_floor")


def decide(features: AbstainFeatures | None, model: AbstainModel | None, *, found_any: bool,
           dense: float | None, rerank: float | None, dense_floor: float, rerank_floor: float) -> AbstainDecision:
    """Abstain when nothing was found; else by the model when there is one and its features were
    computed (never when the question is covered, for a model with that rule); else by the floors."""
    if not found_any:
        return AbstainDecision(True, "nothing_found")
    if model is not None and features is not None:
        p = model.probability(features)
        if model.is_covered(features):
            return AbstainDecision(False, "covered", p, model.threshold)
        return AbstainDecision(p >= model.threshold, "model", p, model.threshold)
    return floor_decision(dense, rerank, dense_floor, rerank_floor)
