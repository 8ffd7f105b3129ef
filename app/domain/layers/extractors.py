"""Which extractors a build uses: the LLM ones when an LLM is configured, else the rules, for the
memory graph (`choose_extractor`) and for the timeline's assertions (`extract_assertions`).

Kept apart from both extractors so neither imports the other's module for the choice
(`llm_extract` builds on `graph_extract`'s rules, never the other way round).
"""
from __future__ import annotations

from typing import Iterable, Sequence

from app.domain.layers import assertions as assertion_rules
from app.domain.layers import graph_extract, llm_assertions, llm_extract
from app.domain.layers.assertion_spans import SpanModel
from app.domain.layers.assertions import Assertion
from app.domain.layers.events import LayerEvent
from app.domain.layers.graph_extract import Encode, Extractor, RuleExtractor
from app.domain.layers.llm_assertions import AssertionExtraction, LLMAssertionExtractor
from app.domain.layers.llm_extract import LLMExtractor
from app.ports import LLM


def choose_extractor(encode: Encode | None = None, llm: LLM | None = None) -> Extractor:
    """`LLMExtractor` over `llm` when one is given (the graph build passes the configured one), else rules."""
    return LLMExtractor(llm, encode=encode) if llm is not None else RuleExtractor(encode)


def extractor_version(llm_configured: bool) -> str:
    """The version of the extractor `choose_extractor` picks, for the graph layer's version string."""
    return llm_extract.LAYER_VERSION if llm_configured else graph_extract.LAYER_VERSION


def assertion_extractor_version(llm_configured: bool, spans: SpanModel | None = None) -> str:
    """The version of the assertions `extract_assertions` makes, for the version strings of the layers
    built on them (consolidation's timeline, the graph's evolution edges). With an LLM it names the
    rules too: a batch whose answer is unusable takes the rules' assertions. Without one, the learned
    reader of names when it is used (`spans`)."""
    if llm_configured:
        return f"{llm_assertions.LAYER_VERSION}+{assertion_rules.LAYER_VERSION}"
    return assertion_rules.LAYER_VERSION + (f"+{spans.version}" if spans is not None else "")


def extract_assertion_set(events: Iterable[LayerEvent], llm: LLM | None = None,
                          context: Sequence[LayerEvent] = (), spans: SpanModel | None = None) -> AssertionExtraction:
    """`extract_assertions` with the extractor's counts (`stats`; empty for the rules): LLM batches,
    batches that fell back to the rules and why, items dropped by reason (llm_assertions)."""
    if llm is None:
        return AssertionExtraction(assertion_rules.extract_all(events, context, spans), {})
    return LLMAssertionExtractor(llm).extract(events, context)


def extract_assertions(events: Iterable[LayerEvent], llm: LLM | None = None,
                       context: Sequence[LayerEvent] = (), spans: SpanModel | None = None) -> list[Assertion]:
    """Every event's assertions, in the events' order: the one place the layers get assertions from
    (consolidation's timeline, the graph's evolution edges). The rules without an LLM; with one, the
    LLM's (`llm_assertions.LLMAssertionExtractor`: batches of events, each item validated, a batch
    with an unusable answer taking the rules'). `context`: the conversation's events before `events`,
    when `events` is a slice of it (a build over new events): the LLM sees the last few as read-only
    context; the rules read it for what carries across turns (the question a short reply answers, the
    place "there" names, the plan a cancellation ends, one name's forms) and return only `events`'
    assertions. Deterministic for the same events, context and answers. `spans`: without an LLM, the
    learned reader of names (`assertion_spans`) adds the claims the rules missed."""
    return extract_assertion_set(events, llm, context, spans).assertions
