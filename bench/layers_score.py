"""Scoring the layers against the hand-labelled set: pure functions over plain predictions.

The rules are described in bench/data/layers/README.md ("What is scored"). Predictions are plain
dataclasses (`PredAssertion`, `PredTime`, `PredEntity`) so any extractor can be scored, and the
unit tests build them by hand. Every scorer returns `Counts` (summable across conversations) and
a list of readable errors.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, timedelta

from bench.layers_data import Conversation, GoldAssertion

_EDGE_PUNCT = " \t.,!?;:'\"()[]{}«»“”‘’"


def norm(text: str) -> str:
    """The form two surfaces share when they say the same thing: NFC, case, curly quotes, surrounding
    punctuation, a leading article, a trailing possessive. Diacritics are kept."""
    s = unicodedata.normalize("NFC", text).casefold().replace("’", "'").replace("‘", "'")
    s = re.sub(r"\s+", " ", s).strip(_EDGE_PUNCT)
    s = re.sub(r"'s$", "", s)
    s = re.sub(r"^(the|a|an)\s+", "", s)
    s = re.sub(r"^(dr|mr|mrs|ms|mx|prof)\.?\s+", "", s)  # "Dr. Okafor" = "Okafor"
    return s.strip(_EDGE_PUNCT)


def norm_attribute(attr: str) -> str:
    kind, _, what = attr.partition(":")
    return f"{kind.strip().lower()}:{norm(what)}" if what else kind.strip().lower()


@dataclass(frozen=True)
class PredAssertion:
    id: str
    turn: str
    entity: str
    attribute: str
    value: str
    day: date
    negated: bool = False
    superseded_by: str | None = None


@dataclass(frozen=True)
class PredTime:
    turn: str
    char_start: int
    char_end: int
    text: str
    start: date | None  # None: found but not resolved
    end: date | None


@dataclass(frozen=True)
class PredEntity:
    forms: tuple[str, ...]  # name first, then aliases


@dataclass
class Counts:
    """Summable counts; `prf` and `share` turn them into rates."""

    values: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, n: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + n

    def __getitem__(self, key: str) -> int:
        return self.values.get(key, 0)

    def __iadd__(self, other: "Counts") -> "Counts":
        for k, v in other.values.items():
            self.add(k, v)
        return self


def prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    p = tp / (tp + fp) if tp + fp else (1.0 if not fn else 0.0)
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4), "tp": tp, "fp": fp, "fn": fn}


def share(n: int, d: int) -> float:
    return round(n / d, 4) if d else 1.0


# ------------------------------------------------------------------ assertions and supersessions


def _cluster_of(conv: Conversation) -> dict[str, str]:
    return {norm(f): e.id for e in conv.entities for f in e.forms}


def _same(g: GoldAssertion, p: PredAssertion, clusters: dict[str, str]) -> bool:
    ent = clusters.get(norm(p.entity), "?" + norm(p.entity))
    return (p.turn == g.turn and ent == g.entity and norm_attribute(p.attribute) == norm_attribute(g.attribute)
            and norm(p.value) in {norm(v) for v in (g.value, *g.alts)} and p.negated == g.negated)


def match_assertions(conv: Conversation, preds: list[PredAssertion]) -> dict[str, str]:
    """pred id -> gold id, one to one, gold in file order, predictions in their order."""
    clusters = _cluster_of(conv)
    used: dict[str, str] = {}
    taken: set[str] = set()
    for g in conv.assertions:
        for p in preds:
            if p.id not in used and _same(g, p, clusters):
                used[p.id] = g.id
                taken.add(g.id)
                break
    return used


def _overlaps(a0: date, a1: date | None, b0: date, b1: date | None) -> bool:
    far = date.max
    a1 = max(a1 or far, a0 + timedelta(days=1))
    b1 = max(b1 or far, b0 + timedelta(days=1))
    return max(a0, b0) < min(a1, b1)


def _fmt(p: PredAssertion) -> str:
    neg = "NOT " if p.negated else ""
    return f"{p.turn} {p.entity} {p.attribute} = {neg}{p.value}"


def _fmt_gold(g: GoldAssertion) -> str:
    neg = "NOT " if g.negated else ""
    return f"{g.turn} {g.entity} {g.attribute} = {neg}{g.value}  [{g.says!r}]"


def score_assertions(conv: Conversation, preds: list[PredAssertion]) -> tuple[Counts, Counts, list[str]]:
    """(assertion counts, supersession counts, errors). Assertion counts hold tp/fp/fn and, for the
    matched ones, validity_exact / validity_overlap; supersession counts hold tp/fp/fn."""
    m = match_assertions(conv, preds)
    by_pred = {p.id: p for p in preds}
    errors: list[str] = []
    a = Counts()
    a.add("tp", len(m))
    a.add("fp", len(preds) - len(m))
    a.add("fn", len(conv.assertions) - len(m))
    for p in preds:
        if p.id not in m:
            errors.append(f"assertion false: {conv.id} {_fmt(p)}")
    got = set(m.values())
    for g in conv.assertions:
        if g.id not in got:
            errors.append(f"assertion missed: {conv.id} {_fmt_gold(g)}")
    gold = {g.id: g for g in conv.assertions}
    for pid, gid in m.items():
        p, g = by_pred[pid], gold[gid]
        sup = by_pred.get(p.superseded_by) if p.superseded_by else None
        p_to = sup.day if sup else None
        a.add("validity_exact", int(p.day == g.valid_from and p_to == g.valid_to))
        a.add("validity_overlap", int(_overlaps(p.day, p_to, g.valid_from, g.valid_to)))
    s = Counts()
    gold_pairs = {(old, g.id) for g in conv.assertions for old in g.supersedes}
    hit: set[tuple[str, str]] = set()
    for p in preds:
        if not p.superseded_by:
            continue
        pair = (m.get(p.id), m.get(p.superseded_by))
        if pair in gold_pairs and pair not in hit:
            hit.add(pair)  # type: ignore[arg-type]
            s.add("tp")
        else:
            s.add("fp")
            newer = by_pred.get(p.superseded_by)
            errors.append(f"supersession false: {conv.id} {_fmt(p)}  ->  {_fmt(newer) if newer else p.superseded_by}")
    for old, new in sorted(gold_pairs - hit):
        s.add("fn")
        errors.append(f"supersession missed: {conv.id} {_fmt_gold(gold[old])}  ->  {_fmt_gold(gold[new])}")
    return a, s, errors


# ------------------------------------------------------------------ time spans


def score_times(conv: Conversation, preds: list[PredTime]) -> tuple[Counts, list[str]]:
    """gold (scored spans), exact, overlap, detected, predicted, spurious."""
    c = Counts()
    errors: list[str] = []
    by_turn: dict[str, list[PredTime]] = {}
    for p in preds:
        by_turn.setdefault(p.turn, []).append(p)
    c.add("predicted", len(preds))
    for p in preds:
        if not any(g.turn == p.turn and p.char_start < g.char_end and g.char_start < p.char_end for g in conv.times):
            c.add("spurious")
            errors.append(f"time spurious: {conv.id} {p.turn} {p.text!r} -> {p.start}..{p.end}")
    for g in conv.times:
        if g.start is None:
            continue
        c.add("gold")
        cands = [p for p in by_turn.get(g.turn, []) if p.char_start < g.char_end and g.char_start < p.char_end]
        if not cands:
            errors.append(f"time missed: {conv.id} {g.turn} {g.text!r} (gold {g.start}..{g.end})")
            continue
        c.add("detected")
        best = max(cands, key=lambda p: (p.start is not None and p.start == g.start and p.end == g.end,
                                         min(p.char_end, g.char_end) - max(p.char_start, g.char_start)))
        exact = best.start == g.start and best.end == g.end
        overlap = best.start is not None and _overlaps(best.start, best.end, g.start, g.end)  # type: ignore[arg-type]
        c.add("exact", int(exact))
        c.add("overlap", int(overlap))
        if not exact:
            errors.append(f"time wrong: {conv.id} {g.turn} {g.text!r} gold {g.start}..{g.end}, "
                          f"got {best.text!r} {best.start}..{best.end}{'' if overlap else ' (no overlap)'}")
    return c, errors


# ------------------------------------------------------------------ entity clusters


def score_entities(conv: Conversation, preds: list[PredEntity], skip_speaker_only: bool = False) -> tuple[Counts, list[str]]:
    """Exact-cluster tp/fp/fn over product entities touching a gold form, plus B³ sums
    (b3_p_sum / b3_r_sum over b3_items gold forms)."""
    speakers = {norm(s) for s in conv.speakers}
    gold_sets = {e.id: {norm(f) for f in e.forms} for e in conv.entities}
    if skip_speaker_only:
        gold_sets = {k: v for k, v in gold_sets.items() if not v <= speakers}
    form_to_gold = {f: cid for cid, fs in gold_sets.items() for f in fs}
    c = Counts()
    errors: list[str] = []
    matched: set[str] = set()
    pred_of_form: dict[str, int] = {}
    for i, pe in enumerate(preds):
        keys = {norm(f) for f in pe.forms} & form_to_gold.keys()
        if not keys:
            continue
        for k in keys:
            pred_of_form.setdefault(k, i)
        cids = {form_to_gold[k] for k in keys}
        cid = next(iter(cids))
        if len(cids) == 1 and keys == gold_sets[cid] and cid not in matched:
            matched.add(cid)
            c.add("tp")
        else:
            c.add("fp")
            errors.append(f"entity wrong: {conv.id} product {list(pe.forms)} vs gold "
                          f"{sorted(sorted(gold_sets[x]) for x in cids)}")
    c.add("fn", len(gold_sets) - len(matched))
    for cid in sorted(set(gold_sets) - matched):
        errors.append(f"entity missed: {conv.id} {cid} {sorted(gold_sets[cid])}")
    # B-cubed over gold forms; a form the product never produced is its own predicted cluster
    pred_cluster = {f: pred_of_form.get(f, -1 - n) for n, f in enumerate(sorted(form_to_gold))}
    for f, cid in form_to_gold.items():
        same_pred = {g for g in form_to_gold if pred_cluster[g] == pred_cluster[f]}
        same_gold = gold_sets[cid]
        both = len(same_pred & same_gold)
        c.add("b3_items")
        c.values["b3_p_milli"] = c["b3_p_milli"] + round(1000 * both / len(same_pred))
        c.values["b3_r_milli"] = c["b3_r_milli"] + round(1000 * both / len(same_gold))
    return c, errors


def b3(c: Counts) -> dict[str, float]:
    n = c["b3_items"]
    p = c["b3_p_milli"] / 1000 / n if n else 1.0
    r = c["b3_r_milli"] / 1000 / n if n else 1.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}
