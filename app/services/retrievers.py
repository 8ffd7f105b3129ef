"""The retrieval signals, one `Retriever` each (`app.ports`): lexical, dense, derived, findable, expansion,
separation, graph and the temporal window. Each says whether it runs for this question
(`applies`) and returns its ranked hits (`run`); the query service runs them in `RETRIEVERS`'
order, the first phase of a query, and reads nothing else until they are all done.

They share a `SearchContext`: the question, its vector and intent, what the preliminary read found
(`app.storage.candidates.preliminaries`) and the signals gathered so far (the graph starts from
the others' top hits, expansion from lexical and dense). The recency list is not a retriever: it
re-orders what these found, once their events are read.
"""
from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import Connection

from app.domain.recipe import Recipe
from app.domain.retrieval.expansion import feedback_ids, hyde_messages, rocchio, usable_passage
from app.domain.retrieval.intent import Intent
from app.domain.retrieval.lexical import bm25, finding_terms
from app.domain.retrieval.neighbourhood import graph_hits
from app.domain.retrieval.ranking import bounded_window
from app.domain.retrieval.separation import separated_speakers
from app.ports import LLM, Embedder, Hit, LLMError
from app.services.graph import neighbourhood
from app.storage.candidates import (
    Preliminaries,
    Scope,
    dense_candidates,
    event_vectors,
    filter_clauses,
    in_filters,
    lexeme_shares,
    lexical_term_frequencies,
    query_lexemes,
    scope_stats,
    search_extra_candidates,
    window_candidates,
)
from app.storage.findable import findable_candidates

GRAPH_PREFER_DEPTH = 30  # the other signals' top hits the graph neighbourhood reaches first
GRAPH_NODES = 400  # the neighbourhood PageRank runs on (nodes read per query)


@dataclass
class SearchContext:
    conn: Connection
    scope: Scope
    query: str
    qvec: np.ndarray | None
    embedder: Embedder
    recipe: Recipe
    llm: LLM | None = None
    intent: Intent | None = None
    pre: Preliminaries = field(default_factory=Preliminaries)
    signals: dict[str, list[tuple[int, float]]] = field(default_factory=dict)


def _hits(pairs: list[tuple[int, float]]) -> list[Hit]:
    return [Hit(pk, score) for pk, score in pairs]


class Lexical:
    """BM25 over PostgreSQL's full-text lexemes."""

    name = "lexical"

    def applies(self, ctx: SearchContext) -> bool:
        return ctx.recipe.lexical

    def run(self, ctx: SearchContext) -> list[Hit]:
        return _hits(lexical_signal(ctx.conn, ctx.scope, ctx.query, ctx.recipe.candidate_pool, terms=ctx.pre.lexemes))


def lexical_signal(
    conn: Connection, scope: Scope, query: str, limit: int, max_docs: int = 2000, max_share: float | None = None,
    find_budget: float | None = None, terms: list[str] | None = None,
) -> list[tuple[int, float]]:
    """The lexical signal: the events sharing a stemmed term with the question, by BM25.

    `terms`: the question's lexemes when already read (`preliminaries`). `max_share`: in a scope of
    more than `lexical_prune_above` events, terms held by more of the events than this only score,
    never find (None: the `lexical_common_share` setting; 1.0 lets every term find); `find_budget`
    (None: the `lexical_find_budget` setting; `math.inf` lifts it): how many matches the finding
    terms may be expected to bring, together (`finding_terms`). The shares are PostgreSQL's
    statistics over the whole table, so a small scope (one conversation) keeps every term:
    enumerating its matches is cheap, and a word common across all tenants may be the rare one in
    this conversation."""
    if not query.strip():
        return []
    terms = query_lexemes(conn, query, scope) if terms is None else terms
    if not terms:
        return []
    from app.settings import get_settings

    s = get_settings()
    max_share = s.lexical_common_share if max_share is None else max_share
    find_budget = s.lexical_find_budget if find_budget is None else find_budget
    n_docs, avgdl = scope_stats(conn, scope)
    pruning = (max_share < 1.0 or find_budget != math.inf) and n_docs > s.lexical_prune_above
    shares = lexeme_shares(conn) if pruning else {}
    finding = finding_terms(terms, shares, max_share, n_docs, find_budget) if shares else terms
    tfs, lengths = lexical_term_frequencies(conn, scope, terms, max_docs, finding)
    if not tfs:
        return []
    # a term that did not find was counted only among what the others found: its share says more
    floor = {t: shares[t] * n_docs for t in terms if t in shares and t not in finding}
    return bm25(terms, list(tfs.items()), n_docs, avgdl, lengths, floor)[:limit]


class Dense:
    """pgvector cosine search over the event embeddings."""

    name = "dense"

    def applies(self, ctx: SearchContext) -> bool:
        return ctx.recipe.dense and ctx.qvec is not None

    def run(self, ctx: SearchContext) -> list[Hit]:
        return _hits(dense_candidates(ctx.conn, ctx.scope, ctx.qvec, ctx.embedder.name, ctx.recipe.candidate_pool))


class Derived:
    """Full-text over the text the layers wrote over the verbatim turns: resolved absolute dates and
    entity names."""

    name = "derived"

    def applies(self, ctx: SearchContext) -> bool:
        return ctx.recipe.derived

    def run(self, ctx: SearchContext) -> list[Hit]:
        return _hits(search_extra_candidates(ctx.conn, ctx.scope, ctx.query, ctx.recipe.candidate_pool))


class Findable:
    """Full-text over what makes a turn findable beside its own words: the turn it answers and its
    session's date (`app.storage.findable`)."""

    name = "findable"

    def applies(self, ctx: SearchContext) -> bool:
        return ctx.recipe.findable

    def run(self, ctx: SearchContext) -> list[Hit]:
        return _hits(findable_candidates(ctx.conn, ctx.scope, ctx.query, ctx.recipe.candidate_pool))


class Expansion:
    """The dense search again with the question restated: HyDE when an LLM is configured (and
    answers), else the question's vector moved toward the turns lexical and dense agree on."""

    name = "expansion"

    def applies(self, ctx: SearchContext) -> bool:
        return ctx.recipe.expansion and ctx.recipe.dense and ctx.qvec is not None

    def run(self, ctx: SearchContext) -> list[Hit]:
        vec = None
        if ctx.llm is not None:
            try:
                passage = usable_passage(ctx.llm.chat(hyde_messages(ctx.query)))
            except LLMError:
                passage = None  # no LLM answer: feedback from the conversation instead
            if passage:
                vec = ctx.embedder.encode([passage])[0]
        if vec is None:
            top = feedback_ids([[pk for pk, _ in ctx.signals.get(name, [])] for name in ("lexical", "dense")])
            vec = rocchio(ctx.qvec, event_vectors(ctx.conn, ctx.scope.tenant_id, top, ctx.embedder.name))
        if vec is None:
            return []
        return _hits(dense_candidates(ctx.conn, ctx.scope, vec, ctx.embedder.name, ctx.recipe.candidate_pool))


class Separation:
    """In a conversation of many speakers, the turns of those the question names, by meaning."""

    name = "separation"

    def wants_speakers(self, recipe: Recipe, scope: Scope, has_vector: bool) -> bool:
        """Whether the preliminary read should bring the conversation's speakers."""
        return recipe.separation and has_vector and scope.conversation_id is not None and not scope.speakers

    def named(self, ctx: SearchContext) -> tuple[str, ...]:
        return separated_speakers(ctx.query, ctx.pre.speakers or [])

    def applies(self, ctx: SearchContext) -> bool:
        return self.wants_speakers(ctx.recipe, ctx.scope, ctx.qvec is not None) and bool(self.named(ctx))

    def run(self, ctx: SearchContext) -> list[Hit]:
        return _hits(dense_candidates(ctx.conn, replace(ctx.scope, speakers=self.named(ctx)), ctx.qvec,
                                      ctx.embedder.name, ctx.recipe.candidate_pool))


class Graph:
    """Personalized PageRank over the entity graph from the entities the question names, fused with
    PRISM's bundle search from the dense hits. Only the neighbourhood is read, and where it is too
    big to read whole, the part that reaches the other signals' top hits first."""

    name = "graph"

    def wants_version(self, recipe: Recipe, scope: Scope) -> bool:
        return recipe.graph and scope.conversation_id is not None

    def applies(self, ctx: SearchContext) -> bool:
        return self.wants_version(ctx.recipe, ctx.scope)

    def run(self, ctx: SearchContext) -> list[Hit]:
        if ctx.pre.graph_version is None:
            return []  # no graph built for this conversation yet
        found = {pk for hits in ctx.signals.values() for pk, _ in hits[:GRAPH_PREFER_DEPTH]}
        anchors = dict(ctx.signals.get("dense", [])[:GRAPH_PREFER_DEPTH]) if ctx.recipe.bundle else {}
        return _hits(graph_signal(ctx.conn, ctx.scope, ctx.query, ctx.recipe.candidate_pool, found, anchors,
                                  ctx.intent.label if ctx.intent is not None else None, ctx.pre.graph_version))


def graph_signal(conn: Connection, scope: Scope, query: str, limit: int, found: Collection[int] = (),
                 anchors: dict[int, float] | None = None, intent: str | None = None,
                 layer_version: str | None = None) -> list[tuple[int, float]]:
    """The graph's ranked events for a question: its neighbourhood (at most `GRAPH_NODES` nodes, two
    hops, the part reaching `found` first), then PageRank and the bundle search from `anchors`
    (event -> dense cosine) over it. `layer_version`: the graph's version (else the latest).

    The walk knows the conversation only (PageRank's mass flows through every turn of it); with the
    request's filters (speakers, time range, metadata), its whole ranking is read and the `limit`
    best of the events that pass them are kept, so out-of-filter events take none of the places."""
    view = neighbourhood(conn, scope.tenant_id, scope.conversation_id, query=query, limit=GRAPH_NODES, depth=2,
                         layer_version=layer_version, light=True, prefer_events=found)
    if not filter_clauses(scope)[0]:
        return graph_hits(view, limit, anchors, intent)
    ranked = graph_hits(view, max(limit, len(view.nodes)), anchors, intent)  # every event the view holds
    passing = in_filters(conn, scope, [pk for pk, _ in ranked])
    return [(pk, score) for pk, score in ranked if pk in passing][:limit]


class Temporal:
    """A question that names a date: what was said then (or about then), closest in meaning first.
    A boost alone cannot lift an event from rank 40; a signal of its own puts it in the fusion."""

    name = "temporal"

    def window(self, ctx: SearchContext) -> Any:
        if not ctx.recipe.window or ctx.qvec is None:
            return None
        return bounded_window(ctx.intent, ctx.recipe.window_max_days)

    def applies(self, ctx: SearchContext) -> bool:
        return self.window(ctx) is not None

    def run(self, ctx: SearchContext) -> list[Hit]:
        start, end = self.window(ctx)
        return _hits(window_candidates(ctx.conn, ctx.scope, ctx.qvec, ctx.embedder.name, start, end,
                                       ctx.recipe.candidate_pool))


SEPARATION = Separation()
GRAPH = Graph()
RETRIEVERS = (Lexical(), Dense(), Derived(), Findable(), Expansion(), SEPARATION, GRAPH, Temporal())
