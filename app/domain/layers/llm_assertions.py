"""Timeline assertions with an LLM (any `app.ports.LLM`; in production the one HTTP client).

The same `Assertion`s as the rules (`app.domain.layers.assertions`): (entity, attribute, value,
negated) per event, entity keys built as the rules build them (the speaker's name for "I" / "we",
"<speaker>'s sister" for "my sister"), the labelled set's attribute vocabulary, and so the same
timeline, supersessions and contradictions (`consolidation.build_timeline`).

One chat-completions request (JSON mode, temperature 0) per batch of up to `max_events` events,
with up to `context_events` earlier events shown as read-only context (the caller's `context` for the
first batch: a build over a slice of new events passes the conversation's events before it). The model
answers `{"assertions": [...]}` (SYSTEM_PROMPT); every item is validated on its own and dropped,
counted by reason, when it names an event outside the batch, an attribute outside the vocabulary,
an entity that is neither the speaker, the speaker's relation nor a name in the messages shown, or a
value whose words are not in that event's words (a retraction may name a value from the messages
shown: "we called off the trip" after "we're going to Lisbon"). A batch whose answer is unusable (an
`LLMError`, no JSON object, not the schema) takes the rules' assertions for its events, counted in
`stats["fallback_batches"]` with the reason, as the graph's `LLMExtractor` does with a chunk: one bad
answer never empties a conversation's timeline, and the fallback is reported, never hidden (the
benchmark prints it, and stops on a failed call). Deterministic for the same events and answers.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.domain.layers import assertions as rules
from app.domain.layers.assertion_claims import settle_all
from app.domain.layers.assertion_dates import stated_day
from app.domain.layers.assertions import RELATION_NOUNS, Assertion
from app.domain.layers.events import LayerEvent
from app.domain.layers.text import NUMBER_WORDS, answer_json_text, fold, norm_name, words
from app.domain.layers.timeparse import TimeMention, resolve_time_expressions
from app.ports import LLM, LLMError

LAYER_VERSION = "llm_assertions/2"  # 2: dated claims (valid_from), the rules' cross-claim step

PLAIN_ATTRIBUTES = frozenset(
    "lives_in from moving_to works_at job_title works_in studies school relationship_status age children_count "
    "has_pet member_of hobby name".split())
PREFIXED_ATTRIBUTES = ("pet_name", "opinion", "favourite", "plan", "uses")
STATUSES = frozenset({"single", "in a relationship", "engaged", "married", "divorced", "widowed", "separated"})
_SELF = frozenset({"i", "me", "we", "us", "myself", "speaker", "the speaker", "user", "the user"})
_REL_RE = re.compile(rf"(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})", re.I)
_SUFFIX_RE = re.compile(r"[a-z0-9][a-z0-9 ._+\-]{0,39}")

SYSTEM_PROMPT = """You record what a memory system must track about people over time: where they live,
where and as what they work, their relationships, pets, plans, tastes and tools, and when these change.
Answer with one JSON object and nothing else. Its shape:
{"assertions": [{"event_id": str, "entity": str, "attribute": str, "value": str, "negated": bool}]}
Attributes (use only these; <x> is one or two lowercase words):
  lives_in, from, moving_to (a place); works_at (an organisation); job_title (an occupation, "nurse");
  works_in (a department or team); studies (a subject); school (a school); relationship_status
  (single | in a relationship | engaged | married | divorced); age, children_count (a number in digits);
  has_pet (a kind of animal); pet_name:<kind> (a name; pet_name:dog); member_of (a group); hobby (an
  activity); name; favourite:<what> (a thing; favourite:book); opinion:<thing> (likes | dislikes;
  opinion:hiking); plan:<kind> (where or what, "planned" if neither; plan:trip, plan:party);
  uses:<what> (a product or tool; uses:database, uses:phone).
Rules:
- One item per claim a message states or restates about someone. Only from the messages under
  "Messages"; "Earlier messages" are context. event_id is the id in square brackets of that message.
- entity: the speaker's name for "I" / "we"; "<speaker>'s <relation>" for "my sister" said by the
  speaker ("Ana's sister"); otherwise the person's name as written. Never a pronoun.
- value: the words of the message that name it ("Denver", "Harbor Bank", "software engineer").
- negated: true when the message says it stopped or is not so ("I quit Harbor Bank", "the trip is off").
- A change is simply a new item with the new value ("we moved to Denver" -> lives_in Denver).
- Skip greetings, questions, hypotheticals and other people's guesses. Invent nothing."""


class LLMAssertion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    event_id: str
    entity: str = Field(min_length=1, max_length=120)
    attribute: str = Field(min_length=1, max_length=80)
    value: str = Field(min_length=1, max_length=200)
    negated: bool = False

    @field_validator("event_id", "value", mode="before")
    @classmethod
    def _text(cls, v: object) -> str:
        return str(v)


class LLMAssertions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    assertions: list[dict]  # each item validated on its own: one bad item drops only itself


@dataclass
class AssertionExtraction:
    assertions: list[Assertion]
    stats: dict = field(default_factory=dict)


def _line(e: LayerEvent) -> str:
    return f"[{e.id}] ({e.occurred_at.strftime('%Y-%m-%d %H:%M')}) {e.speaker or 'unknown'}: {e.content}"


def build_prompt(events: Sequence[LayerEvent], context: Sequence[LayerEvent] = ()) -> str:
    parts = []
    if context:
        parts += ["Earlier messages (context only):", *map(_line, context), ""]
    parts += ["Messages:", *map(_line, events), "", "Return the JSON object now."]
    return "\n".join(parts)


def parse_completion(content: str) -> LLMAssertions:
    """The answer's JSON object; raises ValueError / ValidationError when there is none of the schema."""
    return LLMAssertions.model_validate(json.loads(answer_json_text(content)))


def _tokens(text: str) -> list[str]:
    return [re.sub(r"['’]s$", "", fold(w)) for w in words(text)]


def _grounded(value: str, tokens: Sequence[str]) -> bool:
    """Every word of `value` is a word of the text (a plural or possessive of it counts: "dog" in "dogs")."""
    vs = _tokens(value)
    have = set(tokens)
    return bool(vs) and all(v in have or any(t.startswith(v) and len(t) - len(v) <= 2 for t in tokens) for v in vs)


def _surface(value: str, text: str) -> str:
    """The value as the message writes it, when it is there word for word ("denver" -> "Denver")."""
    m = re.search(r"(?<!\w)" + r"\W+".join(map(re.escape, value.split())) + r"(?!\w)", text, re.I)
    return m.group(0) if m else value.strip()


# plan kinds as the rules name them (`assertions`: a vacation is a trip)
_PLAN_KINDS = {"vacation": "trip", "holiday": "trip", "getaway": "trip", "road trip": "trip", "camping trip": "trip",
               "visit": "trip", "cruise": "trip", "honeymoon": "trip", "bbq": "barbecue", "birthday party": "party",
               "surprise party": "party"}


def attribute_of(raw: str) -> str | None:
    """The attribute in the vocabulary's spelling, or None when it is not one of the vocabulary."""
    a = re.sub(r"\s*:\s*", ":", re.sub(r"\s+", " ", raw.strip().lower())).replace("favorite:", "favourite:")
    if a in PLAIN_ATTRIBUTES:
        return a
    head, _, tail = a.partition(":")
    if head in PREFIXED_ATTRIBUTES and _SUFFIX_RE.fullmatch(tail):
        return f"plan:{_PLAN_KINDS.get(tail, tail)}" if head == "plan" else a
    return None


class LLMAssertionExtractor:
    name = "llm"

    def __init__(self, llm: LLM, max_events: int = 20, context_events: int = 6):
        self.llm = llm
        self.max_events = max_events
        self.context_events = context_events

    def complete(self, batch: Sequence[LayerEvent], context: Sequence[LayerEvent]) -> str:
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": build_prompt(batch, context)}]
        return self.llm.chat(messages, json_mode=True)

    def extract(self, events: Iterable[LayerEvent], context: Sequence[LayerEvent] = ()) -> AssertionExtraction:
        evs = list(events)
        conversation = {e.id: e.conversation_id for e in [*context, *evs]}
        earlier = list(context)[-self.context_events:] if self.context_events else []
        stats: dict = {"batches": 0, "llm_batches": 0, "fallback_batches": 0, "fallback_reasons": {}, "items": 0,
                       "kept": 0, "dropped": {}}
        out: list[Assertion] = []
        for k in range(0, len(evs), self.max_events):
            batch = evs[k : k + self.max_events]
            stats["batches"] += 1
            try:
                parsed = parse_completion(self.complete(batch, earlier))
                out += self._assertions(parsed, batch, earlier, stats)
                stats["llm_batches"] += 1
            except (LLMError, ValidationError, ValueError) as exc:
                why = exc.kind if isinstance(exc, LLMError) else type(exc).__name__
                stats["fallback_reasons"][why] = stats["fallback_reasons"].get(why, 0) + 1
                stats["fallback_batches"] += 1
                ids = {e.id for e in batch}  # the rules read the batch after the same earlier messages
                out += [a for a in rules.extract_all([*earlier, *batch]) if a.event_id in ids]
            earlier = (earlier + batch)[-self.context_events:] if self.context_events else []
        return AssertionExtraction(settle_all(out, lambda a: conversation.get(a.event_id, "")), stats)

    def _assertions(self, parsed: LLMAssertions, batch: Sequence[LayerEvent], context: Sequence[LayerEvent],
                    stats: dict) -> list[Assertion]:
        by_id = {e.id: e for e in batch}
        shown = [*context, *batch]
        shown_tokens = [t for e in shown for t in _tokens(e.content)]
        speakers = {fold(e.speaker): e.speaker for e in shown if e.speaker}
        found: dict[str, list[tuple[int, int, Assertion]]] = {}
        mentions: dict[str, list[TimeMention]] = {}  # event id -> its resolved time expressions, read once

        def drop(why: str) -> None:
            stats["dropped"][why] = stats["dropped"].get(why, 0) + 1

        for n, raw in enumerate(parsed.assertions):
            stats["items"] += 1
            try:
                item = LLMAssertion.model_validate(raw)
            except ValidationError:
                drop("schema")
                continue
            ev = by_id.get(item.event_id)
            if ev is None:
                drop("unknown_event")
                continue
            attr = attribute_of(item.attribute)
            if attr is None:
                drop("unknown_attribute")
                continue
            entity = self._entity(item.entity, ev, speakers, shown_tokens)
            if entity is None:
                drop("bad_entity")
                continue
            value = _value(attr, item.value.strip(), item.negated, ev, shown_tokens)
            if value is None:
                drop("ungrounded_value")
                continue
            pos = fold(ev.content).find(fold(value)) if value else -1
            a = Assertion(id="", event_id=ev.id, entity=entity, attribute=attr, value=value,
                          value_key="" if item.negated and attr.startswith("plan:") and value == "planned"
                          else norm_name(value),
                          time=ev.occurred_at, surface=value, negated=item.negated, seq=ev.seq,
                          layer_version=LAYER_VERSION,
                          valid_from=self._stated_day(ev, attr, pos, len(value), mentions))
            same = found.setdefault(ev.id, [])
            if any((b.entity_key, b.attribute, b.value_key, b.negated) == (a.entity_key, a.attribute, a.value_key, a.negated)
                   for _, _, b in same):
                drop("duplicate")
                continue
            same.append((pos if pos >= 0 else len(ev.content), n, a))
            stats["kept"] += 1
        out = []
        for e in batch:  # the events' order; in an event, text order, then the answer's
            for k, (_, _, a) in enumerate(sorted(found.get(e.id, []), key=lambda t: (t[0], t[1]))):
                out.append(replace(a, id=f"{e.id}#{k}"))
        return out

    @staticmethod
    def _stated_day(ev: LayerEvent, attr: str, pos: int, length: int,
                    mentions: dict[str, list[TimeMention]]) -> date | None:
        """The day the claim takes effect when the message names it, read as the rules read it
        (`assertion_dates.stated_day` on the value's words in the message): "I start at the clinic on May 6"
        holds from May 6. None (the message's own day) when the value is not in the message's words."""
        if pos < 0:
            return None
        if ev.id not in mentions:
            mentions[ev.id] = resolve_time_expressions(ev.content, ev.occurred_at)
        return stated_day(ev.content, pos, pos + length, ev.occurred_at, attr, mentions[ev.id])

    @staticmethod
    def _entity(raw: str, ev: LayerEvent, speakers: dict[str, str], shown_tokens: Sequence[str]) -> str | None:
        s = re.sub(r"\s+", " ", raw.strip())
        low = fold(s)
        speaker = ev.speaker or "speaker"
        if low in _SELF or low == fold(speaker):
            return speaker
        m = re.fullmatch(r"(?:my|our)\s+(.+)", s, re.I) or re.fullmatch(rf"{re.escape(speaker)}['’]s\s+(.+)", s, re.I)
        if m:
            return f"{speaker}'s {m.group(1).lower()}" if _REL_RE.fullmatch(m.group(1)) else None
        m = re.fullmatch(r"(.+?)['’]s\s+(.+)", s)
        if m:  # "Ben's sister": Ben must be someone the messages name
            owner = LLMAssertionExtractor._entity(m.group(1), ev, speakers, shown_tokens)
            return f"{owner}'s {m.group(2).lower()}" if owner and _REL_RE.fullmatch(m.group(2)) else None
        if low in speakers:
            return speakers[low]
        if not s[:1].isupper() or low in ("he", "she", "they", "him", "her", "them"):
            return None  # a pronoun or a common noun is no one the timeline can key
        return s if _grounded(s, shown_tokens) else None


def _value(attr: str, value: str, negated: bool, ev: LayerEvent, shown_tokens: Sequence[str]) -> str | None:
    """The value to store, or None when it is not one the attribute takes or not in the message's words."""
    tokens = _tokens(ev.content)
    low = fold(value)
    if attr == "relationship_status":
        return low if low in STATUSES else None
    if attr in ("age", "children_count"):
        n = int(low) if low.isdigit() else NUMBER_WORDS.get(low)
        if n is None:
            return None
        return str(n) if str(n) in tokens or any(NUMBER_WORDS.get(t) == n for t in tokens) else None
    if attr.startswith("opinion:"):
        thing = attr.partition(":")[2]
        return low if low in ("likes", "dislikes") and _grounded(thing, tokens) else None
    if attr.startswith("plan:") and low == "planned":
        return "planned"
    if _grounded(value, tokens) or (negated and _grounded(value, shown_tokens)):
        return _surface(value, ev.content)
    return None
