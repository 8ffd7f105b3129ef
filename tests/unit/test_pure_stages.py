"""Pure stage functions on hand-made data: writer planning, weighted RRF, budgeted assembly."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from app.domain.event import Event, plan_batch
from app.domain.retrieval.assemble import AssemblyPlan, ContextItem, assemble, render_line
from app.domain.retrieval.fusion import weighted_rrf


def ev(conv: str, eid: str | None) -> Event:
    return Event(conversation_id=conv, speaker="a", content="x", event_id=eid)


def test_plan_batch_writes_each_client_id_once():
    batch = [ev("c", "1"), ev("c", "2"), ev("c", "1"), ev("d", "1"), ev("c", None), ev("c", None)]
    to_write, repeats = plan_batch(batch)
    assert to_write == [0, 1, 3, 4, 5]  # same id in another conversation is another event
    assert repeats == {2: 0}


def test_rrf_rewards_agreement_between_signals():
    fused = weighted_rrf({"lexical": [1, 2, 3], "dense": [3, 4, 1]}, k=60)
    ids = [d for d, _ in fused]
    assert ids[:2] == [1, 3]  # found by both signals
    assert abs(dict(fused)[1] - (1 / 61 + 1 / 63)) < 1e-12


def test_rrf_weights_and_switched_off_signal():
    fused = weighted_rrf({"lexical": [1], "dense": [2]}, {"lexical": 0.5, "dense": 2.0}, k=60)
    assert [d for d, _ in fused] == [2, 1]
    only_dense = weighted_rrf({"lexical": [1], "dense": [2]}, {"lexical": 0.0, "dense": 1.0})
    assert [d for d, _ in only_dense] == [2]


@given(st.lists(st.integers(0, 50), unique=True, max_size=20), st.lists(st.integers(0, 50), unique=True, max_size=20))
def test_rrf_is_a_sorted_union(a, b):
    fused = weighted_rrf({"x": a, "y": b})
    assert {d for d, _ in fused} == set(a) | set(b)
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)


def _items(n: int) -> list[ContextItem]:
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    # ranked best first, but occurring in reverse order of rank
    return [ContextItem(i, "Ana", f"message number {i} " + "word " * i, t0 - timedelta(minutes=i)) for i in range(n)]


def words(text: str) -> int:
    return len(text.split())


def test_assemble_respects_budget_and_orders_by_time():
    items = _items(6)
    costs = [words(render_line(it)) for it in items]
    budget = costs[0] + costs[1] + costs[3]
    ctx = assemble(items, budget, words, plan=AssemblyPlan(notice=False))
    assert ctx.tokens <= budget
    assert ctx.tokens == words(ctx.text)
    assert 0 in ctx.included and 1 in ctx.included
    lines = ctx.text.splitlines()
    assert lines == sorted(lines)  # timestamps first: time order


def test_assemble_skips_an_item_too_long_and_keeps_shorter_ones():
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    long = ContextItem(1, "A", "long " * 100, t)
    short = ContextItem(2, "B", "short", t)
    ctx = assemble([long, short], 20, words, plan=AssemblyPlan(notice=False))
    assert ctx.included == frozenset({2})


def test_assemble_empty_budget_returns_nothing():
    ctx = assemble(_items(3), 1, words)
    assert ctx.text == "" and ctx.tokens == 0 and not ctx.included


def test_bm25_prefers_rare_terms_and_more_coverage():
    from app.domain.retrieval.lexical import bm25

    docs = [
        (1, {"went": 1, "store": 1}),
        (2, {"went": 1, "denver": 1}),
        (3, {"went": 1, "park": 1}),
        (4, {"went": 1, "denver": 1, "ski": 1}),
    ]
    ranked = bm25(["went", "denver", "ski"], docs, n_docs=10, avgdl=2.0)
    assert [pk for pk, _ in ranked][:2] == [4, 2]  # rare terms outweigh the common "went"
    scores = dict(ranked)
    assert scores[1] == scores[3] < scores[2]
    # a given length (the tf lists only the query's terms) counts, not the size of the tf
    longer = dict(bm25(["denver"], [(2, {"denver": 1}), (5, {"denver": 1})], n_docs=10, avgdl=2.0,
                       lengths={2: 2, 5: 8}))
    assert longer[2] > longer[5]


def test_assemble_adds_neighbours_of_top_evidence_and_a_notice():
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    q = ContextItem(10, "Ben", "what city?", t)
    a = ContextItem(11, "Ana", "Denver", t + timedelta(minutes=1))
    far = [ContextItem(20 + i, "X", "filler " * 5, t + timedelta(days=i + 1)) for i in range(5)]
    budget = sum(words(render_line(x)) for x in (a, q, far[0])) + words("[99 more matching events were left out to fit the token budget.]")
    ctx = assemble([a, *far], budget, words, neighbours={11: [q]}, plan=AssemblyPlan(direct=1, neighbour_of=1))
    assert ctx.included == frozenset({11, 10, 20})
    assert ctx.reasons == {11: "direct evidence", 10: "next to #11", 20: "ranked candidate"}
    assert ctx.text.splitlines()[0].endswith("Ben: what city?")  # time order: the question first
    assert ctx.text.splitlines()[-1] == "[4 more matching events were left out to fit the token budget.]"
    assert ctx.tokens == words(ctx.text) <= budget


def test_neighbours_take_only_the_room_the_ranked_candidates_leave():
    """Room for one more line: a ranked candidate takes it before a neighbour of the evidence; with no
    candidate left to add (a thin ranking), the neighbour gets it."""
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    q = ContextItem(10, "Ben", "what city?", t)
    a = ContextItem(11, "Ana", "Denver", t + timedelta(minutes=1))
    other = ContextItem(20, "X", "also Denver", t + timedelta(days=2))
    budget = sum(words(render_line(x)) for x in (a, other))
    plan = AssemblyPlan(direct=1, neighbour_of=1, notice=False)
    deep = assemble([a, other], budget, words, neighbours={11: [q]}, plan=plan)
    assert deep.reasons == {11: "direct evidence", 20: "ranked candidate"}
    thin = assemble([a], budget, words, neighbours={11: [q]}, plan=plan)
    assert thin.reasons == {11: "direct evidence", 10: "next to #11"}


def test_an_episode_summary_stands_in_for_evidence_that_does_not_fit():
    from app.domain.retrieval.assemble import SummaryItem, render_summary

    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    long = ContextItem(1, "A", "we talked about the trip " * 30, t)
    also = ContextItem(3, "A", "more of the trip " * 30, t + timedelta(minutes=1))
    short = ContextItem(2, "B", "ok", t + timedelta(days=1))
    summary = SummaryItem(4, "c", "A planned a trip to Oslo in June.", t, t + timedelta(hours=1))
    ctx = assemble([long, short, also], 30, words, plan=AssemblyPlan(direct=3, notice=False),
                   summaries={1: summary, 3: summary})
    assert ctx.missing_direct == [1, 3] and ctx.included == frozenset({2})
    assert ctx.summaries == [summary]  # one episode, once, although two of its turns were missing
    assert ctx.text.splitlines()[0] == render_summary(summary)  # in time order, before the next day
    assert ctx.tokens == words(ctx.text) <= 30
    without = assemble([long, short, also], 30, words, plan=AssemblyPlan(direct=3, notice=False))
    assert without.summaries == [] and "Summary" not in without.text


def test_an_event_listed_twice_by_a_signal_counts_once_in_fusion():
    from app.domain.retrieval.fusion import first_occurrences

    graph = [(7, 0.9), (7, 0.8), (3, 0.5), (7, 0.1), (5, 0.05)]  # event 7 through three graph nodes
    assert first_occurrences(graph) == [(7, 0.9), (3, 0.5), (5, 0.05)]
    fused = dict(weighted_rrf({"graph": [pk for pk, _ in first_occurrences(graph)], "dense": [3, 7]},
                              {"graph": 0.4, "dense": 1.0}))
    assert fused[3] > fused[7]  # dense prefers 3; duplicates of 7 no longer outvote it


def test_common_terms_score_but_do_not_find():
    from app.domain.retrieval.lexical import finding_terms

    shares = {"went": 0.3, "realli": 0.12, "denver": 0.001}
    assert finding_terms(["denver", "went", "ski"], shares, 0.05) == ["denver", "ski"]  # unlisted: rare
    assert finding_terms(["went", "realli"], shares, 0.05) == ["realli"]  # all common: the rarest still finds
    assert finding_terms(["went"], shares, 1.0) == ["went"]



def test_finding_terms_stay_within_the_expected_match_budget():
    from app.domain.retrieval.lexical import finding_terms

    shares = {"denver": 0.001, "hike": 0.004, "trail": 0.005, "went": 0.3}
    terms = ["denver", "hike", "ski", "trail", "went"]
    # 1M events: denver ~1,000 rows, hike ~4,000, trail ~5,000; "ski" is unlisted (rarer than any listed)
    assert finding_terms(terms, shares, 0.01, 1_000_000, 5_000) == ["denver", "hike", "ski"]
    assert finding_terms(terms, shares, 0.01, 1_000_000, 2_000) == ["denver", "ski"]
    assert finding_terms(terms, shares, 0.01, 1_000_000, None) == ["denver", "hike", "ski", "trail"]  # share rule only
    assert finding_terms(terms, shares, 0.01, 10_000, 5_000) == ["denver", "hike", "ski", "trail"]  # small: all fit
    # the rarest term finds even when it alone is over the budget
    assert finding_terms(["hike", "trail"], shares, 0.01, 1_000_000, 100) == ["hike"]



def _compact(**kw) -> AssemblyPlan:
    return AssemblyPlan(notice=False, compact_stamps=True, **kw)


def test_compact_stamps_say_the_date_once_per_day_the_time_once_per_minute_and_fit_more_turns():
    t = datetime(2024, 3, 5, 18, 0, tzinfo=timezone.utc)
    same_day = [ContextItem(i, "Ana", f"turn {i}", t + timedelta(seconds=20 * i)) for i in range(6)]  # 3 minutes
    next_day = ContextItem(9, "Ben", "ok", t + timedelta(days=1))
    items = [*same_day, next_day]
    budget = sum(words(render_line(it)) for it in same_day)  # six lines with their full stamps: no seventh
    plain = assemble(items, budget, words, plan=AssemblyPlan(direct=7, notice=False))
    assert plain.included == frozenset(range(6))
    compact = assemble(items, budget, words, plan=_compact(direct=7))
    assert compact.included == frozenset({*range(6), 9})  # the room the repeated stamps took holds one more
    assert compact.text.splitlines() == [
        "[2024-03-05 18:00] Ana: turn 0", "Ana: turn 1", "Ana: turn 2",
        "[18:01] Ana: turn 3", "Ana: turn 4", "Ana: turn 5",
        "[2024-03-06 18:00] Ben: ok"]
    assert compact.tokens == words(compact.text) <= budget


def test_compact_stamps_cost_the_same_whichever_line_of_a_day_is_taken_first():
    t = datetime(2024, 3, 5, 9, 0, tzinfo=timezone.utc)
    late = ContextItem(1, "Ana", "later that day", t + timedelta(hours=8))
    early = ContextItem(2, "Ben", "in the morning", t)
    # the later turn ranks first; the morning turn is written first, with the date
    exact = words(render_line(early)) + words(render_line(late, form="time"))
    ctx = assemble([late, early], exact, words, plan=_compact(direct=2))
    assert ctx.text.splitlines() == ["[2024-03-05 09:00] Ben: in the morning", "[17:00] Ana: later that day"]
    assert ctx.tokens == words(ctx.text) == exact
    assert assemble([late, early], exact - 1, words, plan=_compact(direct=2)).included == frozenset({1})


def test_compact_stamps_open_a_day_with_its_summary():
    from app.domain.retrieval.assemble import SummaryItem, render_summary

    t = datetime(2024, 1, 1, 10, 0, tzinfo=timezone.utc)
    long = ContextItem(1, "A", "we talked about the trip " * 30, t)
    later = ContextItem(2, "B", "ok then", t + timedelta(hours=2))
    summary = SummaryItem(4, "c", "A planned a trip to Oslo in June.", t, t + timedelta(hours=1))
    ctx = assemble([long, later], 40, words, plan=_compact(direct=2), summaries={1: summary})
    assert ctx.text.splitlines() == [render_summary(summary), "[2024-01-01 12:00] B: ok then"]
    assert ctx.tokens == words(ctx.text) <= 40


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 180), st.integers(1, 6)), min_size=1, max_size=12),
       st.integers(0, 60))
def test_compact_stamps_never_overflow_and_count_exactly(spec, budget):
    t = datetime(2024, 5, 1, 8, 0, tzinfo=timezone.utc)
    items = [ContextItem(i, "Ana", "w " * n, t + timedelta(days=d, minutes=m)) for i, (d, m, n) in enumerate(spec)]
    ctx = assemble(items, budget, words, plan=AssemblyPlan(direct=len(items), compact_stamps=True))
    assert ctx.tokens == words(ctx.text) <= max(budget, 0)
