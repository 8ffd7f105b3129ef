"""The golden file: what the default pipeline hands back for a fixed set of questions, so a change
that is meant to preserve behaviour can show that it did.

    python -m bench.golden --write     # record bench/golden/golden.json.gz (and a timings report)
    python -m bench.golden --check     # ask again on the current code and compare

The set: LoCoMo conv-26 and conv-30 (304 questions) and BEAM conversations 1 and 2 (40), every
question of each. Everything runs in this process on an embedded PostgreSQL under
`var/golden` (its own, fresh each run): the events are written by the service's writer, every
layer is built synchronously, then each question goes through the query service with the default
recipe of a fresh clone (no reranker, no LLM, no heat bump). Per question it records the ranked
event ids with their scores (top 50), the context text, whether it abstained, and its per-stage
timings and count of SQL statements (reported, not compared).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "bench" / "golden" / "golden.json.gz"
TOP = 50
BUDGET = 2000
SETS = {"locomo": ("conv-26", "conv-30"), "beam": ("beam-1", "beam-2")}
SCORE_TOL = 1e-6


def _env(var_dir: Path) -> None:
    os.environ["PALIMPSEST_VAR_DIR"] = str(var_dir)
    os.environ.pop("PALIMPSEST_DATABASE_URL", None)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("PALIMPSEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    os.environ["PALIMPSEST_RERANKER_MODEL_PATH"] = str(var_dir / "no-reranker")
    os.environ["PALIMPSEST_LLM_BASE_URL"] = ""
    os.environ["PALIMPSEST_HEAT_ON_QUERY"] = "off"
    os.environ["PALIMPSEST_LOG_JSON"] = "false"
    os.environ["PALIMPSEST_LOG_LEVEL"] = "WARNING"


def fresh_var_dir(var_dir: Path) -> Path:
    """An empty `var_dir` for this process's embedded stack (a previous run's PostgreSQL and Redis
    there stopped first), with the environment pointed at it (`_env`); the resolved path."""
    import shutil

    from app.embedded import stop_postgres, stop_redis

    var_dir = var_dir.resolve()
    if var_dir.exists():
        stop_postgres(var_dir)
        stop_redis(var_dir)
        shutil.rmtree(var_dir)
    var_dir.mkdir(parents=True)
    _env(var_dir)
    return var_dir


def embedded_database():  # noqa: ANN201
    """This process's embedded PostgreSQL (under the var dir `_env` named), started and migrated to
    head; its engine."""
    from app.runtime import database_url, install
    from app.storage.db import get_engine
    from app.storage.migrate import upgrade

    install()  # this process is its own runtime: the embedded server under var_dir
    upgrade(database_url())
    return get_engine()


def load_sets(data_dir: Path):  # noqa: ANN201
    from bench.datasets import load_beam, load_locomo, subset

    out = []
    for name, loader in (("locomo", load_locomo), ("beam", load_beam)):
        out.append(subset(loader(data_dir), only=SETS[name]))
    return out


# ---------------------------------------------------------------- the two places that call the product


def ingest(datasets, tenant: str = "golden") -> int:  # noqa: ANN001
    """Write every conversation through the writer and build every layer synchronously; the tenant id."""
    from app.domain.event import Event
    from app.services.ingest import write_batch
    from app.storage import outbox
    from app.storage import tenants
    from app.storage.db import connect, refresh_statistics
    from app.services.layers import embed_pending, process_conversation
    from app.domain.layer_registry import LAYERS

    engine = embedded_database()
    with engine.begin() as conn:
        tid = tenants.create_tenant(conn, tenant)
    for ds in datasets:
        for conv in ds.conversations:
            cid = f"{ds.name}/{conv.id}"
            events = [Event(conversation_id=cid, speaker=t.speaker, content=t.content, event_id=t.event_id,
                            role=t.role, occurred_at=t.occurred_at, metadata=t.metadata or None)
                      for t in conv.turns]
            with engine.begin() as conn:
                write_batch(conn, tid, events, list(LAYERS))
            with connect() as conn:
                todo = outbox.pending_in_conversation(conn, "embed", tid, cid)
            for i in range(0, len(todo), 256):
                embed_pending(todo[i : i + 256])
            for layer in ("consolidate", "surprise", "engrams", "graph"):
                process_conversation(layer, tid, cid, force=True)
            print(f"ingested {cid}: {len(events)} events", file=sys.stderr)
    refresh_statistics()
    return tid


def asker(tenant_id: int):  # noqa: ANN201
    """A function question -> (ranked [(conversation, event_id, score)], context, abstain, timings, statements)."""
    from sqlalchemy import event

    from app.adapters.embedder import get_embedder
    from app.services.query import QueryInput, run_query
    from app.domain.recipe import Recipe
    from app.settings import get_settings
    from app.storage.db import get_engine
    from app.storage.candidates import Scope

    engine = get_engine()
    count = [0]

    @event.listens_for(engine, "before_cursor_execute")
    def _count(*_a, **_k) -> None:  # noqa: ANN002, ANN003
        count[0] += 1

    recipe = Recipe.from_settings(get_settings())
    embedder = get_embedder()

    def ask(conversation_id: str, question: str) -> dict[str, Any]:
        count[0] = 0
        started = time.perf_counter()
        with engine.connect() as conn:
            out = run_query(conn, QueryInput(question, Scope(tenant_id=tenant_id, conversation_id=conversation_id),
                                             TOP, BUDGET), recipe, embedder, reranker=None, llm=None)
        total = (time.perf_counter() - started) * 1000.0
        return {
            "ranked": [[it.event.event_id, round(float(it.score), 7)] for it in out.items],
            "context": out.context,
            "abstain": bool(out.abstain),
            "timings": dict(out.timings) | {"total": round(total, 3)},
            "statements": count[0],
        }

    return ask


# ---------------------------------------------------------------- record / compare


def run(data_dir: Path, var_dir: Path) -> dict[str, Any]:
    var_dir = fresh_var_dir(var_dir)  # each run starts empty: a previous run's server stopped, its files gone
    datasets = load_sets(data_dir)
    t0 = time.perf_counter()
    tid = ingest(datasets)
    ingest_s = time.perf_counter() - t0
    ask = asker(tid)
    for ds in datasets:  # warm the embedder and the plans: the first question is not measured cold
        ask(f"{ds.name}/{ds.conversations[0].id}", ds.questions[0].question)
    answers = []
    for ds in datasets:
        for q in ds.questions:
            a = ask(f"{ds.name}/{q.conversation_id}", q.question)
            answers.append({"dataset": ds.name, "qid": q.qid, "conversation": q.conversation_id,
                            "question": q.question} | a)
            print(f"{len(answers)} asked", end="\r", file=sys.stderr)
    from app.embedded import stop_postgres

    stop_postgres(var_dir)
    return {"ingest_s": round(ingest_s, 1), "answers": answers}


def timings_report(result: dict[str, Any]) -> str:
    answers = result["answers"]
    stages = sorted({s for a in answers for s in a["timings"]})
    lines = ["| stage | p50 ms | mean ms |", "| --- | ---: | ---: |"]
    for s in stages:
        vals = [a["timings"].get(s, 0.0) for a in answers]
        lines.append(f"| {s} | {statistics.median(vals):.1f} | {statistics.fmean(vals):.1f} |")
    st = [a["statements"] for a in answers]
    lines.append(f"\nSQL statements per query: median {statistics.median(st):.0f}, "
                 f"min {min(st)}, max {max(st)} ({len(answers)} questions)")
    return "\n".join(lines)


def compare(golden: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Every difference of ranked ids, scores (beyond 1e-6), context text and abstention."""
    diffs: list[str] = []
    old = {(a["dataset"], a["qid"]): a for a in golden["answers"]}
    for a in now["answers"]:
        g = old.get((a["dataset"], a["qid"]))
        key = f"{a['dataset']}/{a['qid']}"
        if g is None:
            diffs.append(f"{key}: not in the golden file")
            continue
        ids_g, ids_n = [x[0] for x in g["ranked"]], [x[0] for x in a["ranked"]]
        if ids_g != ids_n:
            first = next((i for i, (x, y) in enumerate(zip(ids_g, ids_n)) if x != y), min(len(ids_g), len(ids_n)))
            diffs.append(f"{key}: ranking differs from position {first + 1}")
            continue
        worst = max((abs(x[1] - y[1]) for x, y in zip(g["ranked"], a["ranked"])), default=0.0)
        if worst > SCORE_TOL:
            diffs.append(f"{key}: scores differ by up to {worst:.2e}")
        if g["context"] != a["context"]:
            diffs.append(f"{key}: context text differs")
        if g["abstain"] != a["abstain"]:
            diffs.append(f"{key}: abstain {g['abstain']} -> {a['abstain']}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="record the golden file")
    mode.add_argument("--check", action="store_true", help="compare the current code with the golden file")
    p.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "golden")
    p.add_argument("--report", type=Path, default=None, help="where to write the timings report (markdown)")
    args = p.parse_args(argv)
    result = run(args.data_dir, args.var_dir.resolve())
    report = timings_report(result)
    print(report)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(report + "\n")
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(GOLDEN, "wt") as fh:
            json.dump(result, fh, indent=0, sort_keys=True)
        print(f"wrote {GOLDEN} ({len(result['answers'])} questions)")
        return 0
    with gzip.open(GOLDEN, "rt") as fh:
        golden = json.load(fh)
    diffs = compare(golden, result)
    for d in diffs:
        print(d)
    print(f"{len(result['answers'])} questions, {len(diffs)} differences from the golden file")
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
