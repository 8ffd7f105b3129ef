"""The memory graph's build per conversation (PRISM §3.2, App. C.1): entities, facet points, facets
and episodes with belongs_to / involves_entity / temporal / evolution / causal edges, and, per
event, its entities and its time expressions resolved to absolute dates (`event_signals.search_extra`:
"last Saturday" said on 8 May 2023 is searchable as "6 May 2023", "May 6, 2023", "2023-05-06").

The extractor is the rule-based one unless PALIMPSEST_LLM_BASE_URL names an OpenAI-compatible API.
Episodes and the assertions of the evolution edges are consolidation's stored ones (the graph waits
for consolidate), so graph episode nodes match /episodes and no assertion is extracted twice.
Entities are merged by name, then by name-embedding cosine >= 0.90.

graph/4 (#18 item 4): with the rules, the facts are a fold (`app.domain.layers.graph_fold`): a full
build (`build_graph`, and `palimpsest rebuild`) folds the whole log and saves the state; an
incremental run (`extend_graph`) folds the batch into the saved state, so only the batch and the
open tail (the last `LOOKAHEAD` events) are extracted and only new names encoded. The graph is then
assembled from the kept facts (entity merging, facets, temporal, evolution and causal edges: in
memory, from the facts, no text read) and only the rows whose checksum changed are written
(`app.domain.layers.graph_diff`). Both paths run the same fold and the same assembly, so extending
equals rebuilding.
"""
from __future__ import annotations

import calendar
import gc
from contextlib import contextmanager
from datetime import date, datetime, timedelta

from sqlalchemy import Connection

from app.adapters.llm import llm_from_settings
from app.domain.layers import graph_fold, graph_model
from app.domain.layers.extractors import (
    assertion_extractor_version,
    choose_extractor,
    extract_assertions,
    extractor_version,
)
from app.domain.layers.assertions import Assertion
from app.domain.layers.consolidation import segment_episodes
from app.domain.layers.episodes import Episode
from app.domain.layers.events import LayerEvent, jsonable
from app.domain.layers.graph_diff import NameVectors, changed_rows, row_hashes
from app.domain.layers.graph_fold import FactFold
from app.domain.layers.text import norm_name
from app.domain.layers.timeparse import TimeMention
from app.services.builds import new_rows, save_state
from app.services.consolidation_build import consolidation_version
from app.services.layer_job import Context, ConversationLayer
from app.settings import get_settings
from app.storage import episodes as episode_store
from app.storage import graph as graph_store
from app.storage import layer_state
from app.storage.layer_runs import current_version

LAYER = "graph"


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


def _mention(m: TimeMention) -> dict:
    return dict(m.__dict__)  # = jsonable(m): its fields are str, int, bool or None


def _fragment_rows(frag: graph_model.GraphFragment, rows: list[tuple[int, str]], version: str
                   ) -> tuple[list[dict], list[dict], list[dict]]:
    """Graph nodes, edges and per-event signal rows of a fragment; `rows`: (event pk, speaker) of every
    admitted event in time order."""
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
                  "dates": [_mention(m) for m in fp.dates if m.resolved]}}
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
        {"src": e.src, "dst": e.dst, "type": e.type, "weight": e.weight, "meta": dict(e.meta),  # str/bool values
         "src_event_pk": fp_event.get(e.src), "dst_event_pk": fp_event.get(e.dst)}
        for e in frag.edges
    ]
    # per event: entity names, resolved dates, time mentions, and the derived searchable text
    names = {e.id: e for e in frag.entities}
    per_event: dict[int, dict] = {}
    for fp in frag.facet_points:
        acc = per_event.setdefault(int(fp.event_id), {"entities": {}, "mentions": {}})
        for en in fp.entity_ids:
            if en in names:
                acc["entities"][en] = names[en]
        for m in fp.dates:
            acc["mentions"].setdefault((m.surface, m.start, m.date), m)
    signals = []
    for pk, speaker in rows:
        acc = per_event.get(pk, {"entities": {}, "mentions": {}})
        ents = list(acc["entities"].values())
        mentions = list(acc["mentions"].values())
        words: list[str] = []
        for m in mentions:
            words += date_words(m)
        own = norm_name(speaker or "")
        for e in ents:
            if norm_name(e.name) != own:
                words += [e.name, *e.aliases]
        dates = sorted({date.fromisoformat(m.date) for m in mentions if m.resolved and m.date})
        signals.append({
            "event_pk": pk, "graph_version": version, "entities": [e.name for e in ents],
            "resolved_dates": dates, "time_mentions": [_mention(m) for m in mentions],
            "search_extra": " ; ".join(dict.fromkeys(words)) or None,
        })
    return nodes, edges, signals


def _consolidation_rows(conn: Connection, ctx: Context) -> tuple[list[Episode], list[Assertion]] | None:
    """Consolidation's episodes (the graph's episode nodes) and assertions (its evolution edges) at
    consolidation's current version; None when that version has not run for the conversation."""
    version = consolidation_version()
    if current_version(conn, ctx.tenant_id, ctx.conversation_id, "consolidate", version) != version:
        return None
    _, views = episode_store.episodes_for(conn, ctx.tenant_id, ctx.conversation_id, layer_version=version)
    episodes = [Episode(id=f"ep:{v.event_pks[0]}", conversation_id=ctx.conversation_id, index=v.index,
                        event_ids=tuple(str(p) for p in v.event_pks), start=v.start, end=v.end,
                        speakers=tuple(v.speakers), boundary=v.boundary, summary=v.summary,
                        summary_event_ids=tuple(str(p) for p in v.summary_event_pks))
                for v in views if v.event_pks]
    rows = episode_store.assertion_rows(conn, ctx.tenant_id, ctx.conversation_id, version)
    # seq: the event pk, which orders events of one time as the log does (occurred_at, id)
    assertions = [Assertion(id=r["key"], event_id=str(r["event_pk"]), entity=r["entity"], attribute=r["attribute"],
                            value=r["value"], value_key=r["value_key"], time=r["asserted_at"],
                            surface=r["surface"] or "", negated=bool(r["negated"]), seq=int(r["event_pk"]),
                            valid_from=r["valid_from"]) for r in rows]
    return episodes, assertions


def _meta_events(meta: list[list]) -> list[LayerEvent]:
    """Folded events as the assembly reads them (id, speaker, time, seq; not their text)."""
    return [LayerEvent(str(i), sp, "", datetime.fromisoformat(at), seq=int(q)) for i, sp, at, q in meta]


@contextmanager
def _no_gc():  # noqa: ANN202
    """The cyclic collector paused while the graph is assembled: hundreds of thousands of small,
    acyclic objects made its full passes (over a worker's whole heap) most of a batch's time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _write_state(conn: Connection, ctx: Context, events: int, last, last_at, last_pk, fold: FactFold,  # noqa: ANN001
                 meta: list[list], names: NameVectors, hashes: dict) -> int:
    return save_state(conn, ctx, LAYER, events, last, last_at, last_pk,
                      {"fold": fold.to_dict(), "events": meta, "names": names.to_dict(), "hashes": hashes})


def _assemble(conversation_id: str, fold: FactFold, meta: list[list], names: NameVectors,
              episodes: list[Episode], assertions: list[Assertion]) -> graph_model.GraphFragment:
    return graph_model.assemble(conversation_id, _meta_events(meta), fold.facts(), episodes,
                                names if names.encode else None, "rules", assertions)


def build_graph(conn: Connection, ctx: Context) -> dict:
    """The full build (the fold from an empty state), with the cyclic collector paused."""
    with _no_gc():
        return _build_graph(conn, ctx)


def _build_graph(conn: Connection, ctx: Context) -> dict:
    events = ctx.events
    llm = llm_from_settings(get_settings())
    stored = _consolidation_rows(conn, ctx)
    episodes, assertions = stored if stored is not None else (segment_episodes(events, ctx.matrix()), None)
    if llm is not None:  # the LLM extractor: a full build each time (no fold)
        frag = extractor().extract(events, episodes, assertions=assertions or extract_assertions(events, llm))  # type: ignore[call-arg]
        nodes, edges, signals = _fragment_rows(frag, [(r.id, r.speaker) for r in ctx.rows], ctx.version)
        graph_store.replace_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, nodes, edges)
        graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, signals)
        stats = dict(frag.stats)
        stats["extractor"] = frag.extractor
        return jsonable(stats)
    if assertions is None:
        assertions = extract_assertions(events)
    rules = extractor()
    fold = FactFold(graph_fold.LOOKAHEAD, rules)
    for e in events:
        fold.add(e)
    meta = [[e.id, e.speaker, e.occurred_at.isoformat(), e.seq] for e in events]
    names = NameVectors(rules.encode, {})
    frag = _assemble(ctx.conversation_id, fold, meta, names, episodes, assertions)
    nodes, edges, signals = _fragment_rows(frag, [(r.id, r.speaker) for r in ctx.rows], ctx.version)
    graph_store.replace_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, nodes, edges)
    graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, signals)
    size = _write_state(conn, ctx, len(ctx.rows), ctx.rows[-1] if ctx.rows else None, None, None, fold, meta, names,
                        row_hashes(nodes, edges, signals))
    stats = dict(frag.stats)
    stats.update({"extractor": frag.extractor, "run": "full", "state_bytes": size})
    return jsonable(stats)


def extend_graph(conn: Connection, ctx: Context) -> dict | None:
    """`_extend_graph` with the cyclic collector paused."""
    with _no_gc():
        return _extend_graph(conn, ctx)


def _extend_graph(conn: Connection, ctx: Context) -> dict | None:
    """The batch folded into the stored state: the batch and the open tail extracted, the graph
    assembled from the kept facts, and only the rows that changed written; None when it needs a
    full run (see `app.services.builds.new_rows`; also with an LLM extractor, without consolidation's
    episodes and assertions, or with a state of another fold)."""
    if llm_from_settings(get_settings()) is not None:
        return None
    stored = layer_state.load(conn, ctx.tenant_id, ctx.conversation_id, LAYER, ctx.version)
    new = new_rows(conn, ctx, stored)
    if new is None or stored is None:
        return None
    consolidated = _consolidation_rows(conn, ctx)
    if consolidated is None:
        return None
    episodes, assertions = consolidated
    data = stored.data
    seqs = {str(i): int(q) for i, _, _, q in data["events"]}
    rules = extractor()

    def tail(ids: list[str]) -> list[LayerEvent]:
        rows = {str(r.id): r for r in layer_state.admitted_rows(conn, ctx.tenant_id, ctx.conversation_id,
                                                                  [int(i) for i in ids])}
        return [LayerEvent.of(rows[i], seq=seqs[i]) for i in ids if i in rows]

    try:
        fold = FactFold.from_dict(data["fold"], tail, rules)
        names = NameVectors.from_dict(data["names"], rules.encode)
    except (KeyError, ValueError):
        return None
    meta = list(data["events"])
    for i, r in enumerate(new):
        e = LayerEvent.of(r, seq=stored.events + i)
        fold.add(e)
        meta.append([e.id, e.speaker, e.occurred_at.isoformat(), e.seq])
    frag = _assemble(ctx.conversation_id, fold, meta, names, episodes, assertions)
    speakers = [(int(i), sp) for i, sp, _, _ in meta]
    nodes, edges, signals = _fragment_rows(frag, speakers, ctx.version)
    hashes = row_hashes(nodes, edges, signals)
    diff = changed_rows(data["hashes"], hashes, nodes, edges, signals)
    graph_store.update_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, diff.node_keys, diff.nodes,
                             diff.edge_triples, diff.edges)
    graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, diff.signals, incremental=True)
    size = _write_state(conn, ctx, stored.events + len(new), new[-1] if new else None, stored.last_at,
                        stored.last_pk, fold, meta, names, hashes)
    stats = dict(frag.stats)
    stats.update({"extractor": frag.extractor, "run": "incremental", "state_bytes": size,
                  "written": {"nodes": len(diff.nodes), "edges": len(diff.edges), "signals": len(diff.signals)},
                  "names_encoded": names.encoded})
    return jsonable(stats)


GRAPH = ConversationLayer("graph", graph_version, build_graph, needs_vectors=True, extend=extend_graph)
