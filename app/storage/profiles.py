"""SQL for the engrams layer's slices (L0): one profile per speaker and conversation, with its
256-d style vector, one slice per (tenant, conversation, layer_version)."""
from __future__ import annotations

import numpy as np
from sqlalchemy import Connection, select

from app.storage.layer_runs import current_version, delete_slice, insert_slice
from app.storage.models import SpeakerProfileRow


def replace_profiles(conn: Connection, tenant_id: int, conversation_id: str, version: str, rows: list[dict]) -> None:
    """rows: {speaker, message_count, profile (JSON), style (256 floats)}."""
    delete_slice(conn, SpeakerProfileRow, tenant_id, conversation_id, version)
    insert_slice(conn, SpeakerProfileRow, tenant_id, conversation_id, version,
                 [{**r, "style": np.asarray(r["style"], dtype=np.float32)} for r in rows])


def profiles_for(conn: Connection, tenant_id: int, conversation_id: str, layer_version: str | None = None,
                 prefer: str | None = None, include_vectors: bool = False) -> tuple[str | None, list[dict]]:
    """(version, profiles as JSON dicts by speaker name); `style_vector` only when asked for."""
    version = layer_version or current_version(conn, tenant_id, conversation_id, "engrams", prefer)
    if version is None:
        return None, []
    p = SpeakerProfileRow
    cols = [p.speaker, p.profile] + ([p.style] if include_vectors else [])
    res = conn.execute(select(*cols).where(p.tenant_id == tenant_id, p.conversation_id == conversation_id,
                                           p.layer_version == version).order_by(p.speaker))
    out = []
    for r in res:
        prof = dict(r[1])
        if include_vectors:
            prof["style_vector"] = [float(x) for x in np.asarray(r[2])]
        out.append(prof)
    return version, out
