"""Job: L0 speaker engrams per conversation -- a profile per speaker (message count, topics,
relationships, style features, standing attributes) and a 256-d style vector."""
from __future__ import annotations

from app.layers import engrams
from app.layers.events import jsonable
from app.storage import layers as store
from workers.celery_app import celery
from workers.layerbase import ConversationLayer, Context, make_task

LAYER = "engrams"


def version() -> str:
    return engrams.LAYER_VERSION


def profile_json(p: engrams.SpeakerProfile) -> dict:
    d = jsonable(p)
    d.pop("style_vector", None)
    d["topics"] = [{"term": t, "weight": w} for t, w in p.topics]
    return d


def build(conn, ctx: Context) -> dict:  # noqa: ANN001
    profiles = engrams.build_profiles(ctx.events)
    store.replace_profiles(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, [
        {"speaker": p.speaker, "message_count": p.message_count, "profile": profile_json(p), "style": p.style_vector}
        for p in profiles.values()
    ])
    return {"speakers": len(profiles)}


JOB = ConversationLayer(LAYER, version, build)
build_engrams = make_task(celery, JOB)
