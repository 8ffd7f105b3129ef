"""Per-candidate features for the learned fusion (issue #17 item 4): everything the query already
knows about a candidate once its signals are gathered and its event hydrated, as one row of numbers.

Per signal (lexical, dense, graph, temporal, separation, derived, findable, expansion): whether it found the
candidate, its rank there (`MISSING_RANK` when not), its raw score (0 when not) and that score over
the signal's best score for this question. Then: how many signals found it, today's weighted-RRF
score and rank, the recency of the event among the candidates, the reweight's factors as facts
(inside the question's time window, said by a person the question names, the asker's own turn,
surprise, salience, superseded), the intent (one-hot, confidence), the turn's length and role, its
stored heat, what its words and the question it replies to say (`context_features`), and what
the other candidates of its sitting and its topic episode score (`group_features`). Only what
the query gathers and hydrates anyway: no statement is added.

`order_by_model` re-orders the fused list by a model's scores and records, per item, the score and
the features that moved it most (`stages["learned"]`). Pure: no SQL, no files.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from app.domain.retrieval.context_features import (
    CONTEXT_FEATURES,
    SESSION_FEATURES,
    context_features,
    group_features,
    session_keys,
    time_order,
)
from app.domain.retrieval.intent_rules import LABELS
from app.domain.retrieval.reweight import ReweightConfig
from app.domain.retrieval.separation import asker_role, names_speaker
from app.domain.timeexpr import in_window, overlaps_window

SIGNALS = ("lexical", "dense", "graph", "temporal", "separation", "derived", "findable", "expansion")
MISSING_RANK = 1000.0


def _names() -> tuple[str, ...]:
    out: list[str] = []
    for s in SIGNALS:
        out += [f"{s}_found", f"{s}_rank", f"{s}_score", f"{s}_rel"]
    out += ["n_signals", "rrf_score", "rrf_rank", "rrf_rel",
            "recency_rank", "recency_days", "recency_frac", "recency_fused",
            "in_window", "has_window", "named_speaker", "names_any_speaker", "asker_turn", "first_person",
            "surprise", "salience", "importance", "superseded", "has_signals", "heat", "access_count",
            "n_entities", "n_dates",
            *(f"intent_{label}" for label in LABELS), "intent_confidence",
            "len_chars", "len_words", "role_user", "role_assistant",
            "query_words", "n_candidates", *CONTEXT_FEATURES, *SESSION_FEATURES]
    return tuple(out)


FEATURES: tuple[str, ...] = _names()
_INDEX = {name: i for i, name in enumerate(FEATURES)}


def _in_time(event: Any, s: Any | None, window: Any) -> bool:
    if window is None:
        return False
    if in_window(event.occurred_at, window):
        return True
    if s is not None:
        return any(overlaps_window((d, d + timedelta(days=1)), window) for d in s.resolved_dates)
    return False


def candidate_features(items: Sequence[Any], signals: Mapping[str, Sequence[tuple[int, float]]], *,
                       query: str, intent: Any | None, signals_of: Mapping[int, Any],
                       reference_time: datetime | None = None) -> np.ndarray:
    """One row per fused item (anything with `.event`, `.score` and `.signals`, as `RankedItem`),
    columns in `FEATURES` order. `signals`: the gathered lists (event pk, score), best first, each
    event once; `signals_of`: event pk -> its per-event signals (`EventSignalsView`), where it has some."""
    n = len(items)
    x = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return x
    col = _INDEX
    best = {name: max((abs(sc) for _, sc in hits), default=0.0) for name, hits in signals.items()}
    # recency among the candidates (what the recency list would say), newest first
    times = [it.event.occurred_at for it in items]
    newest = reference_time or max(times)
    oldest = min(times)
    span = max((newest - oldest).total_seconds(), 1.0)
    order = sorted(range(n), key=lambda i: (times[i], items[i].event.id), reverse=True)
    rec_rank = {i: r for r, i in enumerate(order, start=1)}
    top_fused = max((float(it.score) for it in items), default=0.0) or 1.0
    window = intent.time_window if intent is not None else None
    speakers = {it.event.speaker for it in items if it.event.speaker}
    named = {sp for sp in speakers if names_speaker(query, sp)}
    role = asker_role(query)
    roles = {it.event.role for it in items}
    asker_on = role is not None and role in roles and len(roles) >= 2
    label = intent.label if intent is not None else None
    qwords = float(len(query.split()))

    for i, it in enumerate(items):
        row = x[i]
        ev = it.event
        found = 0
        for name in SIGNALS:
            e = it.signals.get(name)
            if e is None:
                row[col[f"{name}_rank"]] = MISSING_RANK
                continue
            found += 1
            row[col[f"{name}_found"]] = 1.0
            row[col[f"{name}_rank"]] = float(e["rank"])
            row[col[f"{name}_score"]] = float(e["score"])
            row[col[f"{name}_rel"]] = float(e["score"]) / best[name] if best.get(name) else 0.0
        row[col["n_signals"]] = found
        row[col["rrf_score"]] = float(it.score)
        row[col["rrf_rank"]] = float(i + 1)
        row[col["rrf_rel"]] = float(it.score) / top_fused
        row[col["recency_rank"]] = float(rec_rank[i])
        row[col["recency_days"]] = max((newest - ev.occurred_at).total_seconds(), 0.0) / 86400.0
        row[col["recency_frac"]] = (ev.occurred_at - oldest).total_seconds() / span
        row[col["recency_fused"]] = 1.0 if "recency" in it.signals else 0.0
        s = signals_of.get(ev.id)
        row[col["in_window"]] = 1.0 if _in_time(ev, s, window) else 0.0
        row[col["has_window"]] = 1.0 if window is not None else 0.0
        row[col["named_speaker"]] = 1.0 if ev.speaker in named else 0.0
        row[col["names_any_speaker"]] = 1.0 if named else 0.0
        row[col["asker_turn"]] = 1.0 if asker_on and ev.role == role else 0.0
        row[col["first_person"]] = 1.0 if role is not None else 0.0
        if s is not None:
            row[col["has_signals"]] = 1.0
            row[col["surprise"]] = float(s.surprise or 0.0)
            row[col["salience"]] = float(s.salience if s.salience is not None else 0.5)
            row[col["importance"]] = float(s.importance or 0.0)
            row[col["superseded"]] = 1.0 if s.superseded_by is not None else 0.0
            row[col["heat"]] = float(s.heat or 0.0)
            row[col["access_count"]] = float(s.access_count or 0)
            row[col["n_entities"]] = float(len(s.entities))
            row[col["n_dates"]] = float(len(s.resolved_dates))
        else:
            row[col["salience"]] = 0.5
        if label is not None and f"intent_{label}" in col:
            row[col[f"intent_{label}"]] = 1.0
        row[col["intent_confidence"]] = float(intent.confidence) if intent is not None else 0.0
        content = ev.content or ""
        row[col["len_chars"]] = math.log1p(len(content))
        row[col["len_words"]] = float(len(content.split()))
        row[col["role_user"]] = 1.0 if ev.role == "user" else 0.0
        row[col["role_assistant"]] = 1.0 if ev.role == "assistant" else 0.0
        row[col["query_words"]] = qwords
        row[col["n_candidates"]] = math.log1p(n)
    first = col[CONTEXT_FEATURES[0]]
    said = time_order(items)  # the exchange and the sittings read the candidates in this order
    rel = {s: x[:, col[f"{s}_rel"]] for s in ("dense", "lexical")}
    x[:, first:first + len(CONTEXT_FEATURES)] = context_features(items, rel, query, said)
    rels = (rel["dense"], rel["lexical"])
    episodes = [(s.conversation_id, s.episode_index) if (s := signals_of.get(it.event.id)) is not None
                and s.episode_index is not None else None for it in items]
    first, width = col[SESSION_FEATURES[0]], len(SESSION_FEATURES) // 2
    x[:, first:first + width] = group_features(session_keys(items, said), *rels)
    x[:, first + width:first + 2 * width] = group_features(episodes, *rels)
    return x


def prior_boost(x: np.ndarray, config: ReweightConfig = ReweightConfig()) -> np.ndarray:
    """Per row of `candidate_features`: the log of the reweight's factors for that candidate (0 where
    none applies), to add to a learned score: True Memory eq. 4 at `config`'s strengths (the request's
    recipe: `ranking.reweight_config`) as log-factors on exp(score), each factor only where its switch is
    on: inside the question's time window, said by the speaker the question names, the asker's own turn,
    surprise σ, and superseded in a knowledge-update question."""
    col = _INDEX
    out = np.zeros(len(x))
    if config.temporal:
        out += math.log(config.temporal_boost) * x[:, col["in_window"]]
    if config.speaker and config.speaker_beta > 0:
        out += math.log1p(config.speaker_beta) * x[:, col["named_speaker"]]
    if config.asker and config.asker_beta > 0:
        out += math.log1p(config.asker_beta) * x[:, col["asker_turn"]]
    if config.surprise:
        out += np.log1p(config.surprise_alpha * np.clip(x[:, col["surprise"]], 0.0, None))
    if config.knowledge_update:
        out += math.log(config.superseded_factor) * x[:, col["superseded"]] * x[:, col["intent_knowledge_update"]]
    return out


def top_contributions(names: Sequence[str], values: np.ndarray, contrib: np.ndarray, k: int = 3
                      ) -> list[dict[str, Any]]:
    """The `k` features with the largest absolute contribution to one item's score."""
    order = np.argsort(-np.abs(contrib[: len(names)]), kind="stable")[:k]
    return [{"feature": names[j], "value": round(float(values[j]), 4), "contribution": round(float(contrib[j]), 4)}
            for j in order]


def order_by_model(items: list[Any], x: np.ndarray, scores: np.ndarray,
                   contributions: Callable[[np.ndarray], np.ndarray] | None, *, explain: int,
                   names: Sequence[str] = FEATURES, priors: np.ndarray | None = None) -> list[Any]:
    """The items by the model's score (plus `priors`, `prior_boost`, when given), best first (ties
    keep the fused order); each item's score becomes that, and the first `explain` get
    `stages["learned"]`: score, rank before and after, the priors' part where not 0, and the three
    features that contributed most (`contributions(rows) -> (rows, features[+1])`)."""
    total = scores + priors if priors is not None else scores
    order = sorted(range(len(items)), key=lambda i: (-float(total[i]), i))
    out = []
    for rank, i in enumerate(order, start=1):
        it = items[i]
        it.score = float(total[i])
        it.stages["learned"] = {"score": round(float(total[i]), 6), "rank_before": i + 1, "rank_after": rank}
        if priors is not None and priors[i]:
            it.stages["learned"]["priors"] = round(float(priors[i]), 6)
        out.append(it)
    if contributions is not None and explain > 0 and order:
        head = order[:explain]
        contrib = contributions(x[head])
        for row, i in enumerate(head):
            items[i].stages["learned"]["top"] = top_contributions(names, x[i], contrib[row])
    return out
