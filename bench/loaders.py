"""Every benchmark data set by name (the harness's `--benchmark`)."""
from __future__ import annotations

from pathlib import Path

from bench.datasets import Dataset, load_beam, load_locomo
from bench.longmemeval import load_longmemeval

LOADERS = {"locomo": load_locomo, "beam": load_beam, "longmemeval": load_longmemeval}
BENCHMARKS = tuple(LOADERS)


def load(benchmark: str, data_dir: Path) -> Dataset:
    """The named data set: locomo, beam or longmemeval."""
    return LOADERS[benchmark](data_dir)
