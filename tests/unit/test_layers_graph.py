"""The memory graph (PRISM §3.2, App. C.1) from the rule-based extractor on a hand-made conversation."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.consolidation import segment_episodes
from app.domain.layers.events import LayerEvent, jsonable
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.graph_extract import (
    Extractor,
    RuleExtractor,
    topic_of,
)
from app.domain.layers.graph_entities import merge_entities

MON = datetime(2023, 5, 8, 14, 0, tzinfo=timezone.utc)  # Monday 8 May 2023
LINES = [
    # session 1
    ("Caroline", "Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful.", MON),
    ("Melanie", "That's great, Caroline! My sister lives in Boston and volunteers there too.", MON),
    ("Caroline", "I live in Boston as well. Last Saturday I painted a sunrise at Lake Tahoe.", MON),
    ("Melanie", "I skipped the pottery class because my son was sick.", MON),
    ("Melanie", "Thanks!", MON),
    # session 2, a month later
    ("Caroline", "Big news, Mel: we moved to Denver two weeks ago!", MON + timedelta(days=30)),
    ("Melanie", "Wow! The kids and I are going camping next month.", MON + timedelta(days=30)),
    ("Caroline", "The new job at Denver Health is stressful. That's why I started running.", MON + timedelta(days=30)),
]


def events():
    return [LayerEvent(f"D{i}", s, t, at + timedelta(minutes=i), "conv-1", seq=i) for i, (s, t, at) in enumerate(LINES)]


@pytest.fixture(scope="module")
def encode():
    from app.adapters.embedder import get_embedder

    return get_embedder().encode


@pytest.fixture(scope="module")
def fragment(encode):
    evs = events()
    return RuleExtractor(encode).extract(evs, segment_episodes(evs))


def _ent(fr, name):
    return next(e for e in fr.entities if e.name == name)


def test_rule_extractor_satisfies_the_protocol():
    ex: Extractor = RuleExtractor()
    assert ex.name == "rules"
    assert isinstance(choose_extractor(), RuleExtractor)


def test_entities_speakers_nicknames_places_and_relatives(fragment):
    names = {e.name: e for e in fragment.entities}
    assert names["Caroline"].kind == "person" and names["Melanie"].kind == "person"
    assert "Mel" in names["Melanie"].aliases  # "Mel" merged into the speaker
    assert "Mel" not in names
    assert names["Boston"].kind == "place" and names["Denver"].kind == "place"
    assert names["Lake Tahoe"].kind == "place"
    assert names["Denver Health"].kind in ("organization", "place", "thing")
    assert "Melanie's sister" in names and "Melanie's son" in names
    assert names["LGBTQ"].mentions == 1


def test_facet_points_carry_entities_and_resolved_dates(fragment):
    fps = {fp.text: fp for fp in fragment.facet_points}
    assert "Thanks!" not in fps  # small talk is not a fact
    support = next(fp for fp in fragment.facet_points if "support group" in fp.text)
    assert support.event_id == "D0"
    assert _ent(fragment, "Caroline").id in support.entity_ids
    assert [(m.surface, m.date) for m in support.dates] == [("yesterday", "2023-05-07")]
    sunrise = next(fp for fp in fragment.facet_points if "sunrise" in fp.text)
    assert sunrise.dates[0].date == "2023-05-06" and sunrise.reference_date == "2023-05-06"
    moved = next(fp for fp in fragment.facet_points if "Denver two weeks ago" in fp.text)
    assert moved.dates[0].range_start == "2023-05-22"  # two weeks before 7 June 2023, week of
    camping = next(fp for fp in fragment.facet_points if "camping" in fp.text)
    assert camping.dates[0].range_start == "2023-07-01"  # next month, said on 7 June
    assert fragment.stats["time"]["relative_resolved_share"] == 1.0


def test_facets_group_by_episode_entity_and_topic(fragment):
    assert {fc.episode_id for fc in fragment.facets} == {ep.id for ep in fragment.episodes}
    members = [m for fc in fragment.facets for m in fc.facet_point_ids]
    assert sorted(members) == sorted(fp.id for fp in fragment.facet_points)  # each point in one facet
    pottery = next(fp for fp in fragment.facet_points if "pottery" in fp.text)
    assert pottery.topic == "art"
    assert topic_of("my son was sick and went to the hospital") == "health"


def test_all_five_edge_types(fragment):
    by_type = Counter(e.type for e in fragment.edges)
    assert set(by_type) == {"belongs_to", "involves_entity", "temporal", "evolution", "causal"}
    assert fragment.stats["edges"] == dict(by_type)
    ids = {fp.id: fp for fp in fragment.facet_points}
    # causal: "because my son was sick" caused skipping pottery; "That's why" points to the sentence before
    causal = [(ids[e.src].text.rstrip("."), ids[e.dst].text, e.meta["cue"]) for e in fragment.edges if e.type == "causal"]
    assert ("my son was sick", "I skipped the pottery class", "because") in causal
    assert any("stressful" in c and "started running" in eff and cue == "that's why" for c, eff, cue in causal)
    # evolution: Boston -> Denver for Caroline's residence
    evo = [e for e in fragment.edges if e.type == "evolution"]
    assert any(e.meta["from"] == "Boston" and e.meta["to"] == "Denver" and e.meta["changed"] for e in evo)
    # temporal: Caroline's facts chained in the order of the dates they are about
    caro = _ent(fragment, "Caroline").id
    chain = [e for e in fragment.edges if e.type == "temporal" and e.meta["entity"] == caro]
    assert chain and all(e.meta["from"] <= e.meta["to"] for e in chain)
    # hierarchy: every facet point belongs to its facet, every facet to its episode
    bt = {(e.src, e.dst) for e in fragment.edges if e.type == "belongs_to"}
    assert all((fp.id, fp.facet_id) in bt for fp in fragment.facet_points)
    assert all((fc.id, fc.episode_id) in bt for fc in fragment.facets)
    inv = {(e.src, e.dst) for e in fragment.edges if e.type == "involves_entity"}
    assert all((fp.id, en) in inv for fp in fragment.facet_points for en in fp.entity_ids)


def test_entity_merge_by_embedding_cosine(encode):
    mentions = [("LGBTQ community", "thing", "a"), ("the LGBTQ community", "thing", "b"),
                ("LGBTQ+ community", "thing", "c"), ("Boston", "place", "d"), ("Denver", "place", "e")]
    key_to_id, ents = merge_entities(mentions, ["Ann", "Anna"], encode)
    assert key_to_id["lgbtq community"] == key_to_id["lgbtq+ community"]  # cosine >= 0.90
    assert key_to_id["boston"] != key_to_id["denver"]
    assert key_to_id["ann"] != key_to_id["anna"]  # two speakers are never merged
    merged = next(e for e in ents if e.id == key_to_id["lgbtq community"])
    assert merged.mentions == 3
    # without an encoder only exact normalised names merge ("the LGBTQ community" ~ "LGBTQ community")
    key_to_id2, _ = merge_entities(mentions, [], None)
    assert key_to_id2["lgbtq community"] != key_to_id2["lgbtq+ community"]


def test_fragment_serialises_to_json(fragment):
    data = json.loads(json.dumps(jsonable(fragment)))
    assert data["layer_version"] == "graph/5" and len(data["edges"]) == len(fragment.edges)
    assert data["facet_points"][0]["dates"][0]["date"] == "2023-05-07"


def test_ids_are_stable_across_runs():
    a = RuleExtractor().extract(events())
    b = RuleExtractor().extract(list(reversed(events())))
    assert [fp.id for fp in a.facet_points] == [fp.id for fp in b.facet_points]
    assert sorted((e.src, e.dst, e.type) for e in a.edges) == sorted((e.src, e.dst, e.type) for e in b.edges)


def test_facet_ids_do_not_collide_with_an_entity_named_none():
    from datetime import datetime, timezone

    from app.domain.layers.events import LayerEvent
    from app.domain.layers.graph_extract import RuleExtractor

    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    events = [LayerEvent(str(i), "user", text, t) for i, text in enumerate([
        "None of the options worked, so I picked None as the label.",
        "I think none is fine, None appears twice in the config.",
        "The weather was nice today.",
    ])]
    frag = RuleExtractor().extract(events)
    keys = [f.id for f in frag.facets] + [e.id for e in frag.entities] + [p.id for p in frag.facet_points]
    assert len(keys) == len(set(keys))


# technical prose: every list item opens with a capitalised verb, and some of those verbs sit after a
# colon mid-sentence too ("Next: Ensure ..."), which used to make them "known names" everywhere
TECH = [
    ("user", "How do I deploy the Flask app on Render? I want to ensure sessions survive restarts."),
    ("assistant", "Steps: Ensure the secret key is set. Use a managed Postgres. Ensure the worker restarts."),
    ("assistant", "Next: Ensure migrations run first, then use gunicorn to serve Flask and ensure logs persist."),
    ("user", "Thanks. I'll use Render and ensure the key stays secret; Priya reviews the deploy."),
    ("assistant", "Good plan. Use environment variables, and ask Priya to check the API limits."),
]


def _tech_events():
    return [LayerEvent(f"T{i}", s, t, MON + timedelta(minutes=i), "conv-t", seq=i) for i, (s, t) in enumerate(TECH)]


def test_common_words_are_those_mostly_written_in_lower_case():
    from app.domain.layers.text import common_words

    common = common_words(t for _, t in TECH)
    assert {"ensure", "use"} <= common  # lower case about as often as capitalised
    assert not {"priya", "flask", "render"} & common  # names are (almost) never lower case
    assert "api" not in common  # an acronym has no lower-case letters after its capital to count


def test_capitalised_ordinary_words_are_not_entities_but_names_still_are():
    facts = RuleExtractor().facts(_tech_events())
    names = Counter(n for f in facts for n, _ in f.entities)
    assert not {"Ensure", "Use", "Next", "Steps"} & set(names), names
    assert names["Priya"] == 2 and names["Render"] >= 2 and names["Flask"] >= 2
    assert names["API"] == 1
    # a multi-word run keeps an ordinary word: it is part of a name there
    from app.domain.layers.text import capitalised_spans

    assert capitalised_spans("We met at the Use Case Summit.", common=frozenset({"use"})) == ["Use Case Summit"]
