"""The rule layers' pure work on whole conversations, timed in one process (no database, no model):
every event's assertions and the timeline (`extract_all`, `build_timeline`), the surprise index
(`score_conversation`) and the speaker profiles (`build_profiles`), in the order a layer build
asks for them. For A/B runs of the layer code (another checkout on PYTHONPATH):

    python -m bench.layer_speed --dataset beam --conversations 2
"""
from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="beam", choices=["locomo", "beam", "longmemeval"])
    p.add_argument("--conversations", type=int, default=2, help="the first N conversations of the data set")
    p.add_argument("--data-dir", type=Path, default=None)
    a = p.parse_args(argv)
    ds = load(a.dataset, a.data_dir or default_data_dir())
    started, events, assertions = time.perf_counter(), 0, 0
    for conv in ds.conversations[: a.conversations]:
        evs = [LayerEvent(t.event_id, t.speaker, t.content, t.occurred_at, conv.id, seq=i)
               for i, t in enumerate(conv.turns)]
        found = extract_all(evs)
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
