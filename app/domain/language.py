"""What a tenant's (or a conversation's) language changes, and what it does not.

A language is a BCP 47 tag (`en`, `de`, `pt-BR` ...). English (`en`, `en-*`) keeps the product's
full behaviour: the `english` text-search configuration (stemming, stop words) and every rule
layer. Any other language gets what works without knowing the language, and says what it leaves out:

- full-text search uses PostgreSQL's `simple` configuration: words lower-cased, accents and other
  letters kept exactly, no stemming and no stop words (`Straße` finds `straße`, not `Straßen`);
- the rule layers written for English (facts and their surprise, speaker profiles, entities and
  time expressions) are skipped, with the reason recorded in the layer's run, instead of filling
  the memory with English patterns read into other words;
- what needs no language keeps running: the verbatim log, the embeddings (dense search), and
  consolidation's episodes (time gaps and topic shifts over the vectors; extractive summaries that
  quote the events verbatim).

Pure: no SQL here. Storage keeps the tag and the configuration it maps to (`search_config`).
"""
from __future__ import annotations

import re

DEFAULT_LANGUAGE = "en"
ENGLISH_CONFIG = "english"
OTHER_CONFIG = "simple"

# A BCP 47 language tag, loosely: a 2-3 letter language, then optional subtags (script, region ...).
TAG_PATTERN = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
_TAG = re.compile(TAG_PATTERN)

# The layers whose rules read English words, and why they are skipped for any other language.
ENGLISH_ONLY_LAYERS: dict[str, str] = {
    "surprise": "its facts come from English sentence patterns (\"I moved to ...\"); other languages would "
                "yield no facts or wrong ones",
    "engrams": "speaker profiles (topics, relationships, standing attributes) are English word rules",
    "graph": "entities, aliases and time expressions (\"last Saturday\") are recognised by English rules",
}


def normalize(tag: str) -> str:
    """The tag in its usual case (`pt-br` -> `pt-BR`); ValueError when it is not a language tag."""
    tag = tag.strip()
    if not _TAG.match(tag):
        raise ValueError(f"{tag!r} is not a language tag (BCP 47, e.g. 'en', 'de', 'pt-BR')")
    head, *rest = tag.split("-")
    parts = [head.lower()]
    for sub in rest:
        parts.append(sub.upper() if len(sub) == 2 else sub.title() if len(sub) == 4 else sub.lower())
    return "-".join(parts)


def is_english(tag: str | None) -> bool:
    return tag is None or tag.split("-")[0].lower() == "en"


def search_config(tag: str | None) -> str:
    """The PostgreSQL text-search configuration for events in this language."""
    return ENGLISH_CONFIG if is_english(tag) else OTHER_CONFIG


def skip_reason(tag: str | None, layer: str) -> str | None:
    """Why `layer` does not run for a conversation in this language; None when it runs."""
    if is_english(tag) or layer not in ENGLISH_ONLY_LAYERS:
        return None
    return f"skipped for language {tag!r}: {ENGLISH_ONLY_LAYERS[layer]}"


def layer_states(tag: str | None, layers: list[str] | tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Per layer: {"state": "on"} or {"state": "skipped", "reason": ...} (what /v1/status shows)."""
    out: dict[str, dict[str, str]] = {}
    for layer in layers:
        reason = skip_reason(tag, layer)
        out[layer] = {"state": "on"} if reason is None else {"state": "skipped", "reason": reason}
    return out
