"""What the graph build's speed-ups must not change: a full assembly without its row delta writes
the rows of one made with it; the topic lexicon's lookup picks the topic the per-topic count picked
(most hits, the first listed of those tied); the memoised token cleaning of the name spans."""
from __future__ import annotations

from app.domain.layers.episodes import segment_episodes
from app.domain.layers.assertions import extract_all
from app.domain.layers.graph_extract import TOPICS, RuleExtractor, topic_of
from app.domain.layers.graph_fold import FactFold
from app.domain.layers.graph_inc import Assembly
from app.domain.layers.text import capitalised_spans, words
from tests.unit.test_incremental_graph import fake_encode, make_log


def _counted_topic(text: str) -> str:
    """The lexicon topic as counted before the lookup: per topic, the words it lists."""
    ws = [w.lower() for w in words(text)]
    best, best_n = "general", 0
    for name, lex in TOPICS.items():
        n = sum(w in lex for w in ws)
        if n > best_n:
            best, best_n = name, n
    return best


def test_topic_of_picks_the_most_hits_and_the_first_listed_on_a_tie():
    assert topic_of("Nothing to see here.") == "general"
    assert topic_of("My SISTER and my Mom") == "family"
    assert topic_of("my boss loves the gym") == "work"  # one hit each: work is listed before fitness
    assert topic_of("gym, yoga and a new job") == "fitness"
    for text in ["I went to the beach with my dog and my mom", "Photos of the band at the concert, book club",
                 "run run work work", "party with friends after the game", "the event volunteers' parade"]:
        assert topic_of(text) == _counted_topic(text)


def test_names_keep_their_titles_and_possessives():
    assert capitalised_spans("We saw Dr. Okafor at Hartley's Pharmacy in St. Brigid's.", models=True) == \
        ["Dr. Okafor", "Hartley's Pharmacy", "St. Brigid"]
    assert capitalised_spans("Ana's cat met Ana.") == ["Ana"]


def _assembled(delta: bool):  # noqa: ANN202
    evs = make_log(7, 60)
    fold = FactFold(8, RuleExtractor(fake_encode))
    for e in evs:
        fold.add(e)
    asm = Assembly("v")
    out = asm.update([(e.id, e.speaker, e.occurred_at.isoformat(), e.seq) for e in evs], fold.closed_facts(),
                     fold.tail_facts(), segment_episodes(evs), extract_all(evs), fake_encode, delta=delta)
    return out, asm


def test_a_full_assembly_without_its_delta_has_the_same_rows():
    listed, with_delta = _assembled(True)
    none, without = _assembled(False)
    assert none is None and listed is not None
    assert without.rows() == with_delta.rows() and without.stats() == with_delta.stats()
    nodes, edges, signals = with_delta.rows()
    assert sorted(listed.node_keys) == sorted(n["key"] for n in nodes)  # the delta listed every row
    assert len(listed.edges) == len(edges) and len(listed.signals) == len(signals)
