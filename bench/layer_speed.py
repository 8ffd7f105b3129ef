"""The rule layers' pure work on whole conversations, timed in one process (no database, no model):
every event's assertions and the timeline (`extract_all`, `build_timeline`), the surprise index
(`score_conversation`) and the speaker profiles (`build_profiles`), in the order a layer build
asks for them. With `--graph`, the graph layer's full build instead (`graph_build._build_graph`
less its reads and writes, with the rules and without the name encoder): the fact fold over every
event, the assembly and its rows, `--repeat` times over the same conversations (their episodes and
assertions, which the graph reads from consolidation, made once before the clock starts). For A/B
runs of the layer code (another checkout on PYTHONPATH):

    python -m bench.layer_speed --dataset beam --conversations 2
    python -m bench.layer_speed --graph --dataset beam --conversations 2 --repeat 3

The timeline's claims are the rules' joined with the shipped span model's, as the service makes them
(`app.adapters.span_model`), when the code has one; `--rules-only` leaves it out.
"""
from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

from app.domain.layers.assertions import extract_all
from app.domain.layers.consolidation import build_timeline
from app.domain.layers.engrams import build_profiles
from app.domain.layers.events import LayerEvent
from app.domain.layers.surprise import score_conversation
from bench.datasets import default_data_dir
from bench.loaders import load


def graph(convs: list[list[LayerEvent]], repeat: int) -> None:
    """The graph layer's pure full build, `repeat` times over each conversation."""
    from app.domain.layers import graph_fold
    from app.domain.layers.episodes import segment_episodes
    from app.domain.layers.graph_extract import RuleExtractor
    from app.domain.layers.graph_fold import FactFold
    from app.domain.layers.graph_inc import Assembly
    from app.domain.layers.graph_rows import mention_dict

    full = {"delta": False} if "delta" in inspect.signature(Assembly.update).parameters else {}  # (older code)
    read = [(evs, segment_episodes(evs), extract_all(evs)) for evs in convs]
    started, nodes, edges = time.perf_counter(), 0, 0
    for _ in range(repeat):
        for evs, episodes, assertions in read:
            fold = FactFold(graph_fold.LOOKAHEAD, RuleExtractor())
            turn = [fold.add(e) for e in evs]  # each turn's time mentions, for its signal row (None: older code)
            asm = Assembly("graph")
            meta = [(e.id, e.speaker, e.occurred_at.isoformat(), e.seq) + (() if t is None else ([mention_dict(m) for m in t],))
                    for e, t in zip(evs, turn)]
            asm.update(meta, fold.closed_facts(), fold.tail_facts(), episodes, assertions, None, **full)
            n, ed, _ = asm.rows()
            nodes, edges = nodes + len(n), edges + len(ed)
    s = time.perf_counter() - started
    events = repeat * sum(len(evs) for evs in convs)
    print(f"graph: {events} events, {nodes} nodes, {edges} edges, {s:.2f} s, {events / s:.1f} events/s", file=sys.stderr)


def _span_model():  # noqa: ANN202
    """The shipped span model, or None (none shipped, or an older checkout on PYTHONPATH without one)."""
    try:
        from app.adapters.span_model import installed_span_model
    except ImportError:
        return None
    return installed_span_model()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="beam", choices=["locomo", "beam", "longmemeval"])
    p.add_argument("--conversations", type=int, default=2, help="the first N conversations of the data set")
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--graph", action="store_true", help="time the graph layer's full build instead")
    p.add_argument("--repeat", type=int, default=1, help="with --graph: builds per conversation")
    p.add_argument("--rules-only", action="store_true", help="the rules' claims without the span model's")
    a = p.parse_args(argv)
    spans = None if a.rules_only else _span_model()
    ds = load(a.dataset, a.data_dir or default_data_dir())
    if a.graph:
        graph([[LayerEvent(t.event_id, t.speaker, t.content, t.occurred_at, conv.id, seq=i)
                for i, t in enumerate(conv.turns)] for conv in ds.conversations[: a.conversations]], a.repeat)
        return 0
    started, events, assertions = time.perf_counter(), 0, 0
    for conv in ds.conversations[: a.conversations]:
        evs = [LayerEvent(t.event_id, t.speaker, t.content, t.occurred_at, conv.id, seq=i)
               for i, t in enumerate(conv.turns)]
        found = extract_all(evs, spans=spans) if spans is not None else extract_all(evs)
        build_timeline(found)
        score_conversation(evs)
        build_profiles(evs)
        events += len(evs)
        assertions += len(found)
    s = time.perf_counter() - started
    print(f"{events} events, {assertions} assertions, {s:.2f} s, {events / s:.1f} events/s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
