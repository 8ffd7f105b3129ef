"""A development database of the benchmark data, built once in-process, for fitting on the train
split and choosing on the validation split without going through HTTP.

    python -m bench.evaldb build [--var-dir var/eval] [--longmemeval N] [--split all|train|validation]
    python -m bench.evaldb relayer [--var-dir var/eval]    # the rule layers again, with the code on the path

Every LoCoMo dev and BEAM 100K conversation (and, with `--longmemeval N`, the haystacks of the first
N LongMemEval_S questions of each split kept by `--split`; `--longmemeval all` for every one) is written through the service's writer into a tenant
`eval` of an embedded PostgreSQL under `--var-dir`, with every layer built, exactly as
`bench/golden.py` does. Conversation ids are `<dataset>/<conversation id>`. Later processes attach
with `attach(var_dir)`, which returns the tenant id; the split manifest (`bench/splits.json`) says
which conversations each split holds.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.golden import ROOT, _env, ingest

TENANT = "eval"


def attach(var_dir: Path | None = None) -> int:
    """Point this process at the built database (embedded server under `var_dir`, default
    $PALIMPSEST_EVAL_DIR or var/eval); the tenant id."""
    var_dir = var_dir or Path(os.environ.get("PALIMPSEST_EVAL_DIR") or ROOT / "var" / "eval")
    _env(var_dir.resolve())
    from sqlalchemy import select

    from app.runtime import install
    from app.storage.db import connect
    from app.storage.models import Tenant

    install()
    with connect() as conn:
        tid = conn.execute(select(Tenant.id).where(Tenant.name == TENANT)).scalar_one_or_none()
    if tid is None:
        raise SystemExit(f"no tenant {TENANT!r} under {var_dir}: run python -m bench.evaldb build first")
    return int(tid)


def built_conversations(engine: Any, tenant_id: int, dataset: str) -> set[str]:
    """The conversations of `dataset` the database holds (LongMemEval_S: the haystacks it was built
    with, a subset of the split)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        rows = conn.execute(text("SELECT DISTINCT conversation_id FROM layer_runs WHERE tenant_id = :t "
                                 "AND conversation_id LIKE :p"), {"t": tenant_id, "p": f"{dataset}/%"}).all()
    return {r[0].split("/", 1)[1] for r in rows}


def build(data_dir: Path, var_dir: Path, longmemeval: int = 0, split: str = "all", lme_only: bool = False) -> int:
    from bench.datasets import load_beam, load_locomo, subset
    from bench.splits import select

    if var_dir.exists():
        raise SystemExit(f"{var_dir} exists: stop its server and remove it first (each build starts fresh)")
    var_dir.mkdir(parents=True)
    _env(var_dir.resolve())
    # `split` keeps one split's conversations (validation alone: a quicker database to choose on)
    sets = [] if lme_only else [load_locomo(data_dir), load_beam(data_dir)]
    if split != "all":
        sets = [select(ds, split) for ds in sets]
    if longmemeval:
        from bench.longmemeval import load_longmemeval

        lme = load_longmemeval(data_dir)
        keep: list[str] = []
        for part in (("train", "validation") if split == "all" else (split,)):
            keep += [c.id for c in select(lme, part).conversations[:longmemeval]]
        sets.append(subset(lme, only=tuple(keep)))
    t0 = time.perf_counter()
    tid = ingest(sets, tenant=TENANT)
    print(f"built {var_dir} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return tid


def relayer(var_dir: Path) -> int:
    """Rebuild the rule layers (consolidation, surprise, engrams, graph) of every conversation of a built
    database in place, with the code on the path, keeping its verbatim log and its vectors: a changed layer
    measured without embedding everything again (about half a build's time). Checked at stop 37: a validation
    database built with one code and relayered with another scores exactly as one built with the other.
    Returns the number of conversations."""
    from sqlalchemy import text

    from app.services.layers import REBUILT_BY_ALL, rebuild
    from app.storage.db import connect, refresh_statistics

    tid = attach(var_dir)
    with connect() as conn:
        convs = [r[0] for r in conn.execute(text("SELECT DISTINCT conversation_id FROM events WHERE tenant_id = :t "
                                                 "ORDER BY 1"), {"t": tid})]
    t0 = time.perf_counter()
    for i, cid in enumerate(convs, 1):
        for layer in REBUILT_BY_ALL:
            rebuild(layer, tid, cid, prune=True)
        print(f"[{time.perf_counter() - t0:6.0f} s] {i}/{len(convs)} {cid}", file=sys.stderr, flush=True)
    refresh_statistics()
    return len(convs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["build", "relayer"])
    p.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "eval")
    p.add_argument("--longmemeval", type=lambda v: 10**9 if v == "all" else int(v), default=0,
                   help="LongMemEval_S: the haystacks of this many questions per split (or 'all')")
    p.add_argument("--longmemeval-only", action="store_true", help="LongMemEval_S haystacks alone (no LoCoMo, BEAM)")
    p.add_argument("--split", choices=["all", "train", "validation"], default="all",
                   help="conversations of this split only")
    a = p.parse_args(argv)
    os.environ.setdefault("PALIMPSEST_LOG_LEVEL", "WARNING")
    if a.command == "relayer":
        relayer(a.var_dir.resolve())
        return 0
    build(a.data_dir, a.var_dir.resolve(), a.longmemeval, a.split, a.longmemeval_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
