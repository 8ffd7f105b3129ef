"""What a claim is: one (entity, attribute, value) assertion, said in one event, and the version of the
rules that extract it. Its own module so that the rule modules (`assertions`, `assertion_anchored`,
`assertion_claims`) all read it from here instead of from each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from app.domain.layers.assertion_rules import MULTI_VALUED_PREFIXES
from app.domain.layers.text import norm_name

LAYER_VERSION = "assertions/14"  # 2: moves, teams, tools, plans and cancellations, dating; Unicode names
# 3: dated claims (valid_from), questions are not claims, pronouns across turns, value keys of one name's
#    short and long forms, more change forms (leaving, moving plans, hobbies and clubs given up, switches)
# 4: elided answers and yes-answers, "here"/"there", "they", "we" of a couple or an organisation, subjects
#    shared across "and", lower-case names in chat, staying after all, what questions presuppose, `context`
# 5: changes and endings read through what the speaker said (assertion_anchored), a negation takes the
#    attribute its value is held by, one cross-claim step with the LLM (assertion_claims), a named pet is a
#    pet, "getting married" is engaged, retiring ends the job, titles in a work frame, dated ages
# 6: lexicons per attribute compiled into clause frames (assertion_lexicon: subject, auxiliaries, negation, the
#    mood of things to come; a value's head noun picks its attribute), services held with a provider, swaps
#    ("dropped A for B") and switches of the one tool kind held, fuller names for "she", pets of others
# 7: grammar read through (assertion_grammar: appositions, "'s" as has/is, "a firm called X", favourites said
#    first or as answers, the clause's subject for "a dog called X"), more kin and role nouns and "our <relation>",
#    verb families (assertion_forms: a place at a school, going to study, tools swapped, starting in any mood,
#    departments, likings denied, family visits, divorce/wedding), a claim named and ended in one sentence is ended
# 8: a word opening a sentence that only a name fits ("Margaux and I", "Jasper, who", "Eunice's grandson") is a
#    name; "an assistant, Kemi" names the speaker's assistant
# 9: the stated aliases it shares with the graph (aliases.stated_aliases): "I'm Matěj's mum", names with
#    particles ("Anouk de Vries, Teo's mum"), "my mate Jon"
# 10: names in every Latin alphabet ("Paweł", "Łukasz": text.UPPER / LOWER), an exclamation opening a turn is not whom
#    "he" stands for ("Lovely. He ..."), "Paweł, he teaches ..." is; a name ends at its sentence ("Brackwater & Co. My")
#    and is never cut short ("still in London till June"); "his wife Birte" (test_layers_stop40)
# 11: a sentence adverb opening a sentence is not whom "she" stands for ("Sadly she left us"); a value that is only a
#     time ("works at Christmas", "from 2 November") is no claim; an occupation in apposition with its own words and a
#     title ("our office manager, Funmi Adeyemi", "their events manager, Mr Oduya"); "lives on Barrow Lane"; "dev"
#     (test_layers_stop42_claims)
# 12: whom a name the span model reads is about: a person named just before it ("Radek from Sparkline"), a name beside
#     a role ("my manager Efua"), the one asked ("How's Leeds?"), the name "he"/"she" carries on from; "said yes" is
#     an engagement only after a proposal (test_layers_stop43_claims)
# 13: more occupations (drummer, curator, GP, ...) and acronym titles ("our CTO"), titles without their possessive
#     ("their conductor"), jobs with words before the noun ("a planning job at X"), "your address in X", "my nephew
#     Corin came down from X", "my mum's coming over from X", "Lucía from our sound team", "here in X", "hired X as
#     Y", saints' names, "seeing a physio", "the new flat in X" said of one's own, a colleague works where the
#     speaker does, "we're moving to X" is the named partner's move too, a visit is no move (test_layers_stop44_claims)
# 14: a title held in "our" firm works where the speaker works; a move said with where it starts (and where one lives
#     until then) or up or down the country; a home named by its owner; shifts worked somewhere; "head of X" kept
#     whole; a home bought or being bought is where one is moving; filler words before a title dropped
#     (test_assertions_stop49)


@dataclass(frozen=True)
class Assertion:
    id: str
    event_id: str
    entity: str  # display name: "Ana", "Ana's sister"
    attribute: str  # lives_in, works_at, job_title, favourite:book, opinion:hiking, ...
    value: str  # display value
    value_key: str  # what two values are compared by
    time: datetime
    surface: str  # the matched words
    negated: bool = False
    seq: int = 0
    superseded_by: str | None = None
    layer_version: str = LAYER_VERSION
    # the day the claim takes effect when its words name one ("I start on June 12", "we broke up on
    # Friday"); None: from the event's own day (`time`). See `effective_day`.
    valid_from: date | None = None

    @property
    def effective_day(self) -> date:
        """The first day the claim holds: the day it names, else the day it was said."""
        return self.valid_from or self.time.date()

    @property
    def entity_key(self) -> str:
        return norm_name(self.entity)

    @property
    def single_valued(self) -> bool:
        return not self.attribute.startswith(MULTI_VALUED_PREFIXES)
