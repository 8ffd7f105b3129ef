"""The memory graph's build per conversation (PRISM §3.2, App. C.1): entities, facet points, facets
and episodes with belongs_to / involves_entity / temporal / evolution / causal edges, and, per
event, its entities and its time expressions resolved to absolute dates (`event_signals.search_extra`:
"last Saturday" said on 8 May 2023 is searchable as "6 May 2023", "May 6, 2023", "2023-05-06").

The extractor is the rule-based one unless PALIMPSEST_LLM_BASE_URL names an OpenAI-compatible API.
Episodes are consolidation's (same segmentation over the same stored vectors), so graph episode
nodes match /episodes. Entities are merged by name, then by name-embedding cosine >= 0.90.
"""
from __future__ import annotations

import calendar
from datetime import date, timedelta

from sqlalchemy import Connection

from app.adapters.llm import llm_from_settings
from app.domain.layers import graph_model
from app.domain.layers.extractors import (
    assertion_extractor_version,
    choose_extractor,
    extract_assertions,
    extractor_version,
)
from app.domain.layers.consolidation import segment_episodes
from app.domain.layers.events import jsonable
from app.domain.layers.text import norm_name
from app.domain.layers.timeparse import TimeMention
from app.services.layer_job import Context, ConversationLayer
from app.settings import get_settings
from app.storage import graph as graph_store


def graph_version() -> str:
    """The graph's rules, the extractor's, and the assertions' (its evolution edges)."""
    llm = bool(get_settings().llm_base_url)
    return f"{graph_model.LAYER_VERSION}+{assertion_extractor_version(llm)}+{extractor_version(llm)}"


def extractor():  # noqa: ANN201
    s = get_settings()
    encode = None
    if s.graph_entity_merge:
        from app.adapters.embedder import get_embedder

        encode = get_embedder().encode
    return choose_extractor(encode, llm_from_settings(s))


def date_words(m: TimeMention) -> list[str]:
    """Ways a question may name the date a mention resolved to."""
    if not m.resolved or not m.date:
        return []
    d = date.fromisoformat(m.date)
    month = calendar.month_name[d.month]
    out = [m.date]
    if m.label:
        out.append(m.label)
    if m.granularity == "day":
        out += [f"{d.day} {month} {d.year}", f"{month} {d.day}, {d.year}", calendar.day_name[d.weekday()]]
    if m.range_start and m.range_end:
        a, b = date.fromisoformat(m.range_start), date.fromisoformat(m.range_end) - timedelta(days=1)  # half-open
        out += [f"{calendar.month_name[a.month]} {a.year}"]
        if (b.year, b.month) != (a.year, a.month):
            out.append(f"{calendar.month_name[b.month]} {b.year}")
    else:
        out.append(f"{month} {d.year}")
    return list(dict.fromkeys(out))


def build_graph(conn: Connection, ctx: Context) -> dict:
    events = ctx.events
    episodes = segment_episodes(events, ctx.matrix())
    llm = llm_from_settings(get_settings())
    if llm is None:  # the rules' assertions (`extract_assertions` without an LLM) are the extractor's default
        frag = extractor().extract(events, episodes)
    else:  # the LLM's assertions make the evolution edges
        frag = extractor().extract(events, episodes, assertions=extract_assertions(events, llm))  # type: ignore[call-arg]
    fp_event = {fp.id: int(fp.event_id) for fp in frag.facet_points}
    nodes = [
        {"key": e.id, "kind": "entity", "label": e.name,
         "names": sorted({norm_name(x) for x in (e.name, *e.aliases) if norm_name(x)}), "event_pk": None,
         "data": {"kind": e.kind, "aliases": list(e.aliases), "mentions": e.mentions,
                  "first_event_id": int(e.first_event_id) if e.first_event_id else None}}
        for e in frag.entities
    ]
    nodes += [
        {"key": fp.id, "kind": "facet_point", "label": fp.text, "names": None, "event_pk": int(fp.event_id),
         "data": {"speaker": fp.speaker, "topic": fp.topic, "entity_ids": list(fp.entity_ids),
                  "facet_id": fp.facet_id, "episode_id": fp.episode_id, "occurred_at": fp.occurred_at,
                  "dates": [jsonable(m) for m in fp.dates if m.resolved]}}
        for fp in frag.facet_points
    ]
    nodes += [
        {"key": fc.id, "kind": "facet", "label": fc.label, "names": None, "event_pk": None,
         "data": {"episode_id": fc.episode_id, "entity_id": fc.entity_id, "topic": fc.topic,
                  "size": len(fc.facet_point_ids)}}
        for fc in frag.facets
    ]
    nodes += [
        {"key": ep.id, "kind": "episode", "label": ep.summary or f"episode {ep.index + 1}", "names": None,
         "event_pk": None,
         "data": {"index": ep.index, "start": ep.start.isoformat(), "end": ep.end.isoformat(),
                  "boundary": ep.boundary, "events": len(ep.event_ids)}}
        for ep in frag.episodes
    ]
    edges = [
        {"src": e.src, "dst": e.dst, "type": e.type, "weight": e.weight, "meta": jsonable(e.meta),
         "src_event_pk": fp_event.get(e.src), "dst_event_pk": fp_event.get(e.dst)}
        for e in frag.edges
    ]
    graph_store.replace_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, nodes, edges)

    # per event: entity names, resolved dates, time mentions, and the derived searchable text
    names = {e.id: e for e in frag.entities}
    speaker_of = {r.id: r.speaker for r in ctx.rows}
    per_event: dict[int, dict] = {}
    for fp in frag.facet_points:
        pk = int(fp.event_id)
        acc = per_event.setdefault(pk, {"entities": {}, "mentions": {}})
        for en in fp.entity_ids:
            if en in names:
                acc["entities"][en] = names[en]
        for m in fp.dates:
            acc["mentions"].setdefault((m.surface, m.start, m.date), m)
    rows = []
    for r in ctx.rows:
        acc = per_event.get(r.id, {"entities": {}, "mentions": {}})
        ents = list(acc["entities"].values())
        mentions = list(acc["mentions"].values())
        words: list[str] = []
        for m in mentions:
            words += date_words(m)
        own = norm_name(speaker_of.get(r.id) or "")
        for e in ents:
            if norm_name(e.name) != own:
                words += [e.name, *e.aliases]
        dates = sorted({date.fromisoformat(m.date) for m in mentions if m.resolved and m.date})
        rows.append({
            "event_pk": r.id, "graph_version": ctx.version, "entities": [e.name for e in ents],
            "resolved_dates": dates,
            "time_mentions": [jsonable(m) for m in mentions],
            "search_extra": " ; ".join(dict.fromkeys(words)) or None,
        })
    graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, rows)
    stats = dict(frag.stats)
    stats["extractor"] = frag.extractor
    return jsonable(stats)


GRAPH = ConversationLayer("graph", graph_version, build_graph, needs_vectors=True)
