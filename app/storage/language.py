"""Languages: the tenant's, a conversation's own, and the text-search configuration each event is
indexed with (migration 0008). The mapping from a language to a configuration is the domain's
(`app.domain.language`); here it is stored and applied.

New events take their configuration on insert (the `events_search_config` trigger reads the
conversation's setting, else the tenant's); `reindex` re-derives it for events already stored
after a setting changed (their generated `search_tsv` is recomputed by PostgreSQL).
"""
from __future__ import annotations

from sqlalchemy import Connection, cast, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.storage.models import ConversationSetting, Tenant


def tenant_language(conn: Connection, tenant_id: int) -> str:
    return conn.execute(select(Tenant.language).where(Tenant.id == tenant_id)).scalar() or "en"


def conversation_language(conn: Connection, tenant_id: int, conversation_id: str) -> str | None:
    """The conversation's own language, None when it follows its tenant's."""
    return conn.execute(select(ConversationSetting.language).where(
        ConversationSetting.tenant_id == tenant_id, ConversationSetting.conversation_id == conversation_id)).scalar()


def effective_language(conn: Connection, tenant_id: int, conversation_id: str | None) -> str:
    """The language a conversation is read in: its own, else its tenant's."""
    own = conversation_language(conn, tenant_id, conversation_id) if conversation_id is not None else None
    return own or tenant_language(conn, tenant_id)


def conversation_languages(conn: Connection, tenant_id: int, limit: int = 1000) -> dict[str, str]:
    """The conversations that have their own language (at most `limit`)."""
    rows = conn.execute(select(ConversationSetting.conversation_id, ConversationSetting.language)
                        .where(ConversationSetting.tenant_id == tenant_id)
                        .order_by(ConversationSetting.conversation_id).limit(limit))
    return {c: lang for c, lang in rows}


def set_tenant_language(conn: Connection, tenant_id: int, language: str, config: str) -> None:
    conn.execute(update(Tenant).where(Tenant.id == tenant_id)
                 .values(language=language, search_config=cast(config, REGCONFIG)))


def set_conversation_language(conn: Connection, tenant_id: int, conversation_id: str,
                              language: str | None, config: str | None) -> None:
    """Give a conversation its own language; None makes it follow its tenant's again."""
    if language is None:
        conn.execute(delete(ConversationSetting).where(ConversationSetting.tenant_id == tenant_id,
                                                       ConversationSetting.conversation_id == conversation_id))
        return
    cfg = cast(config, REGCONFIG)
    stmt = pg_insert(ConversationSetting).values(tenant_id=tenant_id, conversation_id=conversation_id,
                                                 language=language, search_config=cfg)
    conn.execute(stmt.on_conflict_do_update(index_elements=["tenant_id", "conversation_id"],
                                            set_={"language": language, "search_config": cfg,
                                                  "updated_at": func.now()}))


_REINDEX_SQL = """
UPDATE events e SET search_config = coalesce(
    (SELECT cs.search_config FROM conversation_settings cs
      WHERE cs.tenant_id = e.tenant_id AND cs.conversation_id = e.conversation_id),
    (SELECT t.search_config FROM tenants t WHERE t.id = e.tenant_id), 'english'::regconfig)
WHERE e.tenant_id = :t {conv}
  AND e.search_config IS DISTINCT FROM coalesce(
    (SELECT cs.search_config FROM conversation_settings cs
      WHERE cs.tenant_id = e.tenant_id AND cs.conversation_id = e.conversation_id),
    (SELECT t.search_config FROM tenants t WHERE t.id = e.tenant_id), 'english'::regconfig)
RETURNING e.conversation_id
"""


def reindex(conn: Connection, tenant_id: int, conversation_id: str | None = None) -> list[str]:
    """Re-derive the configuration of the tenant's (or one conversation's) stored events from the
    settings; returns the conversations whose events changed."""
    params: dict = {"t": tenant_id}
    conv = ""
    if conversation_id is not None:
        conv, params["c"] = "AND e.conversation_id = :c", conversation_id
    return sorted({r[0] for r in conn.execute(text(_REINDEX_SQL.format(conv=conv)), params)})
