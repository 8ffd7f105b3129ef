"""Response models of the layer endpoints (episodes, timeline, graph, speakers)."""
from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_VERSION = Field(description="The layer version these rows were computed by; null until the layer has run.")
_NEXT = Field(default=None, description="Pass as `?cursor=` (with the same other parameters) for the next page; "
              "null on the last page. Every page of a listing reads the layer version of its first page.")


class EpisodeOut(BaseModel):
    index: int = Field(description="0-based position in the conversation.")
    start: datetime
    end: datetime
    speakers: list[str]
    boundary: str = Field(description="Why it starts: `start`, `gap` (6 hours or more) or `topic` (a topic shift).")
    summary: str = Field(description="Extractive: the episode's most central and informative sentences.")
    event_ids: list[int] = Field(description="Event ids (`id` of GET /v1/events/{id}) in time order.")
    summary_event_ids: list[int] = Field(description="The events the summary quotes.")


class EpisodesOut(BaseModel):
    conversation_id: str
    layer_version: str | None = _VERSION
    episodes: list[EpisodeOut]
    next_cursor: str | None = _NEXT

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "conversation_id": "conv-1", "layer_version": "consolidation/1+assertions/1",
        "episodes": [{"index": 0, "start": "2024-03-02T10:00:00Z", "end": "2024-03-02T10:05:00Z",
                      "speakers": ["Ana", "Ben"], "boundary": "start",
                      "summary": "Ana: We moved to Denver last spring.", "event_ids": [1, 2, 3],
                      "summary_event_ids": [1]}],
    }]})


class AssertionOut(BaseModel):
    id: str = Field(description="Stable id: `<event id>#<n>`.")
    event_id: int
    entity: str
    attribute: str = Field(description="lives_in, works_at, job_title, favourite:book, opinion:hiking, ...")
    value: str
    time: datetime
    negated: bool
    superseded_by: str | None = Field(description="The id of the later assertion that replaced this one, if any.")
    valid_from: date | None = Field(default=None, description="The day the claim takes effect when its words name "
                                    "one (\"I start there on May 6\"); null: from the day it was said (`time`).")


class ContradictionOut(BaseModel):
    id: str
    entity: str
    attribute: str
    kind: str = Field(description="`update` (a new value) or `retraction` (a negation of the old one).")
    earlier_event_id: int
    later_event_id: int
    earlier_value: str
    later_value: str
    earlier_time: datetime
    later_time: datetime


class TimelineOut(BaseModel):
    conversation_id: str
    layer_version: str | None = _VERSION
    assertions: list[AssertionOut]
    contradictions: list[ContradictionOut]
    next_cursor: str | None = _NEXT

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "conversation_id": "conv-1", "layer_version": "consolidation/1+assertions/1",
        "assertions": [
            {"id": "1#0", "event_id": 1, "entity": "Ana", "attribute": "lives_in", "value": "Boston",
             "time": "2023-01-05T09:00:00Z", "negated": False, "superseded_by": "7#0"},
            {"id": "7#0", "event_id": 7, "entity": "Ana", "attribute": "lives_in", "value": "Denver",
             "time": "2024-03-02T10:00:00Z", "negated": False, "superseded_by": None}],
        "contradictions": [
            {"id": "ct:1#0>7#0", "entity": "Ana", "attribute": "lives_in", "kind": "update", "earlier_event_id": 1,
             "later_event_id": 7, "earlier_value": "Boston", "later_value": "Denver",
             "earlier_time": "2023-01-05T09:00:00Z", "later_time": "2024-03-02T10:00:00Z"}],
    }]})


class GraphNodeOut(BaseModel):
    id: str = Field(description="`en:` entity, `fp:` facet point (one fact), `fc:` facet, `ep:` episode.")
    kind: str = Field(description="entity | facet_point | facet | episode")
    label: str
    event_id: int | None = Field(default=None, description="For a facet point: the event it was extracted from.")
    data: dict[str, Any] = Field(default_factory=dict, description="Entity type and aliases, a fact's dates, ...")


class GraphEdgeOut(BaseModel):
    src: str
    dst: str
    type: str = Field(description="belongs_to | involves_entity | temporal | evolution | causal")
    weight: float
    meta: dict[str, Any] = Field(default_factory=dict)


class GraphOut(BaseModel):
    conversation_id: str
    layer_version: str | None = _VERSION
    nodes: list[GraphNodeOut]
    edges: list[GraphEdgeOut]
    stats: dict[str, Any] = Field(description="Seeds, counts on this page, whether the walk was cut at the page's "
                                              "end, the page's `offset` in the walk, and the whole conversation's "
                                              "graph statistics.")
    next_cursor: str | None = _NEXT

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "conversation_id": "conv-1", "layer_version": "graph/2+graph_extract/1",
        "nodes": [{"id": "en:ana", "kind": "entity", "label": "Ana", "data": {"kind": "person"}},
                  {"id": "fp:1:0", "kind": "facet_point", "label": "We moved to Denver last spring.", "event_id": 1,
                   "data": {"topic": "home"}}],
        "edges": [{"src": "en:ana", "dst": "fp:1:0", "type": "belongs_to", "weight": 1.0, "meta": {}}],
        "stats": {"seeds": ["en:ana"], "nodes": 2, "edges": 1, "truncated": False},
    }]})


class TopicOut(BaseModel):
    term: str
    weight: float


class SpeakerProfileOut(BaseModel):
    speaker: str
    message_count: int
    first_seen: datetime
    last_seen: datetime
    topics: list[TopicOut] = Field(description="Distinctive keywords (tf-idf against the other speakers).")
    addresses: dict[str, int] = Field(description="Whom they reply to or name, and how often.")
    mentions: dict[str, int] = Field(description="Named things and relatives they talk about.")
    style: dict[str, float] = Field(description="Style features: mean length, question/exclamation/emoji rates, ...")
    attributes: dict[str, list[str]] = Field(description="Their standing assertions: lives_in -> [Denver].")
    layer_version: str
    style_vector: list[float] | None = Field(
        default=None, description="256-d hashed character n-gram style vector (only with ?include_vectors=true).")


class SpeakersOut(BaseModel):
    conversation_id: str
    layer_version: str | None = _VERSION
    speakers: list[SpeakerProfileOut]
    next_cursor: str | None = _NEXT

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "conversation_id": "conv-1", "layer_version": "engrams/1",
        "speakers": [{"speaker": "Ana", "message_count": 12, "first_seen": "2024-03-02T10:00:00Z",
                      "last_seen": "2024-03-09T18:00:00Z", "topics": [{"term": "denver", "weight": 0.2}],
                      "addresses": {"Ben": 11}, "mentions": {"Denver": 2}, "style": {"mean_chars": 48.5},
                      "attributes": {"lives_in": ["Denver"]}, "layer_version": "engrams/1"}],
    }]})
