"""Memory-graph extraction with an LLM (any `app.ports.LLM`; in production the one HTTP client).

PRISM App. C.1 extracts each conversation chunk with one LLM call returning typed JSON validated by
a pydantic schema, and falls back to a simpler extractor when validation fails. Here a chunk is an
episode (split to at most `max_events` events); the model returns entities and atomic facts with
their event id, entities, time expression, ISO date, topic and in-chunk causes. Output that is not
valid JSON, fails the schema, cites events outside the chunk, or an `LLMError`, sends that chunk to
the rule-based extractor instead, so one bad answer never loses a chunk. The graph is assembled by
the same code as the rule path (`graph_model.assemble`), so both produce the same node and edge types.

The extractor is handed its LLM; it does no I/O of its own. Which extractor a build uses (this one
or the rules) is chosen in `app.domain.layers.extractors`.
"""
from __future__ import annotations

import json
import re
from datetime import date
from typing import Callable, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.domain.layers.assertions import Assertion
from app.domain.layers.consolidation import Episode, segment_episodes
from app.domain.layers.events import LayerEvent, in_time_order
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.graph_model import GraphFragment, RawFact, assemble
from app.domain.layers.timeparse import TimeMention, resolve_time_expressions
from app.domain.layers.text import answer_json_text
from app.domain.timeexpr import grain_span
from app.ports import LLM, LLMError

LAYER_VERSION = "llm_extract/3"  # 2: time mentions' ranges are half-open; 3: the rules it builds on (timeparse/3, graph_extract/4)

Encode = Callable[[list[str]], np.ndarray]
Kind = Literal["person", "place", "organization", "event", "animal", "thing"]


class LLMEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1, max_length=120)
    kind: Kind = "thing"

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, v: object) -> str:
        v = str(v or "thing").lower().strip()
        aliases = {"organisation": "organization", "org": "organization", "location": "place", "pet": "animal"}
        v = aliases.get(v, v)
        return v if v in {"person", "place", "organization", "event", "animal", "thing"} else "thing"


class LLMFact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    event_id: str
    text: str = Field(min_length=1, max_length=1000)
    entities: list[str] = Field(default_factory=list)
    time_expression: str | None = None
    date: str | None = None  # YYYY-MM-DD, YYYY-MM or YYYY
    topic: str = "general"
    caused_by: list[int] = Field(default_factory=list)

    @field_validator("event_id", mode="before")
    @classmethod
    def _id(cls, v: object) -> str:
        return str(v)

    @field_validator("date")
    @classmethod
    def _date(cls, v: str | None) -> str | None:
        if v in (None, "", "null"):
            return None
        if not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", v):
            raise ValueError("date must be YYYY, YYYY-MM or YYYY-MM-DD")
        return v


class LLMExtraction(BaseModel):
    model_config = ConfigDict(extra="ignore")
    entities: list[LLMEntity] = Field(default_factory=list)
    facts: list[LLMFact] = Field(min_length=1)


SYSTEM_PROMPT = """You turn a stretch of conversation into a small knowledge graph for a memory system.
Answer with one JSON object and nothing else. Its shape:
{"entities": [{"name": str, "kind": "person"|"place"|"organization"|"event"|"animal"|"thing"}],
 "facts": [{"event_id": str, "text": str, "entities": [str], "time_expression": str|null,
            "date": "YYYY-MM-DD"|"YYYY-MM"|"YYYY"|null, "topic": str, "caused_by": [int]}]}
Rules:
- A fact is one self-contained statement from one message, written in the third person with names
  instead of pronouns ("Ana moved to Denver", not "I moved there").
- event_id is the id in square brackets of the message the fact comes from; use only those ids.
- entities lists the names, exactly as in "entities", of the people, places, organisations, events,
  animals and notable things the fact involves. Include the speaker when the fact is about them.
- time_expression copies the words that say when it happened ("last Saturday"); date resolves them
  against the date of that message. Leave both null when the message says nothing about time.
- topic is one or two lowercase words (family, work, art, travel, health, ...).
- caused_by holds the positions (0-based, in this facts list) of earlier facts that caused this one.
- Skip greetings, thanks and small talk. Do not invent anything the messages do not say."""


def build_prompt(events: Sequence[LayerEvent]) -> str:
    lines = [
        f"[{e.id}] ({e.occurred_at.strftime('%Y-%m-%d %H:%M')}) {e.speaker or 'unknown'}: {e.content}"
        for e in events
    ]
    return "Conversation:\n" + "\n".join(lines) + "\n\nReturn the JSON object now."


def parse_completion(content: str) -> LLMExtraction:
    """Validate a model answer; raises ValueError / ValidationError when it is not usable."""
    return LLMExtraction.model_validate(json.loads(answer_json_text(content)))


def _mentions_for(fact: LLMFact, event: LayerEvent) -> list[TimeMention]:
    if fact.date:
        y, m, d = (fact.date.split("-") + [None, None])[:3]
        gran = "day" if d else "month" if m else "year"
        start, end = grain_span(date(int(y), int(m or 1), int(d or 1)), gran)
        surface = fact.time_expression or fact.date
        return [TimeMention(surface, -1, -1, "relative" if fact.time_expression else "absolute", True,
                            start.isoformat(), start.isoformat(), end.isoformat(), gran, fact.date)]  # type: ignore[arg-type]
    if fact.time_expression:
        found = resolve_time_expressions(fact.time_expression, event.occurred_at)
        if found:
            return found
    return resolve_time_expressions(fact.text, event.occurred_at)


class LLMExtractor:
    """Extractor over an LLM, with the rule-based extractor as its fallback."""

    name = "llm"

    def __init__(self, llm: LLM, encode: Encode | None = None, max_events: int = 40):
        self.llm = llm
        self.encode = encode
        self.max_events = max_events
        self.rules = RuleExtractor(encode)
        self.last_stats: dict[str, object] = {}

    def complete(self, events: Sequence[LayerEvent]) -> str:
        """The model's answer for one chunk (JSON mode); raises `LLMError`."""
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": build_prompt(events)}]
        return self.llm.chat(messages, json_mode=True)

    def _chunks(self, events: Sequence[LayerEvent], episodes: Sequence[Episode]) -> list[list[LayerEvent]]:
        by_id = {e.id: e for e in events}
        groups = [[by_id[i] for i in ep.event_ids if i in by_id] for ep in episodes]
        covered = {e.id for g in groups for e in g}
        groups.append([e for e in events if e.id not in covered])  # events no episode holds (yet)
        chunks = []
        for evs in groups:
            for k in range(0, len(evs), self.max_events):
                chunks.append(evs[k : k + self.max_events])
        return [c for c in chunks if c]

    def _facts_from(self, parsed: LLMExtraction, chunk: Sequence[LayerEvent]) -> list[RawFact]:
        by_id = {e.id: e for e in chunk}
        if any(f.event_id not in by_id for f in parsed.facts):
            raise ValueError("the answer cites events outside the chunk")
        kinds = {e.name.lower(): e.kind for e in parsed.entities}
        out = []
        for i, f in enumerate(parsed.facts):
            ev = by_id[f.event_id]
            ents = [(n, kinds.get(n.lower(), "thing")) for n in f.entities if n.strip()]
            causes = [c for c in f.caused_by if 0 <= c < i]
            out.append(RawFact(ev.id, f.text, ents, _mentions_for(f, ev), f.topic.lower() or "general", causes,
                               "llm" if causes else None))
        return out

    def extract(self, events: Sequence[LayerEvent], episodes: Sequence[Episode] | None = None,
                assertions: Sequence[Assertion] | None = None) -> GraphFragment:
        """The graph of `events`; `assertions` (from `extractors.extract_assertions`, the LLM's when the
        build has one) make its evolution edges, else the rules' assertions do."""
        evs = in_time_order(events)
        eps = list(episodes) if episodes is not None else segment_episodes(evs)
        common = self.rules.common_words(evs)
        known = self.rules.known_names(evs, common)
        facts: list[RawFact] = []
        stats = {"chunks": 0, "llm_chunks": 0, "fallback_chunks": 0, "fallback_reasons": {}}
        reasons: dict[str, int] = {}
        for chunk in self._chunks(evs, eps):
            stats["chunks"] += 1  # type: ignore[operator]
            try:
                chunk_facts = self._facts_from(parse_completion(self.complete(chunk)), chunk)
                stats["llm_chunks"] += 1  # type: ignore[operator]
            except (LLMError, ValidationError, ValueError) as exc:
                why = exc.kind if isinstance(exc, LLMError) else type(exc).__name__
                reasons[why] = reasons.get(why, 0) + 1
                chunk_facts = self.rules.facts(chunk, known, common=common)
                stats["fallback_chunks"] += 1  # type: ignore[operator]
            offset = len(facts)
            for f in chunk_facts:  # causes index the chunk's list; shift into the global list
                f.causes = [c + offset for c in f.causes]
            facts.extend(chunk_facts)
        stats["fallback_reasons"] = reasons
        self.last_stats = stats
        conv = evs[0].conversation_id if evs else ""
        frag = assemble(conv, evs, facts, eps, self.encode, extractor=self.name, assertions=assertions)
        frag.stats["llm"] = stats
        return frag
