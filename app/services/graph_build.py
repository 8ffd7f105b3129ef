"""The memory graph's build per conversation (PRISM §3.2, App. C.1): entities, facet points, facets
and episodes with belongs_to / involves_entity / temporal / evolution / causal edges, and, per
event, its entities and its time expressions resolved to absolute dates (`event_signals.search_extra`:
"last Saturday" said on 8 May 2023 is searchable as "6 May 2023", "May 6, 2023", "2023-05-06").

The extractor is the rule-based one unless PALIMPSEST_LLM_BASE_URL names an OpenAI-compatible API.
Episodes and the assertions of the evolution edges are consolidation's stored ones (the graph waits
for consolidate), so graph episode nodes match /episodes and no assertion is extracted twice.
Entities are merged by name, then by name-embedding cosine >= 0.90.

graph/4 (#18 item 4), fold state graph_fold/2: with the rules, the facts are a fold (`app.domain.layers.graph_fold`) and the
graph is assembled incrementally (`app.domain.layers.graph_inc`): a full build (`build_graph`, and
`palimpsest rebuild`) folds the whole log and assembles it in one update; an incremental run
(`extend_graph`) folds the batch into the state (the batch and the open tail, the last `LOOKAHEAD`
events, extracted; only new names encoded), updates the assembly and writes the rows it touched.
The state row holds the fold's counters and open tail; its closed facts, events and name vectors are
appended per batch as chunks (`graph_store.add_fold_chunk`), so a batch writes what it added. The
assembly itself lives in the worker's memory between batches (`_WARM`, checked against the state's
generation): a worker that does not hold it (a restart, another worker ran the last batch) rebuilds it
from the state and the chunks (O(n) once) and writes the rows that differ from the stored ones. Both paths run
the same fold and the same assembly, so extending equals rebuilding.
"""
from __future__ import annotations

import gc
import uuid
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection

from app.adapters.llm import llm_from_settings
from app.domain.layers import graph_fold, graph_model, timeparse
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
from app.domain.layers.graph_diff import NameVectors
from app.domain.layers.graph_fold import FOLD_VERSION, FactFold
from app.domain.layers.graph_inc import Assembly
from app.domain.layers.graph_rows import fragment_rows, mention_dict, row_changes
from app.domain.layers.timeturns import resolve_turns
from app.services.builds import new_rows, save_state
from app.services.consolidation_build import consolidation_version, span_model
from app.services.layer_job import Context, ConversationLayer
from app.settings import get_settings
from app.storage import episodes as episode_store
from app.storage import graph as graph_store
from app.storage import layer_state
from app.storage.layer_runs import current_version

LAYER = "graph"


def graph_version() -> str:
    """The graph's rules, the extractor's, the assertions' (its evolution edges) and the time resolver's (the
    facts' dates): a change in any of them rebuilds the layer."""
    llm = bool(get_settings().llm_base_url)
    return (f"{graph_model.LAYER_VERSION}+{assertion_extractor_version(llm, span_model())}+{timeparse.LAYER_VERSION}"
            f"+{extractor_version(llm)}")  # the extractor's last, as it always was


def extractor():  # noqa: ANN201
    s = get_settings()
    encode = None
    if s.graph_entity_merge:
        from app.adapters.embedder import get_embedder

        encode = get_embedder().encode
    return choose_extractor(encode, llm_from_settings(s))


@dataclass
class _Consolidated:
    """Consolidation's rows as the graph last read them (held with the assembly): a batch then reads
    only the rows inserted since (`episode_id`, `assertion_id`: the largest row ids read)."""

    version: str
    episode_id: int
    assertion_id: int
    episodes: list[tuple[int, Episode | None]]  # (index, episode; None: one without events), in order
    assertions: dict[str, Assertion]


def _episode(conversation_id: str, v: episode_store.EpisodeView) -> Episode | None:
    if not v.event_pks:
        return None
    return Episode(id=f"ep:{v.event_pks[0]}", conversation_id=conversation_id, index=v.index,
                   event_ids=tuple(str(p) for p in v.event_pks), start=v.start, end=v.end,
                   speakers=tuple(v.speakers), boundary=v.boundary, summary=v.summary,
                   summary_event_ids=tuple(str(p) for p in v.summary_event_pks))


def _assertion(r: dict) -> Assertion:
    # seq: the event pk, which orders events of one time as the log does (occurred_at, id)
    return Assertion(id=r["key"], event_id=str(r["event_pk"]), entity=r["entity"], attribute=r["attribute"],
                     value=r["value"], value_key=r["value_key"], time=r["asserted_at"], surface=r["surface"] or "",
                     negated=bool(r["negated"]), seq=int(r["event_pk"]), valid_from=r["valid_from"])


def _consolidation_rows(conn: Connection, ctx: Context, held: _Consolidated | None = None
                        ) -> tuple[list[Episode], list[Assertion], _Consolidated, dict] | None:
    """Consolidation's episodes (the graph's episode nodes) and assertions (its evolution edges) at
    consolidation's current version, what is kept to read only the changes next time, and the rows
    read; None when that version has not run for the conversation. With `held` (the last read, kept
    with the assembly; patched in place) only the rows consolidation inserted since are read: its
    incremental run adds assertions and rewrites the episodes from its reopened index on. A full
    consolidation (every row rewritten under new ids: `held`'s last assertion gone) or a slice that
    does not add up reads everything again."""
    version = consolidation_version()
    if current_version(conn, ctx.tenant_id, ctx.conversation_id, "consolidate", version) != version:
        return None
    t, c = ctx.tenant_id, ctx.conversation_id
    if held is not None and (held.version != version or (
            held.assertion_id and not episode_store.assertion_kept(conn, t, c, version, held.assertion_id))):
        held = None
    rows, last = episode_store.episodes_after(conn, t, c, version, held.episode_id if held else 0)
    if held is not None:
        start = rows[0][1].index if rows else len(held.episodes)
        kept = [x for x in held.episodes if x[0] < start]
        if [i for i, _ in kept] + [v.index for _, v in rows] != list(range(len(kept) + len(rows))) or (
                (last if last is not None else -1) != len(kept) + len(rows) - 1):
            return _consolidation_rows(conn, ctx, None)  # not an incremental consolidation's change: all again
        held.episodes = kept
    else:
        held = _Consolidated(version, 0, 0, [], {})
    held.episodes += [(v.index, _episode(c, v)) for _, v in rows]
    held.episode_id = max([held.episode_id, *(i for i, _ in rows)])
    arows = episode_store.assertion_rows(conn, t, c, version, held.assertion_id)
    for r in arows:
        held.assertions[r["key"]] = _assertion(r)
    held.assertion_id = max([held.assertion_id, *(r["id"] for r in arows)])
    episodes = [ep for _, ep in held.episodes if ep is not None]
    read = {"episodes": len(rows), "assertions": len(arows)}
    return episodes, list(held.assertions.values()), held, read


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


@dataclass
class _Held:
    """A conversation's fold and assembly as the last run of this process left them."""

    generation: str
    fold: FactFold
    names: NameVectors
    asm: Assembly
    seqs: dict[str, int]  # event id -> seq (the open tail's events are read back by id)
    consolidated: _Consolidated | None = None  # consolidation's rows as last read


_WARM: OrderedDict[tuple, _Held] = OrderedDict()
# The events of the assemblies a worker process keeps, all conversations together (the least recently
# used go first; the one just run always stays): 7-9 KB of memory per event, so about 350 MB.
WARM_EVENTS = 40_000


def _meta(e: LayerEvent, turn: list[timeparse.TimeMention]) -> tuple[str, str | None, str, int, list[dict]]:
    """What the assembly and the state's chunks keep of an event; `turn`: its mentions (`FactFold.add`)."""
    return (e.id, e.speaker, e.occurred_at.isoformat(), e.seq, [mention_dict(m) for m in turn])


def _save(conn: Connection, ctx: Context, events: int, last, last_at, last_pk, held: _Held,  # noqa: ANN001
          chunk: int, closed_from: int, names_from: int, new: list[tuple]) -> tuple[int, dict]:
    """The batch's chunk (closed facts, events, name vectors it added) and the state row; the
    held assembly handed to the next run of this process."""
    size = 0
    fold, names = held.fold, held.names
    if len(fold.closed) > closed_from or new or len(names.cache) > names_from:
        size += graph_store.add_fold_chunk(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, chunk, {
            "closed": fold.closed_data(closed_from), "events": [list(m) for m in new],
            "names": names.to_dict(names_from)})
        chunk += 1
    head = {"fold": fold.to_dict(closed=False), "names": len(names.cache), "chunks": chunk,
            "generation": uuid.uuid4().hex}
    size += save_state(conn, ctx, LAYER, events, last, last_at, last_pk, head)
    held.generation = head["generation"]
    _WARM[(ctx.tenant_id, ctx.conversation_id, ctx.version)] = held
    while len(_WARM) > 1 and sum(len(h.asm.order) for h in _WARM.values()) > WARM_EVENTS:
        _WARM.popitem(last=False)
    return size, head


def _vectors(names: NameVectors) -> NameVectors | None:
    return names if names.encode else None


def build_graph(conn: Connection, ctx: Context) -> dict:
    """The full build (the fold from an empty state), with the cyclic collector paused."""
    with _no_gc():
        return _build_graph(conn, ctx)


def _build_graph(conn: Connection, ctx: Context) -> dict:
    events = ctx.events
    llm = llm_from_settings(get_settings())
    stored = _consolidation_rows(conn, ctx)
    episodes, assertions = stored[:2] if stored is not None else (segment_episodes(events, ctx.matrix()), None)
    _WARM.pop((ctx.tenant_id, ctx.conversation_id, ctx.version), None)
    if llm is not None:  # the LLM extractor: a full build each time (no fold)
        frag = extractor().extract(events, episodes, assertions=assertions or extract_assertions(events, llm))  # type: ignore[call-arg]
        turn = {e.id: [mention_dict(m) for m in ms] for e, (_, ms) in
                zip(events, resolve_turns((e.content, e.occurred_at) for e in events))}
        nodes, edges, signals = fragment_rows(frag, [(r.id, r.speaker, turn.get(str(r.id))) for r in ctx.rows],
                                              ctx.version)
        graph_store.replace_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, nodes, edges)
        graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, signals)
        stats = dict(frag.stats)
        stats["extractor"] = frag.extractor
        return jsonable(stats)
    if assertions is None:
        assertions = extract_assertions(events, spans=span_model())
    rules = extractor()
    fold = FactFold(graph_fold.LOOKAHEAD, rules)
    meta = [_meta(e, fold.add(e)) for e in events]
    names = NameVectors(rules.encode, {})
    asm = Assembly(ctx.version)
    asm.update(meta, fold.closed_facts(), fold.tail_facts(), episodes, assertions, _vectors(names), delta=False)
    nodes, edges, signals = asm.rows()
    graph_store.replace_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, nodes, edges)
    graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, signals)
    graph_store.drop_fold_chunks(conn, ctx.tenant_id, ctx.conversation_id)
    held = _Held("", fold, names, asm, {e.id: e.seq for e in events}, stored[2] if stored is not None else None)
    size, _ = _save(conn, ctx, len(ctx.rows), ctx.rows[-1] if ctx.rows else None, None, None, held, 0, 0, 0, meta)
    stats = asm.stats()
    stats.update({"extractor": "rules", "run": "full", "state_bytes": size})
    return jsonable(stats)


def extend_graph(conn: Connection, ctx: Context) -> dict | None:
    """`_extend_graph` with the cyclic collector paused."""
    with _no_gc():
        return _extend_graph(conn, ctx)


def _cold(conn: Connection, ctx: Context, data: dict, rules) -> tuple[_Held, list[tuple]] | None:  # noqa: ANN001
    """The fold as the state and its chunks hold it, and the events folded (an assembly yet to make)."""
    chunks = graph_store.fold_chunks(conn, ctx.tenant_id, ctx.conversation_id, ctx.version)
    if len(chunks) != data["chunks"]:
        return None
    closed = [c for ch in chunks for c in ch["closed"]]
    meta = [tuple(m) for ch in chunks for m in ch["events"]]
    names = NameVectors.from_dicts([ch["names"] for ch in chunks], rules.encode)
    if len(closed) != data["fold"]["closed"] or len(names.cache) != data["names"]:
        return None
    seqs = {m[0]: int(m[3]) for m in meta}

    def tail(ids: list[str]) -> list[LayerEvent]:
        rows = {str(r.id): r for r in layer_state.admitted_rows(conn, ctx.tenant_id, ctx.conversation_id,
                                                                  [int(i) for i in ids])}
        return [LayerEvent.of(rows[i], seq=seqs[i]) for i in ids if i in rows]

    fold = FactFold.from_dict({**data["fold"], "closed": closed}, tail, rules)
    return _Held("", fold, names, Assembly(ctx.version), seqs), meta


def _extend_graph(conn: Connection, ctx: Context) -> dict | None:
    """The batch folded into the stored state: the batch and the open tail extracted, the assembly
    updated and only the rows it touched written; None when it needs a full run (see
    `app.services.builds.new_rows`; also with an LLM extractor, without consolidation's episodes and
    assertions, or with a state of another fold)."""
    if llm_from_settings(get_settings()) is not None:
        return None
    stored = layer_state.load(conn, ctx.tenant_id, ctx.conversation_id, LAYER, ctx.version)
    new = new_rows(conn, ctx, stored)
    if new is None or stored is None:
        return None
    data = stored.data
    if data.get("fold", {}).get("version") != FOLD_VERSION or "generation" not in data:
        return None
    held = _WARM.pop((ctx.tenant_id, ctx.conversation_id, ctx.version), None)
    if held is not None and held.generation != data["generation"]:
        held = None
    consolidated = _consolidation_rows(conn, ctx, held.consolidated if held is not None else None)
    if consolidated is None:
        return None
    episodes, assertions, kept, read = consolidated
    old_meta: list[tuple] = []
    if held is None:
        try:
            cold = _cold(conn, ctx, data, extractor())
        except (KeyError, ValueError):
            return None
        if cold is None:
            return None
        held, old_meta = cold
    held.consolidated = kept
    fold, names, asm = held.fold, held.names, held.asm
    closed_from, names_from = len(fold.closed), len(names.cache)
    meta = []
    for i, r in enumerate(new):
        e = LayerEvent.of(r, seq=stored.events + i)
        meta.append(_meta(e, fold.add(e)))
        held.seqs[e.id] = e.seq
    warm = not old_meta
    delta = asm.update(old_meta + meta, fold.closed_facts(0 if not warm else closed_from), fold.tail_facts(),
                       episodes, assertions, _vectors(names), delta=warm)
    if delta is not None:  # the assembly held: the rows it touched
        graph_store.update_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, delta.node_keys,
                                 delta.nodes, delta.edge_triples, delta.edges)
        graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, delta.signals, incremental=True)
        written = {"nodes": len(delta.nodes), "edges": len(delta.edges), "signals": len(delta.signals)}
    else:  # an assembly made again: its rows compared with the stored ones, the differences written
        stored_nodes, stored_edges = graph_store.slice_rows(conn, ctx.tenant_id, ctx.conversation_id, ctx.version)
        stored_signals = graph_store.graph_signals(conn, ctx.tenant_id, ctx.conversation_id)
        keys, nodes, triples, edges, signals = row_changes((stored_nodes, stored_edges, stored_signals), asm.rows())
        graph_store.update_graph(conn, ctx.tenant_id, ctx.conversation_id, ctx.version, keys, nodes, triples, edges)
        graph_store.set_graph_signals(conn, ctx.tenant_id, ctx.conversation_id, signals, incremental=True)
        written = {"nodes": len(nodes), "edges": len(edges), "signals": len(signals)}
    size, _ = _save(conn, ctx, stored.events + len(new), new[-1] if new else None, stored.last_at, stored.last_pk,
                    held, data["chunks"], closed_from, names_from, meta)
    stats = asm.stats()
    stats.update({"extractor": "rules", "run": "incremental", "state_bytes": size, "written": written,
                  "log_events": stored.events + len(new),  # (the caller would otherwise read the log to count)
                  "assembly": "held" if warm else "rebuilt", "names_encoded": names.encoded,
                  "consolidation_read": read})
    return jsonable(stats)


GRAPH = ConversationLayer("graph", graph_version, build_graph, needs_vectors=True, extend=extend_graph)
