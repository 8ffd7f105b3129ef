"""What a candidate's words and its neighbours say about a question, as ranking features (pure).

The signals score a turn alone. What they miss, all of it general to conversation:

- **How much of the question a turn covers.** BM25 sums over shared terms; it does not say that a
  turn holds *all* of "which city did the conference move to" rather than "city" five times. Per
  candidate: the share of the question's content words it holds (`q_cover`), the same weighted by
  how rare each word is among this question's candidates (`q_cover_idf`), and how many of the names
  the question spells with a capital it holds (`q_names`). Words are compared by a crude stem
  (lower case, a plural or verb ending cut), so "moved" meets "moving".
- **The question it answers.** An answer is often the reply to the turn that matches the question
  ("Where did you go?" — "Lisbon, in May!"). Per candidate, when the nearest candidate before it in
  the same conversation is a question no more than `EXCHANGE_GAP_S` earlier (a longer pause ends an
  exchange; a turn between them that no signal found is not read, as the query reads nothing beyond
  its candidates): that question's dense and lexical relevance (score over the question's best) and
  its coverage. Only a question lends its match: a statement next to the one that matches is not
  thereby an answer (measured: with every neighbour's relevance, and the next turn's too, the turns
  on either side of the one answer in a three-turn conversation outranked it).
- **What kind of turn it is.** A standing instruction to the assistant ("Always include version
  numbers when I ask about libraries", "From now on, answer in French") bears on every later request
  its condition covers, though it shares few words with them; so does a stated preference ("I prefer
  small dependencies", "I'd rather fly"). Per candidate: whether it states a standing rule
  (`standing_rule`: a sentence that opens with "always"/"never" and an imperative verb, "from now
  on"/"going forward" with one, or "when I ask ...") and whether it states the speaker's preference
  (`states_preference`). The ranker learns when either matters together with the turn's relevance.
  (Whether the question is a request to do something now was tried as a third feature: it never
  fired on a LoCoMo question and cost LoCoMo r@10 in every fit, stop 28.)
- **What else its sitting holds.** The turns that answer a question often come together: one sitting
  about the trip, one debugging session. A turn of a sitting whose best candidate matches the question
  well is likelier evidence than an equally scored turn of a sitting that matches nothing. Per
  candidate and its sitting: how many other candidates it holds (`session_others`, log), the best
  dense and lexical relevance in it, the candidate's own included (`session_dense_best`,
  `session_lexical_best`), how far the candidate's own relevance lies above (or below) the best of the
  others (`session_dense_lead`, `session_lexical_lead`; 0 alone). The lead is there so that a
  sitting lends its strength without handing it to the turns beside the answer: with the others'
  best alone as a feature, one of three fits ranked the two statements on either side of an answer
  above it; and the others' summed fused relevance, a fifth column tried, lent a busy sitting's mass
  to every turn of it, so that in a twelve-turn chat "Where did Ana move?" ranked a turn about
  someone else's move above "We finally moved to Denver last spring." (stop 29). A sitting is a run
  of candidates of one conversation with no gap of `SESSION_GAP_S` (the episodes' six hours) between
  consecutive ones; as only candidates are read, that is the session the turns were said in, whatever
  the episodes layer has built yet. The same five over the candidate's topic episode (`episode_*`, the
  episodes layer's index, where it has run; a candidate without one is alone).
"""
from __future__ import annotations

import math
import re
from collections.abc import Hashable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from app.domain.layers.text import STOPWORDS, words

CONTEXT_FEATURES = ("q_cover", "q_cover_idf", "q_names", "is_question",
                    "prev_found", "prev_dense_rel", "prev_lexical_rel", "prev_cover",
                    "standing_rule", "states_preference")
_GROUP_FEATURES = ("others", "dense_best", "dense_lead", "lexical_best", "lexical_lead")
SESSION_FEATURES = tuple(f"session_{f}" for f in _GROUP_FEATURES) + tuple(f"episode_{f}" for f in _GROUP_FEATURES)
EXCHANGE_GAP_S = 1800.0
SESSION_GAP_S = 6 * 3600.0
_ENDINGS = ("ing", "ed", "es", "s")
_QUESTION_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "did",
                             "does", "do", "is", "are", "was", "were", "has", "have", "can", "could", "would"})


# verbs an instruction to an assistant opens with ("always include ...", "never use ...")
_DO = (r"(?:use|include|give|provide|format|add|keep|answer|reply|respond|mention|show|write|list|explain|"
       r"confirm|remind|check|tell|call|refer|put|start|end|avoid|make|ask|cite|be|do|assume|suggest|"
       r"recommend|send|omit|skip|double-check|summari[sz]e|translate|follow|wrap|label|highlight|note|state|"
       r"specify|quote|present|break|structure|limit|stick|prioriti[sz]e|focus|express|convert|round|spell|"
       r"address|greet|sign|respect)")
_OPENS = r"(?:^|[.!?\n]\s*)(?:please\s+)?"
_STANDING_RULE = re.compile(
    r"\bwhen(?:ever)?\s+I\s+ask\b"
    rf"|{_OPENS}(?:always|never|(?:don'?t|do\s+not)\s+ever)\s+{_DO}\b"
    rf"|\b(?:from\s+now\s+on|going\s+forward|from\s+here\s+on|in\s+(?:the\s+)?future)\s*,?\s+(?:please\s+)?"
    rf"(?:always\s+|never\s+|don'?t\s+|do\s+not\s+)?{_DO}\b", re.IGNORECASE)
_PREFERENCE = re.compile(
    r"\bI(?:'d|\s+would|\s+really|\s+generally|\s+usually|\s+much|\s+strongly|\s+definitely|\s+still|\s+also"
    r"|\s+tend\s+to)*\s+(?:prefer|rather)\b|\bmy\s+(?:preference|preferred)\b", re.IGNORECASE)


# words one of the patterns needs: a text with none of them is not searched (most turns; a long one
# costs ~0.4 ms to search, ~0.01 ms to rule out)
_RULE_KEYS = ("always", "never", "ever", " ask", "forward", "now on", "here on", "future")
_PREFERENCE_KEYS = ("prefer", "rather")


@lru_cache(maxsize=8192)  # like `_terms`: a turn is a candidate of many questions
def turn_kind(text: str) -> tuple[bool, bool]:
    """(standing rule, stated preference). A standing instruction to the assistant: "Always X when I
    ask about Y", "From now on, use Z". A preference: "I prefer ...", "I'd rather ...", "my preferred
    ..."."""
    low = text.lower()
    return (any(k in low for k in _RULE_KEYS) and _STANDING_RULE.search(text) is not None,
            any(k in low for k in _PREFERENCE_KEYS) and _PREFERENCE.search(text) is not None)


def stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    for end in _ENDINGS:
        if w.endswith(end) and len(w) - len(end) >= 3:
            w = w[: -len(end)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


@lru_cache(maxsize=65536)  # a conversation's vocabulary: a word is looked at once, not once per turn
def _term(word: str) -> str | None:
    low = word.lower()
    return None if len(word) <= 2 or low in STOPWORDS or low in _QUESTION_WORDS else stem(word)


@lru_cache(maxsize=8192)  # the same turns are candidates of many questions
def _terms(text: str) -> frozenset[str]:
    out = {_term(w) for w in words(text)}
    out.discard(None)
    return frozenset(out)  # type: ignore[arg-type]


def _names(query: str) -> frozenset[str]:
    """The question's capitalised words past its first word (names, places, titles), stemmed."""
    toks = words(query)
    return frozenset(stem(w) for w in toks[1:] if w[:1].isupper() and w.lower() not in STOPWORDS and len(w) > 1)


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?")


def time_order(items: Sequence[Any]) -> list[int]:
    """The items' indexes by conversation, then time said (then id): the order the exchange and the
    sittings are read in."""
    return sorted(range(len(items)), key=lambda i: (_conversation(items[i].event), items[i].event.occurred_at,
                                                    items[i].event.id))


def context_features(items: Sequence[Any], rel: Mapping[str, Sequence[float]], query: str,
                     order: Sequence[int] | None = None) -> np.ndarray:
    """One row per item (`.event` with conversation_id, occurred_at, id, content), columns in
    `CONTEXT_FEATURES` order. `rel`: per signal name ("dense", "lexical"), each item's score over the
    signal's best for this question (0 where the signal did not find it). `order`: `time_order(items)`
    where the caller has it already."""
    n = len(items)
    x = np.zeros((n, len(CONTEXT_FEATURES)), dtype=np.float64)
    if n == 0:
        return x
    col = {name: i for i, name in enumerate(CONTEXT_FEATURES)}
    q_terms = _terms(query)
    q_names = _names(query)
    terms = [_terms(it.event.content or "") for it in items]
    df = {t: sum(1 for ts in terms if t in ts) for t in q_terms}
    idf = {t: math.log(1.0 + n / (1.0 + df[t])) for t in q_terms}
    idf_total = sum(idf.values()) or 1.0
    cover = np.zeros(n)
    for i, ts in enumerate(terms):
        shared = q_terms & ts
        cover[i] = len(shared) / len(q_terms) if q_terms else 0.0
        x[i, col["q_cover"]] = cover[i]
        x[i, col["q_cover_idf"]] = sum(idf[t] for t in shared) / idf_total if q_terms else 0.0
        x[i, col["q_names"]] = float(len(q_names & ts))
        content = items[i].event.content or ""
        x[i, col["is_question"]] = 1.0 if _is_question(content) else 0.0
        rule, preference = turn_kind(content)
        x[i, col["standing_rule"]] = 1.0 if rule else 0.0
        x[i, col["states_preference"]] = 1.0 if preference else 0.0
    dense, lexical = rel.get("dense"), rel.get("lexical")
    order = time_order(items) if order is None else order
    for k, i in enumerate(order[1:], start=1):
        j = order[k - 1]
        if not x[j, col["is_question"]] or not _adjacent(items[i].event, items[j].event):
            continue
        x[i, col["prev_found"]] = 1.0
        x[i, col["prev_dense_rel"]] = dense[j] if dense is not None else 0.0
        x[i, col["prev_lexical_rel"]] = lexical[j] if lexical is not None else 0.0
        x[i, col["prev_cover"]] = cover[j]
    return x


def _conversation(event: Any) -> str:
    return getattr(event, "conversation_id", None) or ""


def _adjacent(a: Any, b: Any) -> bool:
    return _conversation(a) == _conversation(b) and \
        abs((a.occurred_at - b.occurred_at).total_seconds()) <= EXCHANGE_GAP_S


def session_keys(items: Sequence[Any], order: Sequence[int] | None = None) -> list[tuple[str, int]]:
    """Per item, (conversation, sitting number): candidates of one conversation in time order, a new
    sitting at each gap of `SESSION_GAP_S` or more between consecutive ones. `order`: `time_order(items)`
    where the caller has it already."""
    order = time_order(items) if order is None else order
    keys: list[tuple[str, int]] = [("", 0)] * len(items)
    run, prev = 0, None
    for i in order:
        ev = items[i].event
        if prev is not None and (_conversation(ev) != _conversation(prev)
                                 or (ev.occurred_at - prev.occurred_at).total_seconds() >= SESSION_GAP_S):
            run += 1
        keys[i] = (_conversation(ev), run)
        prev = ev
    return keys


def group_features(keys: Sequence[Hashable | None], dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
    """Per item and the items with its key (None: a group of its own), `_GROUP_FEATURES` order:
    log(1 + how many others), and per signal (dense, lexical) the group's best relevance, its own
    included, and its own minus the others' best (0 alone)."""
    n = len(keys)
    out = np.zeros((n, len(_GROUP_FEATURES)))
    out[:, 1], out[:, 3] = dense, lexical  # alone: the group's best is its own, its lead 0
    members: dict[Hashable, list[int]] = {}
    for i, k in enumerate(keys):
        if k is not None:
            members.setdefault(k, []).append(i)
    for idx in members.values():
        if len(idx) < 2:
            continue
        a = np.array(idx)
        out[a, 0] = math.log1p(len(idx) - 1)
        for col, v in ((1, dense[a]), (3, lexical[a])):
            top = np.argsort(-v, kind="stable")[:2]  # the best of the others: the second best for the best
            others_best = np.full(len(a), v[top[0]])
            others_best[top[0]] = v[top[1]]
            out[a, col] = v[top[0]]
            out[a, col + 1] = v - others_best
    return out
