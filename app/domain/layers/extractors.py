"""Which memory-graph extractor a build uses: the LLM one when an LLM is configured, else the rules.

Kept apart from both extractors so neither imports the other's module for the choice
(`llm_extract` builds on `graph_extract`'s rules, never the other way round).
"""
from __future__ import annotations

from app.domain.layers import graph_extract, llm_extract
from app.domain.layers.graph_extract import Encode, Extractor, RuleExtractor
from app.domain.layers.llm_extract import LLMExtractor
from app.ports import LLM


def choose_extractor(encode: Encode | None = None, llm: LLM | None = None) -> Extractor:
    """`LLMExtractor` over `llm` when one is given (the graph build passes the configured one), else rules."""
    return LLMExtractor(llm, encode=encode) if llm is not None else RuleExtractor(encode)


def extractor_version(llm_configured: bool) -> str:
    """The version of the extractor `choose_extractor` picks, for the graph layer's version string."""
    return llm_extract.LAYER_VERSION if llm_configured else graph_extract.LAYER_VERSION
