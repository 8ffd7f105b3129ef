"""A tenant's (or a conversation's) language: setting it, what it switches off, and the layer
jobs' check (`skip`) that keeps English-only rule layers away from other languages.

The rules are the domain's (`app.domain.language`). Changing a language re-derives the stored
events' text-search configuration (`app.storage.language.reindex`); when a conversation crosses
between English and another language, its conversation-level rows are dropped and its layers
rebuilt (`forget_derived`), so nothing the English rules read into other words stays behind.
"""
from __future__ import annotations

from sqlalchemy import Connection

from app.domain import language as lang
from app.domain.layer_registry import LAYERS
from app.services.forget import forget_derived
from app.services.layer_job import Outcome
from app.storage import language as store
from app.storage import layer_runs, outbox


def set_language(conn: Connection, tenant_id: int, language: str | None,
                 conversation_id: str | None = None) -> dict:
    """Set the tenant's language (None: back to the default, English), or with `conversation_id`
    one conversation's (None: it follows the tenant's again). ValueError for a malformed tag.
    Returns what is now in force and the conversations re-indexed."""
    tag = lang.normalize(language) if language is not None else None
    if conversation_id is None:
        tag = tag or lang.DEFAULT_LANGUAGE
        store.set_tenant_language(conn, tenant_id, tag, lang.search_config(tag))
    else:
        store.set_conversation_language(conn, tenant_id, conversation_id, tag,
                                        lang.search_config(tag) if tag is not None else None)
    reindexed = store.reindex(conn, tenant_id, conversation_id)
    # the configuration changed exactly where the language crossed between English and not:
    # what the English rules wrote there (or did not) must be rebuilt
    forget_derived(conn, tenant_id, reindexed)
    effective = store.effective_language(conn, tenant_id, conversation_id)
    return {"language": effective, "text_search": lang.search_config(effective),
            "conversation_id": conversation_id, "rebuilt_conversations": reindexed}


def skip(conn: Connection, layer: str, tenant_id: int, conversation_id: str, version: str,
         pending: list[int], force: bool = False) -> Outcome | None:
    """For a layer job about to run: when `layer` is English-only and the conversation is not in
    English, record the run as skipped (with the reason), mark its outbox rows done and return the
    outcome; None when the layer runs."""
    if layer not in lang.ENGLISH_ONLY_LAYERS:
        return None
    tag = store.effective_language(conn, tenant_id, conversation_id)
    reason = lang.skip_reason(tag, layer)
    if reason is None:
        return None
    stats = {"skipped": reason, "language": tag}
    layer_runs.record_run(conn, tenant_id, conversation_id, layer, version, 0, 0.0, stats)
    if force:
        outbox.mark_conversation_done(conn, layer, tenant_id, conversation_id)
    else:
        outbox.mark_done(conn, layer, pending)
    return Outcome("done", 0, len(pending), 0.0, stats)


def status(conn: Connection, tenant_id: int) -> dict:
    """What /v1/status says about language: the tenant's, the conversations with their own, and
    per layer whether it runs for the tenant's language (and why not)."""
    tag = store.tenant_language(conn, tenant_id)
    own = store.conversation_languages(conn, tenant_id)
    return {
        "language": tag,
        "text_search": lang.search_config(tag),
        "english_rules": lang.is_english(tag),
        "layers": lang.layer_states(tag, list(LAYERS)),
        "conversations": {c: {"language": t, "text_search": lang.search_config(t),
                              "skipped_layers": sorted(x for x in lang.ENGLISH_ONLY_LAYERS if lang.skip_reason(t, x))}
                          for c, t in own.items()},
    }
