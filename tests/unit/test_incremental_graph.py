"""The memory graph's fold (graph/4, #18 item 4): the rule extractor's statistics and the closed
events' facts, stopped after any batch, saved (`to_dict`, through JSON), restored and fed the rest,
give exactly what one pass over the whole log gives: the same facts, and the same graph once
assembled (entities with their ids, facets, the five edge types), the name vectors kept between
batches (names encoded once). Plus the fold's promises: a closed event's facts never change, and a
log no longer than the lookahead is extracted with the whole log's statistics, as before graph/4.

The assembly kept between batches (`graph_inc.Assembly`): fed the same random batches, with the
fold's state stored as a head and chunks appended per batch (through JSON) and the assembly either
held or made again from them (a worker that did not run the last batch), the rows it says a batch
touched, applied to a store, end equal to the rows of `graph_model.assemble` over the whole log
(nodes, edge groups, per-event signals), with consolidation's episodes changing under it.
"""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.layers.assertions import extract_all
from app.domain.layers.events import LayerEvent, jsonable
from app.domain.layers.graph_diff import NameVectors
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.graph_fold import FactFold, fact_to_dict, fold_facts
from app.domain.layers.episodes import Episode
from app.domain.layers.graph_inc import Assembly
from app.domain.layers.graph_model import assemble
from app.domain.layers.graph_rows import fragment_rows, mention_dict
from app.domain.layers.timeturns import resolve_turns

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
LINES = [
    "My friend Priya Raman runs the Tallow Studio pottery class downtown.",
    "Priya taught me glazing at Tallow last spring, the pottery class is great.",
    "Last Saturday we went camping near Lake Tahoe.",
    "Camping at Lake Tahoe sounds lovely. That's why I bought a tent.",
    "Ensure the key is set before you deploy the service.",
    "ensure you rotate the key, and use a pool for the database.",
    "Use a pool when the API gets busy.",
    "I live in Boston and I work at Google.",
    "We moved to Denver last month because of my new job!",
    "My sister Clara visited us in Denver, she loves the hiking trails.",
    "Clara says the hiking trails near Boulder are even better.",
    "Dr. Okafor said my knee needs two more weeks of rest.",
    "Okafor is a great doctor, my husband Tom agrees.",
    "Tom and I are going to the Harvest Festival on Friday.",
    # dates read with the turns before them (timeturns.DateThread, folded with the log)
    "Gran turns ninety on the 22nd of November.",
    "The 22nd is a Saturday, so lunch? I can't help the Friday before.",
    "Morning Ana, Cy from the garden centre here.",
    # a first name said short (aliases.nicknames): paired from an index of names by their first letters
    "Bronwen Ellis from the choir is coming on Friday.",
    "I told Bron about the pottery class, she loved it.",
]


def make_log(seed: int, n: int) -> list[LayerEvent]:
    rng = np.random.default_rng(seed)
    out, t = [], T0
    for i in range(n):
        t += timedelta(minutes=int(rng.integers(0, 90)))
        out.append(LayerEvent(str(1000 + i), ["Ana", "Ben", "Cy"][int(rng.integers(3 if i > n // 2 else 2))],
                              f"{LINES[int(rng.integers(len(LINES)))]} ({i})", t, "c1", seq=i))
    return out


def fake_encode(keys: list[str]) -> np.ndarray:
    """Deterministic name vectors: close for names sharing their first three letters."""
    out = []
    for k in keys:
        v = np.zeros(32)
        v[hash(k[:3]) % 32] = 1.0
        v[zlib_hash(k) % 32] += 0.3
        out.append(v / np.linalg.norm(v))
    return np.array(out)


def zlib_hash(s: str) -> int:
    import zlib

    return zlib.crc32(s.encode())


def roundtrip(d: dict) -> dict:
    return json.loads(json.dumps(d))


def folded_in_batches(evs: list[LayerEvent], cuts: list[int], lookahead: int):
    by_id = {e.id: e for e in evs}
    state, vectors, encoded = None, {"keys": [], "dim": 0, "vecs": ""}, Counter()

    def encode(keys: list[str]) -> np.ndarray:
        encoded.update(keys)
        return fake_encode(keys)

    for a, b in zip([0, *cuts], [*cuts, len(evs)]):
        rules = RuleExtractor()
        fold = (FactFold(lookahead, rules) if state is None
                else FactFold.from_dict(state, lambda ids: [by_id[i] for i in ids], rules))
        for e in evs[a:b]:
            fold.add(e)
        names = NameVectors.from_dict(vectors, encode)
        facts = fold.facts()
        frag = assemble("c1", evs[:b], facts, [], names, assertions=extract_all(evs[:b]))
        state, vectors = roundtrip(fold.to_dict()), roundtrip(names.to_dict())
    return facts, frag, encoded


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), lookahead=st.sampled_from([1, 3, 8, 40]),
       data=st.data())
def test_folding_in_batches_equals_one_pass(seed, n, lookahead, data):
    evs = make_log(seed, n)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=6)))
    facts, frag, encoded = folded_in_batches(evs, cuts, lookahead)
    _, one = fold_facts(evs, RuleExtractor(), lookahead)
    assert [fact_to_dict(f) for f in facts] == [fact_to_dict(f) for f in one]
    assert [f.event_id for f in facts] == [f.event_id for f in one]
    whole = assemble("c1", evs, one, [], NameVectors(fake_encode), assertions=extract_all(evs))
    assert jsonable(frag) == jsonable(whole)
    assert max(encoded.values(), default=1) == 1  # each name encoded once over all the batches


def test_closed_facts_never_change_and_a_short_log_uses_the_whole_log():
    evs = make_log(3, 60)
    fold = FactFold(8, RuleExtractor())
    kept: dict[str, list] = {}
    for e in evs:
        fold.add(e)
        for eid, facts in fold.closed:
            assert kept.setdefault(eid, facts) == facts
    assert len(fold.closed) == 52 and len(fold.tail) == 8
    short = evs[:30]
    _, folded = fold_facts(short, RuleExtractor(), 40)
    assert [fact_to_dict(f) for f in folded] == [fact_to_dict(f) for f in RuleExtractor().facts(short)]


def test_a_later_statistic_does_not_reach_a_closed_event():
    """"Ensure" is a name until the log writes it in lower case twice: an event closed before that
    keeps what it was extracted with; a rebuild gives the same (the fold, not the whole log)."""
    evs = [LayerEvent(str(i), "Ana", c, T0 + timedelta(minutes=i), "c1", seq=i) for i, c in enumerate([
        "We met Ensure yesterday.", "It was fine.", "ensure the key is set.", "ensure the pool is used.",
        "Ensure the key rotates."])]
    _, facts = fold_facts(evs, RuleExtractor(), 1)
    first = [n for f in facts if f.event_id == "0" for n, _ in f.entities]
    assert "Ensure" in first
    last = [n for f in facts if f.event_id == "4" for n, _ in f.entities]
    assert "Ensure" not in last


def episodes_of(evs: list[LayerEvent]) -> list[Episode]:
    """Episodes as consolidation might give them for this prefix of the log: groups of 5, but the
    last 6 events, still undecided, in groups of 3 (so events move to another episode as the log
    grows), each summary its last event's start."""
    starts = [i for i in range(len(evs)) if (i % 3 == 0 if i >= len(evs) - 6 else i % 5 == 0)]
    groups = [evs[a:b] for a, b in zip(starts, [*starts[1:], len(evs)])]
    return [Episode(f"ep:{g[0].id}", "c1", i, tuple(x.id for x in g), g[0].occurred_at, g[-1].occurred_at,
                    (), "start", g[-1].content[:12], ()) for i, g in enumerate(groups)]


def canon(nodes: list[dict], edges: list[dict], signals: list[dict]) -> tuple:
    return ({n["key"]: json.dumps(n, sort_keys=True, default=str) for n in nodes},
            sorted(json.dumps(e, sort_keys=True, default=str) for e in edges),
            {x["event_pk"]: json.dumps(x, sort_keys=True, default=str) for x in signals})


def one_pass_rows(evs: list[LayerEvent], lookahead: int) -> tuple:
    _, facts = fold_facts(evs, RuleExtractor(), lookahead)
    frag = assemble("c1", evs, facts, episodes_of(evs), NameVectors(fake_encode), assertions=extract_all(evs))
    turn = [[mention_dict(m) for m in ms] for _, ms in resolve_turns((e.content, e.occurred_at) for e in evs)]
    return canon(*fragment_rows(frag, [(int(e.id), e.speaker, t) for e, t in zip(evs, turn)], "v"))


def assembled_in_batches(evs: list[LayerEvent], cuts: list[int], lookahead: int, cold: list[bool]):
    by_id = {e.id: e for e in evs}
    head, chunks, held = None, [], None
    nodes: dict[str, dict] = {}
    edges: dict[tuple, list[dict]] = {}
    signals: dict[int, dict] = {}
    touched = []
    for n, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(evs)])):
        rules = RuleExtractor()
        if head is None or cold[n]:  # the fold from its head and chunks, the assembly made again
            closed = [c for ch in chunks for c in ch["closed"]]
            fold = (FactFold(lookahead, rules) if head is None
                    else FactFold.from_dict({**head["fold"], "closed": closed}, lambda ids: [by_id[i] for i in ids], rules))
            names = NameVectors.from_dicts([ch["names"] for ch in chunks], fake_encode)
            asm, old = Assembly("v"), [m for ch in chunks for m in ch["events"]]
        else:
            fold, names, asm = held
            old = []
        closed_from, names_from = len(fold.closed), len(names.cache)
        new = [(e.id, e.speaker, e.occurred_at.isoformat(), e.seq, [mention_dict(m) for m in fold.add(e)])
               for e in evs[a:b]]
        delta = asm.update([tuple(m) for m in old] + new, fold.closed_facts(closed_from if not old and head else 0),
                           fold.tail_facts(), episodes_of(evs[:b]), extract_all(evs[:b]), names)
        if old or head is None:
            nodes, edges, signals = {}, {}, {}
            rows = asm.rows()
            delta.nodes, delta.edges, delta.signals = rows
        else:
            touched.append(len(delta.nodes))
        for k in delta.node_keys:
            nodes.pop(k, None)
        for t in delta.edge_triples:
            edges.pop(tuple(t), None)
        for r in delta.nodes:
            nodes[r["key"]] = r
        for r in delta.edges:
            edges.setdefault((r["src"], r["dst"], r["type"]), []).append(r)
        for r in delta.signals:
            signals[r["event_pk"]] = r
        chunks.append(roundtrip({"closed": fold.closed_data(closed_from), "events": new,
                                 "names": names.to_dict(names_from)}))
        head = roundtrip({"fold": fold.to_dict(closed=False)})
        held = (fold, names, asm)
    return canon(list(nodes.values()), [r for g in edges.values() for r in g], list(signals.values())), asm, touched


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), lookahead=st.sampled_from([1, 3, 8, 40]),
       data=st.data())
def test_the_assembly_in_batches_equals_one_pass(seed, n, lookahead, data):
    evs = make_log(seed, n)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=6)))
    cold = data.draw(st.lists(st.booleans(), min_size=len(cuts) + 1, max_size=len(cuts) + 1))
    got, asm, _ = assembled_in_batches(evs, cuts, lookahead, cold)
    want = one_pass_rows(evs, lookahead)
    assert got == want
    assert canon(*asm.rows()) == want


def test_a_batch_touches_the_rows_near_it():
    """120 events, then batches of 2: each batch rewrites a few dozen nodes, not the graph's hundreds."""
    evs = make_log(11, 130)
    got, asm, touched = assembled_in_batches(evs, list(range(120, 130, 2)), 8, [False] * 6)
    assert got == one_pass_rows(evs, 8)
    assert len(asm.rows()[0]) > 400 and max(touched) < 100
