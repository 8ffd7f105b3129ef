"""The memory graph's stored rows (`graph_nodes`, `graph_edges`, the graph's per-event signals) from
its plain data (`graph_model`): one function per row kind, used by a full build
(`fragment_rows`, from a whole `GraphFragment`) and by the incremental assembly
(`app.domain.layers.graph_inc`, for the rows a batch touches), so both write the same rows.

Per event: its entities and its time expressions resolved to absolute dates
(`event_signals.search_extra`: "last Saturday" said on 8 May 2023 is searchable as "6 May 2023",
"May 6, 2023", "2023-05-06").
"""
from __future__ import annotations

import calendar
import json
from datetime import date, timedelta
from typing import Iterable, Sequence

from app.domain.layers import timeparse
from app.domain.layers.episodes import Episode
from app.domain.layers.graph_entities import Entity
from app.domain.layers.graph_model import LAYER_VERSION, Edge, Facet, FacetPoint, GraphFragment
from app.domain.layers.text import norm_name
from app.domain.layers.timeparse import TimeMention


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


def mention_dict(m: TimeMention) -> dict:
    return dict(m.__dict__)  # = jsonable(m): its fields are str, int, bool or None


def turn_mentions(version: str | None, content: str, data: Sequence[dict]) -> tuple[TimeMention, ...] | None:
    """An event's time mentions as its signal row keeps them (`signal_row`'s `turn`), or None when another
    graph or resolver version wrote the row (before graph/5 they were the facts' mentions, offsets into a
    clause) or they do not fit `content` (a row not yet rewritten for it)."""
    parts = (version or "").split("+")
    if LAYER_VERSION not in parts or timeparse.LAYER_VERSION not in parts:
        return None
    try:
        out = tuple(TimeMention(**d) for d in data)
    except TypeError:  # a field another version wrote
        return None
    return out if all(content[m.start:m.end] == m.surface for m in out) else None


def entity_row(e: Entity) -> dict:
    return {"key": e.id, "kind": "entity", "label": e.name,
            "names": sorted({norm_name(x) for x in (e.name, *e.aliases) if norm_name(x)}), "event_pk": None,
            "data": {"kind": e.kind, "aliases": list(e.aliases), "mentions": e.mentions,
                     "first_event_id": int(e.first_event_id) if e.first_event_id else None}}


def facet_point_row(fp: FacetPoint) -> dict:
    return {"key": fp.id, "kind": "facet_point", "label": fp.text, "names": None, "event_pk": int(fp.event_id),
            "data": {"speaker": fp.speaker, "topic": fp.topic, "entity_ids": list(fp.entity_ids),
                     "facet_id": fp.facet_id, "episode_id": fp.episode_id, "occurred_at": fp.occurred_at,
                     "dates": [mention_dict(m) for m in fp.dates if m.resolved]}}


def facet_row(fc_id: str, episode_id: str | None, entity_id: str | None, topic: str, label: str, size: int) -> dict:
    return {"key": fc_id, "kind": "facet", "label": label, "names": None, "event_pk": None,
            "data": {"episode_id": episode_id, "entity_id": entity_id, "topic": topic, "size": size}}


def episode_row(ep: Episode) -> dict:
    return {"key": ep.id, "kind": "episode", "label": ep.summary or f"episode {ep.index + 1}", "names": None,
            "event_pk": None,
            "data": {"index": ep.index, "start": ep.start.isoformat(), "end": ep.end.isoformat(),
                     "boundary": ep.boundary, "events": len(ep.event_ids)}}


def fp_event(key: str) -> int | None:
    """The event of a facet point's key ("fp:<event pk>:<k>"); None for any other node."""
    if not key.startswith("fp:"):
        return None
    return int(key.split(":")[1])


def edge_row(e: Edge) -> dict:
    return {"src": e.src, "dst": e.dst, "type": e.type, "weight": e.weight, "meta": dict(e.meta),  # str/bool values
            "src_event_pk": fp_event(e.src), "dst_event_pk": fp_event(e.dst)}


def signal_row(pk: int, speaker: str | None, ents: Sequence[Entity], mentions: Sequence[TimeMention],
               version: str, turn: Sequence[dict] | None = None) -> dict:
    """One event's graph signals: its entities' names and its dates, and the words a question may
    use for them (the speaker's own name left out). `time_mentions`: `turn` when given (the whole
    turn's time expressions as the fold read them, offsets into its content: what a query's context
    shows without reading the turn again), else the facts' mentions."""
    words: list[str] = []
    for m in mentions:
        words += date_words(m)
    own = norm_name(speaker or "")
    for e in ents:
        if norm_name(e.name) != own:
            words += [e.name, *e.aliases]
    dates = sorted({date.fromisoformat(m.date) for m in mentions if m.resolved and m.date})
    return {"event_pk": pk, "graph_version": version, "entities": [e.name for e in ents],
            "resolved_dates": dates,
            "time_mentions": list(turn) if turn is not None else [mention_dict(m) for m in mentions],
            "search_extra": " ; ".join(dict.fromkeys(words)) or None}


def event_signal(pk: int, speaker: str | None, fps: Iterable[FacetPoint], entities: dict[str, Entity],
                 version: str, turn: Sequence[dict] | None = None) -> dict:
    """`signal_row` of an event from its facet points (entities and mentions in their order, once) and
    its turn's mentions (`turn`, as `signal_row` takes them)."""
    ents: dict[str, Entity] = {}
    mentions: dict[tuple, TimeMention] = {}
    for fp in fps:
        for en in fp.entity_ids:
            if en in entities:
                ents[en] = entities[en]
        for m in fp.dates:
            mentions.setdefault((m.surface, m.start, m.date), m)
    return signal_row(pk, speaker, list(ents.values()), list(mentions.values()), version, turn)


def fragment_rows(frag: GraphFragment, rows: Sequence[tuple[int, str | None, Sequence[dict] | None]],
                  version: str) -> tuple[list[dict], list[dict], list[dict]]:
    """Graph nodes, edges and per-event signal rows of a whole fragment; `rows`: (event pk, speaker,
    the turn's time mentions as `signal_row` takes them or None) of every admitted event in time order."""
    fp_ids = {fp.id for fp in frag.facet_points}
    nodes = [entity_row(e) for e in frag.entities]
    nodes += [facet_point_row(fp) for fp in frag.facet_points]
    nodes += [facet_row(fc.id, fc.episode_id, fc.entity_id, fc.topic, fc.label, len(fc.facet_point_ids))
              for fc in frag.facets]
    nodes += [episode_row(ep) for ep in frag.episodes]
    edges = [edge_row(e) for e in frag.edges]
    for r in edges:  # an edge's event is a facet point's event only when that facet point exists
        if r["src"] not in fp_ids:
            r["src_event_pk"] = None
        if r["dst"] not in fp_ids:
            r["dst_event_pk"] = None
    names = {e.id: e for e in frag.entities}
    per_event: dict[int, list[FacetPoint]] = {}
    for fp in frag.facet_points:
        per_event.setdefault(int(fp.event_id), []).append(fp)
    return nodes, edges, [event_signal(pk, speaker, per_event.get(pk, ()), names, version, turn)
                          for pk, speaker, turn in rows]


def _canon(row: dict) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def row_changes(stored: tuple[list[dict], list[dict], list[dict]], rows: tuple[list[dict], list[dict], list[dict]]
                ) -> tuple[list[str], list[dict], list[tuple[str, str, str]], list[dict], list[dict]]:
    """What turns the `stored` (nodes, edges, signals) into `rows`: node keys to delete and nodes to
    insert, edge groups (src, dst, type) to delete and edges to insert, signal rows to upsert."""
    (old_nodes, old_edges, old_signals), (nodes, edges, signals) = stored, rows
    was = {n["key"]: _canon(n) for n in old_nodes}
    now = {n["key"]: n for n in nodes}
    node_keys = sorted({k for k in was if k not in now} | {k for k, n in now.items() if was.get(k) != _canon(n)})
    groups: dict[tuple, list[dict]] = {}
    for e in edges:
        groups.setdefault((e["src"], e["dst"], e["type"]), []).append(e)
    old_groups: dict[tuple, list[str]] = {}
    for e in old_edges:
        old_groups.setdefault((e["src"], e["dst"], e["type"]), []).append(_canon(e))
    triples = sorted({t for t in old_groups if t not in groups}
                     | {t for t, g in groups.items() if sorted(map(_canon, g)) != sorted(old_groups.get(t, []))})
    sig = {r["event_pk"]: _canon(r) for r in old_signals}
    return (node_keys, [now[k] for k in node_keys if k in now], triples,
            [e for t in triples for e in groups.get(t, ())], [r for r in signals if sig.get(r["event_pk"]) != _canon(r)])
