"""A question that asks for an account of what was discussed is answered by exchanges, not turns.

"Can you give me a summary of the options and advice we talked about?", "a recap of how my plan
changed": what was discussed is what one side said and what the other answered. A ranker that scores
turns one by one finds the turns whose words match the question, mostly one side's (the user names
the topic; the assistant's long replies hold the advice and the accounts, in words the question does
not repeat). So, for such a question only, each of the first `depth` ranked turns brings the turn it
answers and the reply it got next to it, in the order they were said: the reply when it was ranked
lower, or read from the conversation when it was not retrieved at all.

Where the roles say who asks (user / assistant), an exchange runs from the user's turn to the reply
it got; without roles (two people talking) a turn's exchange is the turn before it and the turn after.

Measured on BEAM 100K, the shipped ranker, top 50, budget 2,000 (docs/pipeline.md, "Exchanges for an
account"): on the train split's 28 questions of this form r@10 0.571 -> 0.786, mrr 0.281 -> 0.342 (both
sides for every turn, whatever its role: the same r@10, mrr 0.244); on validation's 8, r@10 0.250 ->
0.500. The context holds fewer turns (the replies are long): er@2k 0.196 -> 0.135 on train, 0.083 ->
0.124 on validation. The detector is a question form, not a topic: summary / summarise / recap /
overview / "sum up" / rundown; it picks out every BEAM summarization question and no other question of
the three data sets.

Pure: the turns next to each candidate come in from the caller (`app.storage.events.neighbours`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.domain.retrieval.context_features import EXCHANGE_GAP_S
from app.domain.retrieval.fusion import settle_order

ACCOUNT_RE = re.compile(
    r"\b(?:summar(?:y|ies|i[sz]e[ds]?|i[sz]ing)|recap(?:s|ped)?|overview|run-?down|sum(?:s|med)?"
    r"(?: (?:it|this|that|things|everything|them))? up)\b", re.I)


def asks_for_account(query: str) -> bool:
    """The question asks for a summary, recap or overview of what was said."""
    return bool(ACCOUNT_RE.search(query or ""))


def partners(event: Any, around: Sequence[Any], gap_s: float = EXCHANGE_GAP_S) -> list[Any]:
    """The turn `event` answers and the reply it got, among `around` (its neighbours in the conversation,
    any order): the nearest turn before and after it, when another speaker said it within `gap_s`.
    Where the roles say who asks, an exchange runs from the asker to the answer: a user's turn brings
    the reply after it, an assistant's the turn before it (the turn before a user's is the end of the
    exchange before; the turn after an assistant's, the next one's start)."""
    before = [e for e in around if (e.occurred_at, e.id) < (event.occurred_at, event.id)]
    after = [e for e in around if (e.occurred_at, e.id) > (event.occurred_at, event.id)]
    sides = {"user": (False, True), "assistant": (True, False)}.get(getattr(event, "role", None), (True, True))
    out = []
    for wanted, e in zip(sides, (max(before, key=lambda e: (e.occurred_at, e.id), default=None),
                                 min(after, key=lambda e: (e.occurred_at, e.id), default=None))):
        if wanted and e is not None and e.speaker != event.speaker \
                and abs((e.occurred_at - event.occurred_at).total_seconds()) <= gap_s:
            out.append(e)
    return out


def exchange_order(ranked: list[Any], around: Mapping[int, Sequence[Any]], *, depth: int,
                   make: Callable[[Any, float], Any], visible: Callable[[Any], bool] = lambda e: True
                   ) -> list[Any]:
    """Each of the first `depth` ranked items, in time order with its partners (`partners`):
    the exchange takes the place of its best ranked turn. A partner ranked lower moves up (its stages
    say from where); one not ranked is made with `make(event, score)` when `visible(event)` (the
    request's filters). The rest keeps its order below; scores are lowered where needed so they stay
    in rank order. Items have `.event` (with `id`, `speaker`, `occurred_at`), `.score` and `.stages`."""
    by_id = {r.event.id: r for r in ranked}
    pos = {r.event.id: i for i, r in enumerate(ranked, start=1)}
    out: list[Any] = []
    placed: set[int] = set()
    for r in ranked[:depth]:
        if r.event.id in placed:
            continue
        group = [r]
        for e in partners(r.event, around.get(r.event.id, ())):
            if e.id in placed:
                continue
            item = by_id.get(e.id)
            if item is None and visible(e):
                item = make(e, r.score)
            if item is not None:
                item.stages["exchange"] = {"with": r.event.id, "rank_before": pos.get(e.id)}
                group.append(item)
        group.sort(key=lambda it: (it.event.occurred_at, it.event.id))
        for it in group:
            it.score = max(it.score, r.score) if it is not r else it.score
            out.append(it)
            placed.add(it.event.id)
    return settle_order(out, ranked, depth, placed)
