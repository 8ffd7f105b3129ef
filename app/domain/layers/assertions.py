"""Rule-based (entity, attribute, value) assertions: the claims that knowledge-update questions ask about.

"I live in Boston" -> (speaker, lives_in, Boston); "we moved to Denver" -> (speaker, lives_in, Denver);
"my sister works at Google" -> (speaker's sister, works_at, Google). The patterns are general English
first-person and named-subject forms (residence, employer, occupation, study, family size, age,
relationship status, pets, names, favourites, likes and dislikes), not fitted to one data set. An
attribute is single-valued (a new value supersedes the old one: that is what makes a contradiction)
unless it is listed in MULTI_VALUED (a second pet is not a contradiction of the first).

Used by consolidation (timeline, contradictions), surprise (update-verb contradictions) and the
memory graph (evolution edges).
"""
from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Iterable, Sequence

from app.domain.layers.assertion_rules import (  # noqa: F401  (re-exported: callers read the vocabulary here)
    MULTI_VALUED_PREFIXES,
    PETS,
    RELATION_NOUNS,
    RULES,
    SUBJECT,
)
from app.domain.layers.assertion_anchored import anchored_claims, colleague_claims
from app.domain.layers.assertion_claims import CrossClaims
from app.domain.layers.assertion_context import (SAID_WITH_WE, answered_no, as_organisation, elided_reply, last_place,
                                                 resolve_here, same_name, with_partner)
from app.domain.layers.assertion_dates import SENTENCE_END, stated_day
from app.domain.layers.assertion_derived import implied_and_known, relation_antecedent, settle_found
from app.domain.layers.assertion_entities import EntityNames
from app.domain.layers.assertion_grammar import clause_subject
from app.domain.layers.assertion_kinds import read_kind
from app.domain.layers.assertion_forms import FORM_RULES, favourite_answer, provider_claims
from app.domain.layers.assertion_lexicon import LEXICON_RULES
from app.domain.layers.assertion_values import tidy_title
from app.domain.layers.assertion_text import (CO_SUBJECT, PLACE_PREP, antecedent, clean_value, expand, in_question, names_a_time,
                                              negative_answer, plural_antecedent, vocative)
from app.domain.layers.events import LayerEvent
from app.domain.layers.rule_scan import RuleScanner
from app.domain.layers.timeparse import resolve_time_expressions
from app.domain.layers.text import CALENDAR_WORDS, NOT_NAMES, STOPWORDS, UPPER, norm_name

from app.domain.layers.assertion_model import LAYER_VERSION, Assertion  # noqa: F401  (re-exported)
from app.domain.layers.assertion_spans import SpanModel, learned_claims


ALL_RULES = [*RULES, *LEXICON_RULES, *FORM_RULES]  # the rule table's specific forms first, then the clause frames
_SCAN = RuleScanner([rx for _, rx, _ in ALL_RULES], leads=(SUBJECT,))  # a text's matches, once
_CONDITION = re.compile(r"(?i)\b(?:if|when|whenever|unless|whether|once|in case)\s+$")
_UNNAMED = {"plan": "planned", "works_at": "job", "moving_to": "move"}  # the value of a retraction that names nothing
_NOUN_PHRASE = re.compile(r"(?i)(?:my|our|his|her|their)\s+[\w\- ]+")
_ORG_ROLE = re.compile(r"(?:university|uni|college|employer|company|firm|gym|choir|band|church)$")
_YOU_NEAR = re.compile(r"(?i)\byou(?:['’](?:re|ve|d|ll))?\b|\byour\b|\bglad\b|\bhope\b|\bcongrat")
_GONE = re.compile(r"[^.!?]{0,40}?\b(?:died|passed\s+away|was\s+put\s+(?:down|to\s+sleep)|had\s+to\s+be\s+put\s+down|is\s+gone)\b")
_NEG_VERBS = ("hate", "dislike", "cannot stand", "do not like", "no longer like", "do not enjoy")


def _entity_for(subj: str, speaker: str, addressee: str | None = None) -> str | None:
    s = subj.strip()
    low = s.lower()
    if low in ("i", "we", "my", "our", "as", "a", "an"):
        return speaker or "speaker"
    if low == "you" or low.startswith("your "):  # said to someone: theirs, when the rules know whom
        if not addressee:
            return None
        return addressee if low == "you" else f"{addressee}'s {low[5:]}"
    m = re.match(r"(?:my|our)\s+(.+)", s, re.I)
    if m:
        return f"{speaker}'s {m.group(1).lower()}"
    first, _, rest = s.partition(" ")
    if rest and (first.lower() in NOT_NAMES or first.lower() in CALENDAR_WORDS):  # "Then Okoro", "Monday Jon"
        s, low = rest, rest.lower()
    if low in NOT_NAMES or low in CALENDAR_WORDS or low in STOPWORDS:
        return None
    return s  # a named subject: "Jon works at ...", "Daniel Okoro works at ..."


def extract_assertions(event: LayerEvent, context: str = "", addressee: str | None = None) -> list[Assertion]:
    """Every assertion the rules find in one event, in text order. `context` is the text said just
    before (the previous turn): whom "he"/"she" stands for when the event itself names nobody.
    "You" is the event's recipient, else `addressee` ("you're on the Solo plan from today", said by
    support to the customer); unknown, or in a condition ("if you move to Leeds"), it is no claim.
    A claim inside a question ("Is Petra still in Leeds?") is not a claim."""
    return list(_memo(event, context, addressee))


# The same event is read by several layers (consolidation's timeline, surprise, engrams, the graph),
# most with the same arguments: the rules run once per (event, context, addressee) in a process.
@lru_cache(maxsize=4096)
def _memo(event: LayerEvent, context: str, addressee: str | None) -> tuple[Assertion, ...]:
    return tuple(_extract(event, context, addressee))


def _extract(event: LayerEvent, context: str, addressee: str | None) -> list[Assertion]:
    addressee = event.recipient or addressee
    text = expand(event.content)
    found: list[tuple[int, str, str, str, str, bool, int]] = []
    spans: list[tuple[int, int, str, str, bool]] = []  # (start, stop, attribute family, entity, negated)
    undated: set[tuple[int, str]] = set()
    matched = _SCAN.matches(text)
    for r, (attribute, rx, kind) in enumerate(ALL_RULES):
        for m in matched.get(r, ()):
            groups = m.groupdict()
            target, extra = attribute, []
            subj = groups.get("subj") or groups.get("subj2") or "I"
            if kind in ("plan_cancel", "place_negated", "plan_place", "tool_noun") and subj.lower() == "the":  # "the trip is off": the speaker's plan
                subj = "I"
            if subj.lower() in ("a", "an"):  # "they've got a dog called Rex": whoever the clause is about
                other = clause_subject(text, m.start())
                subj = other if other and other.split()[0].lower() not in NOT_NAMES | CALENDAR_WORDS | STOPWORDS \
                    or (other and other.lower() in ("he", "she", "they")) else subj
            if kind == "presupposed":  # taken for granted even when asked: "your new job at X" is the addressee's;
                # "the new flat in X" is theirs in a question or beside "you", else the speaker's ("from the new flat in X")
                mine = subj.lower() == "the" and not in_question(text, m.start(), m.end()) and not _YOU_NEAR.search(
                    text[max(0, m.start() - 60):m.end() + 30])
                subj = "I" if mine else "you" if subj.lower() in ("your", "the") else subj
            elif in_question(text, m.start(), m.end()):
                continue
            if kind != "pet_pronoun" and (subj.lower() in ("he", "she", "his", "her") or re.match(r"(?i)h(?:is|er)\s", subj)):  # "her sister": whose, as "she"
                entity = (antecedent(text, m.start())
                          or (relation_antecedent(text, m.start(), subj, event.speaker or "speaker") if " " not in subj else None)
                          or (antecedent(context, len(context)) if context else None))
                if entity and " " in subj:
                    entity = f"{entity}'s {subj.split(' ', 1)[1].lower()}"
            elif subj.lower() == "they":  # "My parents retired. They moved to Malaga": each one the group names
                group = plural_antecedent(text, m.start(), event.speaker) or plural_antecedent(context, len(context), event.speaker)
                entity = group[0] if group else None
                extra = group[1:]
            elif kind == "pet_pronoun":  # "I adopted a dog. Her name is Mochi."
                pets = re.findall(rf"\b({PETS})\b", text[: m.start()], re.I)
                if not pets:
                    continue
                groups = {**groups, "pet": pets[-1]}
                entity = _entity_for("my", event.speaker)
            else:
                if re.match(r"(?i)your?\b", subj) and _CONDITION.search(text[max(0, m.start() - 25):m.start()]):
                    continue
                entity = _entity_for(subj, event.speaker, addressee)
            if entity is None:
                continue
            if kind in ("opinion", "opinion_neg", "opinion_pos"):
                raw = groups.get("val") or groups.get("val2") or ""
                value = clean_value(re.sub(r"^to\s+", "", raw), "phrase")
                if value is None:
                    continue
                verb = (groups.get("verb") or "").lower()
                attr = f"opinion:{value.lower()}"
                if any(s0 <= m.start() < e0 and a0 == attr for s0, e0, a0, _, _ in spans):
                    continue
                liking = "dislikes" if verb in _NEG_VERBS or kind == "opinion_neg" else "likes"
                found.append((m.start(), entity, attr, liking, m.group(0), False, m.end()))
                spans.append((m.start(), m.end(), attr, entity, False))
                continue
            read = read_kind(kind, attribute, m, groups, text, context, event.speaker, entity)
            if read is None:
                continue
            target, value, what, negated, entity, groups = read.target, read.value, read.what, read.negated, read.entity, read.groups
            if read.undated:
                undated.add((m.start(), "relationship_status"))  # the wedding day is not when it starts
            if not value:
                continue
            attr = target.format(pet=(groups.get("pet") or "").lower(), what=what, val=value.lower(),
                                    pkind=groups.get("pkind") or "")
            # one attribute per span and entity: the first (most specific) rule wins; tools of different
            # kinds ("our React app deploys to Heroku") are different attributes
            base = attr if attr.startswith(("uses:", "plan:")) else attr.split(":")[0]
            # (an ending and a new value in one clause are two claims: "left Fenwick to join Quarry Labs")
            if any(s <= m.start() < e and b == base and en == entity and ng == negated for s, e, b, en, ng in spans) and not (
                    attr.startswith(MULTI_VALUED_PREFIXES) and not any(f[1] == entity and f[2] == attr and norm_name(f[3]) == norm_name(value)
                                                                       for f in found) and kind in ("proper", "common")):
                continue  # (a second name of a multi-valued attribute in one span is its own claim: "Salt and Pepper")
            # the same claim twice in one event ("we've been dating ... my boyfriend") is one claim
            if any(f[1] == entity and f[2] == attr and norm_name(f[3]) == norm_name(value) and f[5] == negated
                   for f in found):
                continue
            cut = SENTENCE_END.search(text, m.start(), m.end())  # "from Quayside. We ...": the claim ends there
            stop = cut.start() if cut else m.end()
            spans.append((m.start(), stop, base, entity, negated))
            found.append((m.start(), entity, attr, value, m.group(0), negated, stop))
            found += [(m.start(), other, attr, value, m.group(0), negated, stop) for other in extra]
            if kind == "invited":  # "come stay with me in Leeds next weekend": the date is the visit's
                undated.add((m.start(), attr))
            if kind == "stay":  # "Leah decided to stay in Denver after all": the move she planned is off
                found.append((m.start(), entity, "moving_to", "move", m.group(0), True, stop))
            before = text[max(0, m.start() - 30):m.start()]
            co = CO_SUBJECT.search(before) if subj == "I" or (subj[:1].isupper() and entity == subj) else None
            if (co and co.group(1).lower() not in NOT_NAMES and not PLACE_PREP.search(before[:co.start()])
                    and not re.search(rf"[{UPPER}][\w'’&\.\-]*\s+$", before[:co.start()])):  # "Harbourline Insurance and I": a name's last word
                # "Priyanka and I are moving to Denver"; not "I live in Boston and I work at ..."
                found.append((m.start(), co.group(1), attr, value, m.group(0), negated, m.end()))
            elif addressee and entity != addressee and re.search(r"(?i)\byou\s+and\s+$", text[max(0, m.start() - 9):m.start()]):
                found.append((m.start(), addressee, attr, value, m.group(0), negated, m.end()))  # "you and Priyanka got engaged"
    found += favourite_answer(text, context, event.speaker or "speaker", found)  # "favourite band?" - "mine's Elbow"
    found = provider_claims(text, context, event.speaker or "speaker", found)  # "we're with Skyline Fibre" (broadband)
    if any(f[2] == "relationship_status" and f[3] == "single" for f in found):
        found = [f for f in found if not (f[2] == "relationship_status" and f[3] != "single" and f[1] == event.speaker
                                          and re.match(r"(?i)my\b", f[4]))]
    found = settle_found(found, event.speaker or "speaker")
    # "our old dog Rufus died last year": a pet that is gone is no pet one has
    found = [f for f in found if not (f[2].startswith(("has_pet", "pet_name:")) and _GONE.match(text, f[6]))]
    found.sort(key=lambda f: f[0])
    out = []
    mentions = None
    for k, (start, entity, attr, value, surface, negated, end) in enumerate(found):
        if mentions is None and re.search(r"\d|(?i:day|week|month|year|night|ago|since|spring|summer|fall|autumn|winter|"
                                          r"january|february|march|april|may|june|july|august|september|october|"
                                          r"november|december)", text):
            mentions = resolve_time_expressions(text, event.occurred_at)
        out.append(
            Assertion(
                id=f"{event.id}#{k}",
                event_id=event.id,
                entity=entity,
                attribute=attr,
                value=value,
                # a cancellation naming no plan ("we called off the trip") or a job lost without its name
                # ("I got laid off") retracts whatever stands
                value_key="" if negated and _UNNAMED.get(attr.split(":")[0]) == value else norm_name(value),
                time=event.occurred_at,
                surface=surface,
                negated=negated,
                seq=event.seq,
                # a claim implied by a noun phrase ("my partner and I hiked on Sunday") names no day of its own
                valid_from=(stated_day(text, start, end, event.occurred_at, attr, mentions)
                            if mentions and not _NOUN_PHRASE.fullmatch(surface) and (start, attr) not in undated else None),
            )
        )
    return out


def extract_all(events: Iterable[LayerEvent], context: Sequence[LayerEvent] = (),
                spans: SpanModel | None = None) -> list[Assertion]:
    """Every event's assertions, in the events' order. A cancellation that does not name what it
    cancels ("we called off the trip") takes the plan it ends: the latest plan of that kind, the
    speaker's own first, so the timeline can mark that plan as ended. A named value said again in a
    shorter or longer form ("I left Tallow" after "I joined Tallow Studio") takes the value key it was
    first given, so a restatement or a negation meets the claim it is about; so does the entity
    (`assertion_entities.EntityNames`: "my sister" after "my sister Leah" is Leah). "He"/"she" with
    nobody named in the event stands for the last person named in the turn before; so does a short
    reply (`assertion_context.elided_reply`) and "here"/"there". `context`: earlier events of the
    conversation when `events` is a slice of it: read for that state, not returned. `spans`: the learned
    reader of names (`assertion_spans`), whose claims join the rules' where the rules found none."""
    events = list(events)
    wanted = {e.id for e in events} if context else None
    events = [*context, *events]
    out: list[Assertion] = []
    cross = CrossClaims()
    previous: dict[str, tuple[str, str]] = {}  # conversation -> (speaker, text) of its previous event
    said: dict[tuple[str, str], list[Assertion]] = {}  # (conversation, entity key) -> its claims so far
    names: dict[str, EntityNames] = {}
    partners: dict[tuple[str, str], str] = {}  # (conversation, entity key) -> whom they share a relationship with
    orgs: dict[tuple[str, str], str] = {}  # (conversation, speaker key) -> the organisation "we" stands for
    places: dict[str, str] = {}  # conversation -> the place its previous turn named last
    focus: dict[str, str] = {}  # conversation -> the person talked about last
    speakers: dict[str, set[str]] = {}  # conversation -> its speakers' name keys
    shown: dict[str, dict[str, str]] = {}  # conversation -> speaker key -> the name as first written
    for e in events:
        speakers.setdefault(e.conversation_id, set()).add(norm_name(e.speaker))
        shown.setdefault(e.conversation_id, {}).setdefault(norm_name(e.speaker), e.speaker)
    for e in events:
        asker, context = previous.get(e.conversation_id, ("", ""))
        # whom "you" means: the name the turn opens with ("Sam, ..."), else the one who spoke before
        called = vocative(e.content)
        if called and norm_name(called) not in speakers[e.conversation_id]:
            called = None  # "Done, you're all set": not a name of anyone here
        # with two speakers only, "you" is the other one, even in the first turn ("How was your first week at X?")
        pair = [n for k, n in shown[e.conversation_id].items() if k != norm_name(e.speaker)]
        addressee = called or (asker if asker and asker != e.speaker else None) or (pair[0] if len(pair) == 1 else None)
        previous[e.conversation_id] = (e.speaker, e.content)
        known = names.setdefault(e.conversation_id, EntityNames())
        known.read(e.content, e.speaker, e.recipient)
        people = speakers[e.conversation_id] | {norm_name(n) for n in known.names}
        persons = speakers[e.conversation_id] | {norm_name(n) for f, n in known.aliases.items() if not _ORG_ROLE.search(f)}
        here = resolve_here(e.content, places.get(e.conversation_id), people)
        places[e.conversation_id] = last_place(e.content, people) or ""  # "there" reaches back one turn
        # "she" two turns on from the name: the person last talked about (the focus) stands before the turn before
        # (set off by ";": a name alone before "." opens a turn as an exclamation does, "Lovely. He ...")
        told = f"{focus[e.conversation_id]}; {context}" if focus.get(e.conversation_id) else context
        found = extract_assertions(e if here == e.content else replace(e, content=here), told, addressee)
        if context and asker != e.speaker and (reply := elided_reply(context, e.content)):
            for a in extract_assertions(replace(e, content=reply, recipient=None), "", None):
                if not any(f.entity == a.entity and f.attribute == a.attribute and f.negated == a.negated
                           and (f.value_key == a.value_key or same_name(f.value_key, a.value_key)) for f in found):
                    found.append(replace(a, id=f"{e.id}#{len(found)}", surface=e.content[:60]))
        found = known.named(found, persons)
        if spans is not None:
            found += known.named(learned_claims(e, found, spans, speakers[e.conversation_id], len(found), addressee), persons)
        found += with_partner(found, partners, e.conversation_id, len(found), known.aliases)
        found = as_organisation(found, orgs, said, e.conversation_id, e.speaker, speakers[e.conversation_id])
        speaker_said = said.get((e.conversation_id, norm_name(e.speaker)), [])
        if context and asker != e.speaker and negative_answer(context, e.content):
            found += answered_no(e, context, found, speaker_said)
        # a change or an ending of what the speaker said before ("from chemistry to physics", "I cancelled X")
        found += anchored_claims(e, found, speaker_said, lambda name, c=e.conversation_id: said.get((c, norm_name(name)), []))
        found += colleague_claims(e, found, speaker_said)  # "my colleague Jo"
        # the person talked about next: not a claim said with "we" (the partner's copy is not who the talk is about)
        focus[e.conversation_id] = next((a.entity for a in reversed(found) if "'" not in a.entity and " " not in a.entity
                                         and norm_name(a.entity) not in speakers[e.conversation_id] and not SAID_WITH_WE.match(a.surface)),
                                        focus.get(e.conversation_id, ""))
        for a in found:
            if a.attribute == "job_title" and (tidy := tidy_title(a.value)) != a.value:
                a = replace(a, value=tidy, value_key=norm_name(tidy))  # "our other hygienist": a hygienist
            if implied_and_known(a.entity_key, a.attribute, a.value, a.surface, said.get((e.conversation_id, a.entity_key), [])) \
                    or names_a_time(a.value):
                continue  # "my partner" after "we're engaged" restates nothing new; "works at Christmas" names no place
            settled = cross.settle(a, out, e.conversation_id)  # value keys, what a bare retraction ends
            if settled is None:
                continue
            out.append(settled)
            if not settled.negated:
                said.setdefault((e.conversation_id, settled.entity_key), []).append(settled)
    return out if wanted is None else [a for a in out if a.event_id in wanted]
