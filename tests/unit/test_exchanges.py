"""A question asking for an account of what was discussed gets exchanges: each of the best turns with
the turn it answers and the reply it got (app/domain/retrieval/exchanges.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.retrieval.exchanges import asks_for_account, exchange_order, partners

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Ev:
    id: int
    speaker: str
    minute: int

    @property
    def occurred_at(self) -> datetime:
        return T0 + timedelta(minutes=self.minute)


@dataclass
class Item:
    event: Ev
    score: float
    stages: dict = field(default_factory=dict)


# one conversation: a user's question, the assistant's long reply, and so on; turn 6 is a day later
LOG = [Ev(1, "user", 0), Ev(2, "assistant", 1), Ev(3, "user", 2), Ev(4, "assistant", 3), Ev(5, "user", 4),
       Ev(6, "assistant", 60 * 24), Ev(7, "user", 60 * 24 + 1), Ev(8, "user", 60 * 24 + 2)]
BY_ID = {e.id: e for e in LOG}


def around(pks):
    out = {}
    for pk in pks:
        i = LOG.index(BY_ID[pk])
        out[pk] = [e for e in (LOG[i - 1] if i else None, LOG[i + 1] if i + 1 < len(LOG) else None) if e]
    return out


@pytest.mark.parametrize("question", [
    "Can you give me a summary of how my budgeting has developed over our conversations?",
    "Summarize what we decided about the kitchen.", "Could you summarise the advice so far?",
    "Give me a quick recap of the trip planning.", "An overview of the options we discussed, please.",
    "Can you sum it up for me?", "sum up the plan", "What's the rundown on the move?",
])
def test_a_request_for_an_account_is_recognised(question):
    assert asks_for_account(question)


@pytest.mark.parametrize("question", [
    "Which summit did she climb last summer?", "What sum did I pay for the deposit?",
    "Can you walk me through the order in which I brought up the options?",
    "What did you recommend for the kitchen?", "When did we talk about the move?", "", "Summertime plans?",
])
def test_other_questions_are_not(question):
    assert not asks_for_account(question)


def test_partners_are_the_other_speakers_turns_just_before_and_after():
    assert [e.id for e in partners(BY_ID[3], around([3])[3])] == [2, 4]
    assert [e.id for e in partners(BY_ID[1], around([1])[1])] == [2]  # nothing before the first turn


def test_a_turn_a_day_away_or_by_the_same_speaker_is_no_partner():
    assert partners(BY_ID[6], around([6])[6]) == [BY_ID[7]]  # turn 5 was said a day before
    assert partners(BY_ID[8], around([8])[8]) == []  # turn 7 is the same speaker's


def _ranked(*pairs):
    return [Item(BY_ID[pk], score) for pk, score in pairs]


def test_the_reply_ranked_lower_moves_up_beside_its_turn_in_time_order():
    ranked = _ranked((3, 0.9), (7, 0.8), (1, 0.7), (4, 0.2), (2, 0.1))
    out = exchange_order(ranked, around([3, 7]), depth=2, make=lambda e, s: Item(e, s))
    assert [it.event.id for it in out] == [2, 3, 4, 6, 7, 1]
    assert out[2].stages["exchange"] == {"with": 3, "rank_before": 4}
    assert out[0].stages["exchange"] == {"with": 3, "rank_before": 5}
    scores = [it.score for it in out]
    assert scores == sorted(scores, reverse=True)
    assert "exchange" not in out[1].stages  # the turn itself stays as it was ranked


def test_a_partner_not_retrieved_is_read_in_only_when_the_request_may_see_it():
    ranked = _ranked((3, 0.9), (1, 0.5))
    made = exchange_order(ranked, around([3]), depth=1, make=lambda e, s: Item(e, s))
    assert [it.event.id for it in made] == [2, 3, 4, 1]
    assert made[0].stages["exchange"]["rank_before"] is None and made[0].score == 0.9
    hidden = exchange_order(_ranked((3, 0.9), (1, 0.5)), around([3]), depth=1, make=lambda e, s: Item(e, s),
                            visible=lambda e: e.speaker == "user")
    assert [it.event.id for it in hidden] == [3, 1]


def test_below_the_depth_the_order_is_kept_and_nothing_repeats():
    ranked = _ranked((5, 0.9), (1, 0.8), (4, 0.7), (2, 0.6))
    out = exchange_order(ranked, around([5]), depth=1, make=lambda e, s: Item(e, s))
    ids = [it.event.id for it in out]
    assert ids == [4, 5, 1, 2]  # turn 5's reply was a day later: only the turn it answers joins
    assert len(ids) == len(set(ids))


@dataclass(frozen=True)
class RoleEv:
    id: int
    speaker: str
    minute: int
    role: str | None

    @property
    def occurred_at(self) -> datetime:
        return T0 + timedelta(minutes=self.minute)


def test_with_roles_an_exchange_runs_from_the_users_turn_to_the_reply():
    # the user asks (2), the assistant answers (3), the user asks again (4), the assistant answers (5)
    log = [RoleEv(1, "assistant", 0, "assistant"), RoleEv(2, "user", 1, "user"), RoleEv(3, "assistant", 2, "assistant"),
           RoleEv(4, "user", 3, "user"), RoleEv(5, "assistant", 4, "assistant")]
    assert [e.id for e in partners(log[1], [log[0], log[2]])] == [3]  # the assistant turn before ended the last one
    assert [e.id for e in partners(log[2], [log[1], log[3]])] == [2]  # the user's next question starts the next one
    # a turn without a role (a group chat, two people) keeps both sides
    plain = RoleEv(3, "Ana", 2, None)
    assert [e.id for e in partners(plain, [log[1], log[3]])] == [2, 4]
