"""Stage 9: reweighting of the fused candidates (True Memory eq. 4, L3 saliency reweigher).

    score_L3(d, q) = RRF(d) ∘ f_t(d, q) ∘ f_L0(d) ∘ f_σ(d) ∘ f_ku(d)

applied in sequence, each factor firing only when its condition holds (an inactive factor is the
identity), after candidates under the salience floor are dropped:

* salience floor — a candidate whose salience is given and below the floor is removed (kept in
  `ReweightOutput.dropped` with the reason);
* f_t, temporal — ×1.3 when the question names a time window and the candidate's time (when it was
  said, or a date it talks about, as resolved by the graph layer) falls inside it;
* f_L0, speaker prior — when the question is about a person: ×(1 + β·prior), prior ∈ [0, 1] from the
  speaker engram (the named person's own turns 1.0, others by profile/style similarity), β = 0.25
  in the paper, 0 as the service ships it (fitted: a named person is often not the one who said it);
  profile/style results can also be injected at 0.8× / 0.9× the best existing score, as in the paper;
* f_asker — ours, not the paper's: when a first-person question ("what did I decide") is asked of a
  conversation between a user and an assistant, ×(1 + β_a) for the user's own turns (the assistant's
  replies repeat the user's words at greater length and outrank the turn that says it); and,
  symmetrically, a question addressed to "you" ("what did you recommend") ×(1 + β_y) for the
  assistant's turns. Both are soft: a turn of the other role that answers still ranks;
* f_σ, surprise — ×(1 + 0.2·σ) for σ > 0 (L5 surprise index);
* f_ku, knowledge update — when the question asks for a current value: a candidate superseded by a
  newer assertion is demoted (×0.85) and attached to the newest one in its chain, which is placed
  just above it (or injected, when the caller supplies it and it was not retrieved).

Every change is recorded per candidate (`adjustments`), so the API can say how each step moved it.
Pure: data in, data out.
"""
from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from app.domain.timeexpr import Window, in_window, overlaps_window

TEMPORAL_BOOST = 1.3
SURPRISE_ALPHA = 0.2
SPEAKER_BETA = 0.25
ASKER_BETA = 1.0  # these are the module's defaults (the paper's β); the service passes the Recipe's
ADDRESSEE_BETA = 0.0  # asker_beta / addressee_beta / speaker_beta (speaker 0 and addressee 0.5 as fitted)
SUPERSEDED_FACTOR = 0.85
NEWER_MARGIN = 1.05
PROFILE_INJECT_SCALE = 0.8
STYLE_INJECT_SCALE = 0.9


@dataclass(frozen=True)
class Candidate:
    id: Hashable
    score: float  # fused score (weighted RRF)
    occurred_at: datetime | None = None
    dates: Sequence[tuple[date | datetime, date | datetime]] = ()  # resolved date ranges it talks about
    speaker: str | None = None
    surprise: float | None = None  # σ ∈ [0, 1]
    salience: float | None = None
    superseded_by: Hashable | None = None  # the id of the assertion that replaced this one
    kind: str = "event"


@dataclass(frozen=True)
class ReweightConfig:
    temporal: bool = True
    speaker: bool = True
    asker: bool = True
    surprise: bool = True
    knowledge_update: bool = True
    salience: bool = True
    temporal_boost: float = TEMPORAL_BOOST
    surprise_alpha: float = SURPRISE_ALPHA
    speaker_beta: float = SPEAKER_BETA
    asker_beta: float = ASKER_BETA
    addressee_beta: float = ADDRESSEE_BETA
    superseded_factor: float = SUPERSEDED_FACTOR
    salience_floor: float | None = None


@dataclass
class Adjustment:
    stage: str
    factor: float | None
    before: float
    after: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"stage": self.stage, "before": round(self.before, 6), "after": round(self.after, 6)}
        if self.factor is not None:
            d["factor"] = round(self.factor, 4)
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class Reweighted:
    id: Hashable
    score: float
    base_score: float
    candidate: Candidate
    adjustments: list[Adjustment] = field(default_factory=list)
    supersedes: list[Hashable] = field(default_factory=list)  # older assertions attached to this one
    superseded_by: Hashable | None = None
    injected: str | None = None  # why it was added ("profile", "style", "newer_assertion")
    rank_before: int | None = None
    rank_after: int = 0

    def _apply(self, stage: str, factor: float, note: str = "") -> None:
        before = self.score
        self.score *= factor
        self.adjustments.append(Adjustment(stage, factor, before, self.score, note))

    def explain(self) -> dict[str, Any]:
        out: dict[str, Any] = {"base_score": round(self.base_score, 6), "score": round(self.score, 6),
                               "rank_before": self.rank_before, "rank_after": self.rank_after,
                               "adjustments": [a.to_dict() for a in self.adjustments]}
        if self.supersedes:
            out["supersedes"] = list(self.supersedes)
        if self.superseded_by is not None:
            out["superseded_by"] = self.superseded_by
        if self.injected:
            out["injected"] = self.injected
        return out


@dataclass
class Dropped:
    candidate: Candidate
    reason: str


@dataclass
class ReweightOutput:
    items: list[Reweighted]  # best first
    dropped: list[Dropped] = field(default_factory=list)
    missing_newer: list[Hashable] = field(default_factory=list)  # newer assertions not among the candidates

    def ids(self) -> list[Hashable]:
        return [r.id for r in self.items]


def _in_time(c: Candidate, window: Window) -> str | None:
    if c.occurred_at is not None and in_window(c.occurred_at, window):
        return f"said {c.occurred_at.date().isoformat()}"
    for span in c.dates:
        if overlaps_window(span, window):
            lo = span[0].isoformat()[:10]
            return f"about {lo}"
    return None


def reweight(
    candidates: Sequence[Candidate],
    *,
    time_window: Window | None = None,
    speaker_priors: Mapping[str, float] | None = None,
    candidate_priors: Mapping[Hashable, float] | None = None,
    asker_turns: Collection[Hashable] = (),
    addressee_turns: Collection[Hashable] = (),
    knowledge_update: bool = False,
    newer: Mapping[Hashable, Candidate] | None = None,
    inject: Sequence[tuple[Candidate, str]] = (),
    config: ReweightConfig = ReweightConfig(),
) -> ReweightOutput:
    """Apply eq. 4's factors to `candidates` (best first on input) and return them re-sorted.

    `speaker_priors` (speaker -> [0, 1]) and/or `candidate_priors` (id -> [0, 1], e.g. style-vector
    similarity per message) are given only when the question is about a person. `asker_turns`: ids of
    the asking user's own turns, given for a first-person question (f_asker); `addressee_turns`: the
    assistant's, given for a question addressed to "you". `knowledge_update`
    turns on the newest-assertion preference (the intent is knowledge_update). `newer` maps ids of
    superseding assertions to candidates the caller can supply when they were not retrieved.
    `inject`: extra (candidate, "profile" | "style") results from the speaker engram, scored at
    0.8× / 0.9× the best existing score unless already present.
    """
    out = ReweightOutput(items=[])
    items: dict[Hashable, Reweighted] = {}
    order: list[Hashable] = []
    for i, c in enumerate(candidates, start=1):
        if c.id in items:
            continue
        if config.salience and config.salience_floor is not None and c.salience is not None \
                and c.salience < config.salience_floor:
            out.dropped.append(Dropped(c, f"salience {c.salience:.3f} < floor {config.salience_floor:.3f}"))
            continue
        items[c.id] = Reweighted(c.id, float(c.score), float(c.score), c, rank_before=i)
        order.append(c.id)

    # f_L0 injection: engram results the signals did not retrieve, scaled to the best existing score.
    if inject and config.speaker:
        top = max((r.score for r in items.values()), default=1.0)
        for c, why in inject:
            if c.id in items:
                continue
            scale = STYLE_INJECT_SCALE if why == "style" else PROFILE_INJECT_SCALE
            r = Reweighted(c.id, top * scale, float(c.score), c, injected=why)
            r.adjustments.append(Adjustment("speaker_inject", scale, 0.0, r.score, f"{why} result at {scale}x max"))
            items[c.id] = r
            order.append(c.id)

    for rid in order:
        r = items[rid]
        c = r.candidate
        if config.temporal and time_window is not None and config.temporal_boost != 1.0:
            why = _in_time(c, time_window)
            if why:
                r._apply("temporal", config.temporal_boost, f"inside the question's window ({why})")
        if config.speaker and (speaker_priors or candidate_priors):
            prior = 0.0
            if speaker_priors and c.speaker is not None:
                prior = max(prior, float(speaker_priors.get(c.speaker, 0.0)))
            if candidate_priors:
                prior = max(prior, float(candidate_priors.get(c.id, 0.0)))
            prior = min(1.0, max(0.0, prior))
            if prior > 0 and config.speaker_beta > 0:
                r._apply("speaker", 1.0 + config.speaker_beta * prior, f"speaker prior {prior:.2f}")
        if config.asker and c.id in asker_turns and config.asker_beta > 0:
            r._apply("asker", 1.0 + config.asker_beta, "the asker's own turn (first-person question)")
        if config.asker and c.id in addressee_turns and config.addressee_beta > 0:
            r._apply("addressee", 1.0 + config.addressee_beta, "the addressee's turn (question to \"you\")")
        if config.surprise and c.surprise is not None and c.surprise > 0:
            r._apply("surprise", 1.0 + config.surprise_alpha * float(c.surprise), f"sigma {c.surprise:.2f}")

    if knowledge_update and config.knowledge_update:
        _prefer_newest(items, order, newer or {}, config, out)

    ranked = sorted(items.values(), key=lambda r: (-r.score, r.rank_before if r.rank_before is not None else 10**9))
    for k, r in enumerate(ranked, start=1):
        r.rank_after = k
    out.items = ranked
    return out


def newest(start: Hashable, links: Mapping[Hashable, Hashable]) -> Hashable:
    """The end of `start`'s supersession chain (`links`: id -> the id that superseded it); `start`
    itself when nothing did. A cycle stops the walk."""
    seen = {start}
    cur = start
    while cur in links and links[cur] is not None and links[cur] not in seen:
        cur = links[cur]
        seen.add(cur)
    return cur


def _prefer_newest(items: dict[Hashable, Reweighted], order: list[Hashable], newer: Mapping[Hashable, Candidate],
                   config: ReweightConfig, out: ReweightOutput) -> None:
    links: dict[Hashable, Hashable] = {}
    for r in items.values():
        if r.candidate.superseded_by is not None:
            links[r.id] = r.candidate.superseded_by
    for c in newer.values():
        if c.superseded_by is not None:
            links.setdefault(c.id, c.superseded_by)
    for old_id in list(order):
        old = items[old_id]
        if old.candidate.superseded_by is None:
            continue
        head = newest(old_id, links)
        if head == old_id:
            continue
        if head not in items:
            if head in newer:
                c = newer[head]
                r = Reweighted(head, 0.0, float(c.score), c, injected="newer_assertion")
                r.adjustments.append(Adjustment("knowledge_update", None, 0.0, 0.0,
                                                f"injected: supersedes retrieved {old_id}"))
                items[head] = r
                order.append(head)
            else:
                if head not in out.missing_newer:
                    out.missing_newer.append(head)
                continue
        new = items[head]
        old.superseded_by = head
        if old_id not in new.supersedes:
            new.supersedes.append(old_id)
        old._apply("knowledge_update", config.superseded_factor, f"superseded by {head}")
        target = max(old.score / config.superseded_factor, 0.0) * NEWER_MARGIN  # above the old one's pre-demotion score
        if new.score < target:
            before = new.score
            new.score = target
            new.adjustments.append(Adjustment("knowledge_update", new.score / before if before > 0 else None,
                                              before, new.score, f"newest assertion; supersedes {old_id}"))


def with_scores(candidates: Sequence[Candidate], scores: Mapping[Hashable, float]) -> list[Candidate]:
    """Convenience: the same candidates with new fused scores (e.g. after fusion re-runs)."""
    return [replace(c, score=float(scores.get(c.id, c.score))) for c in candidates]
