"""LoCoMo conversations as plain data for offline training and evaluation, plus the first-stage
candidate generators (dense cosine and BM25 within one conversation) that mine hard negatives and
feed the offline reranker evaluation.

Turn text is rendered as the benchmark ingests it ("text [shares a photo of caption]"), and the
reranker sees `turn_text(speaker, content)` at training and at query time alike.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from app.domain.event import turn_text



def _default_locomo() -> Path:
    from bench.datasets import LOCOMO_FILE, default_data_dir

    return default_data_dir() / LOCOMO_FILE


DEFAULT_LOCOMO = _default_locomo()
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_DT = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december"]


@dataclass(frozen=True)
class Turn:
    id: str  # dia_id, e.g. "D3:7"
    speaker: str
    content: str
    occurred_at: datetime
    session: int
    index: int  # position in the conversation


@dataclass(frozen=True)
class QA:
    conversation_id: str
    question: str
    gold: tuple[str, ...]
    category: str


@dataclass
class Conv:
    id: str
    turns: list[Turn]
    questions: list[QA] = field(default_factory=list)
    mine_dense: bool = True  # False: hard negatives from BM25 alone (haystacks too large to embed for mining)

    def not_negatives(self, gold: Iterable[str]) -> set[str]:
        """The turns a question's hard negatives must not be: its gold turns and each gold turn's
        neighbours in the same session (often the other half of the evidence: label noise)."""
        by_id = self.by_id()
        out = {g for g in gold if g in by_id}
        for g in list(out):
            t = by_id[g]
            for j in (t.index - 1, t.index + 1):
                if 0 <= j < len(self.turns) and self.turns[j].session == t.session:
                    out.add(self.turns[j].id)
        return out

    def by_id(self) -> dict[str, Turn]:
        return {t.id: t for t in self.turns}


def _parse_dt(text: str) -> datetime:
    m = _DT.match(text)
    if not m:
        raise ValueError(f"unrecognised LoCoMo date {text!r}")
    hh, mm, ap, day, month, year = m.groups()
    mon = next(i + 1 for i, name in enumerate(_MONTHS) if name.startswith(month.lower()[:3]))
    return datetime(int(year), mon, int(day), int(hh) % 12 + (12 if ap.lower() == "p" else 0), int(mm),
                    tzinfo=timezone.utc)


def _content(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    cap = turn.get("blip_caption")
    if cap:
        text = f"{text} [shares a photo of {str(cap).strip()}]" if text else f"[shares a photo of {cap}]"
    return text


def _clean_gold(evidence: Iterable[Any], known: set[str]) -> tuple[str, ...]:
    out: list[str] = []
    for raw in evidence or []:
        for part in re.split(r"[;,\s]+", str(raw).strip()):
            cand = part
            if cand and cand not in known:
                m = re.match(r"^D:?(\d+):(\d+)$", cand)
                cand = f"D{m.group(1)}:{m.group(2)}" if m else cand
            if cand in known and cand not in out:
                out.append(cand)
    return tuple(out)


def load_locomo(path: str | Path = DEFAULT_LOCOMO, only: Sequence[str] | None = None) -> list[Conv]:
    """Conversations (turns in order) with their questions; `only` keeps the named sample ids."""
    samples = json.loads(Path(path).read_text())
    convs: list[Conv] = []
    for s in samples:
        if only is not None and s["sample_id"] not in only:
            continue
        c = s["conversation"]
        nums = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        turns: list[Turn] = []
        for n in nums:
            start = _parse_dt(c[f"session_{n}_date_time"])
            for i, t in enumerate(c[f"session_{n}"] or []):
                turns.append(Turn(t["dia_id"], t["speaker"], _content(t), start + timedelta(seconds=i), n, len(turns)))
        conv = Conv(s["sample_id"], turns)
        known = {t.id for t in turns}
        for qa in s.get("qa", []):
            gold = _clean_gold(qa.get("evidence", []), known)
            if gold:
                conv.questions.append(QA(conv.id, str(qa["question"]), gold, CATEGORIES.get(int(qa["category"]), "?")))
        convs.append(conv)
    if only is not None:
        missing = set(only) - {c.id for c in convs}
        if missing:
            raise KeyError(f"conversations not in {path}: {sorted(missing)}")
    return convs


# ------------------------------------------------------------------ first-stage candidates

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the and or but if of to in on at for with from by about as is are was were be been being do does did "
    "has have had i you he she it we they me him her us them my your his its our their this that these those "
    "what which who whom when where why how there here not no so than too very can will would should could "
    "just also any some into over after before again up down out off then once".split()
)


def bm25_tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


class ConversationIndex:
    """Dense (normalised embeddings, cosine) and BM25 rankings over one conversation's turns."""

    def __init__(self, conv: Conv, embeddings: np.ndarray | None):
        from rank_bm25 import BM25Okapi

        self.conv = conv
        self.emb = embeddings
        self.ids = [t.id for t in conv.turns]
        self._bm25 = BM25Okapi([bm25_tokens(t.content) or ["_"] for t in conv.turns])

    def dense(self, qvec: np.ndarray | None, k: int) -> list[tuple[str, float]]:
        if self.emb is None or qvec is None:
            return []
        sims = self.emb @ qvec
        order = np.argsort(-sims, kind="stable")[:k]
        return [(self.ids[i], float(sims[i])) for i in order]

    def bm25(self, question: str, k: int) -> list[tuple[str, float]]:
        scores = self._bm25.get_scores(bm25_tokens(question) or ["_"])
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.ids[i], float(scores[i])) for i in order if scores[i] > 0]


def embed_conversations(convs: Sequence[Conv], encode) -> dict[str, np.ndarray]:
    """Turn embeddings per conversation, with `encode(list[str]) -> np.ndarray` (normalised rows);
    None for a conversation mined by BM25 alone (`Conv.mine_dense` false)."""
    return {c.id: encode([turn_text(t.speaker, t.content) for t in c.turns]) if c.mine_dense else None
            for c in convs}
