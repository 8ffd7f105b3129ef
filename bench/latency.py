"""Query latency on two conversation sizes (issue 17): p50/p95 end to end and per stage, and a paired A/B.

    python -m bench.latency seed                     # once: write and index both conversations (var/latency)
    python -m bench.latency ask --out /tmp/a.json    # one pass of every question, on the code on PYTHONPATH
    python -m bench.latency ab --base /tmp/lat-base  # rounds alternating the base checkout and this one
    python -m bench.latency pin --profile /tmp/p     # one pass under pyinstrument, a profile per conversation

The two conversations: a LoCoMo-size one (conv-41 of the train split, 663 short turns between two
friends) and a BEAM-500K-size one (800 long turns, ~1.8 M characters: BEAM 100K train conversations
beam-11 and beam-12 and the first 20 turns of beam-1, one after the other, each moved to start a day
after the previous one ended). Seeding writes them with the service's writer and builds every layer
synchronously (as `bench.golden` does) into an embedded PostgreSQL under `--var-dir`; `refresh_statistics`
runs once after. Questions: 40 of conv-41's, spread evenly, and the 40 of beam-11 and beam-12.

`ask` runs each question once through `app.services.query.run_query` in this process, with the recipe
a fresh clone runs (learned fusion ranker on, no cross-encoder unless one is installed, no LLM, heat
off), token_budget 2000, top_k 10, after 20 untimed questions per conversation (`warmup_questions`);
it records per question the wall time, the service's per-stage `timings`, the ranked event ids and
the context text.
`ab` spawns `ask` processes alternately on `--base` (a checkout of the commit compared against, e.g.
`git worktree add --detach /tmp/lat-base <commit>`) and on this checkout, `--rounds` times each, on the
same database, checks that both hand back the same ranked ids, scores, context and abstention for every
question, and writes `bench/results/latency-<tag>-<timestamp>.{json,md}` with ratios new/base.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TENANT = "latency"
BUDGET = 2000
TOP_K = 10
LOCOMO_CONV = "conv-41"
LOCOMO_QUESTIONS = 40
BEAM_PARTS = (("beam-11", None), ("beam-12", None), ("beam-1", 20))  # (conversation, turns kept)
BEAM_ID = "beam-500k"


def conversations(data_dir: Path):  # noqa: ANN201
    """(datasets to ingest, questions [(dataset/conversation, qid, question)]); deterministic."""
    from app.locomo import Conversation
    from bench.datasets import Dataset, load_beam, load_locomo, spread, subset

    loc = subset(load_locomo(data_dir), only=(LOCOMO_CONV,))
    beam = load_beam(data_dir)
    by_id = {c.id: c for c in beam.conversations}
    turns, start = [], None
    for cid, keep in BEAM_PARTS:
        part = by_id[cid].turns[:keep] if keep else by_id[cid].turns
        shift = timedelta(0) if start is None else start - part[0].occurred_at
        turns += [replace(t, event_id=f"{cid}:{t.event_id}", occurred_at=t.occurred_at + shift) for t in part]
        start = turns[-1].occurred_at + timedelta(days=1)
    big = Dataset("beam", [Conversation(BEAM_ID, turns)], [])
    questions = [(f"locomo/{LOCOMO_CONV}", q.qid, q.question)
                 for q in spread([q for q in loc.questions if q.conversation_id == LOCOMO_CONV], LOCOMO_QUESTIONS)]
    questions += [(f"beam/{BEAM_ID}", q.qid, q.question) for q in beam.questions
                  if q.conversation_id in {c for c, keep in BEAM_PARTS if keep is None}]
    return [loc, big], questions


WARMUP = 20  # untimed questions per conversation before the timed ones


def warmup_questions(data_dir: Path) -> list[tuple[str, str, str]]:
    """Questions asked before timing, none of them timed: 20 other questions of conv-41, and 20 of BEAM
    train conversations beam-13 and beam-14 asked of the BEAM-size one. A fresh process's first queries
    load models and fill caches, and the objects that leaves make the collector run full passes of
    100-400 ms for a while (9 in the first 84 queries, 1 in the next 80): a server's steady state is
    what is timed."""
    from bench.datasets import load_beam, load_locomo, spread

    timed = {qid for _, qid, _ in conversations(data_dir)[1]}
    loc = [q for q in load_locomo(data_dir).questions if q.conversation_id == LOCOMO_CONV and q.qid not in timed]
    beam = [q for q in load_beam(data_dir).questions if q.conversation_id in ("beam-13", "beam-14")]
    return [(f"locomo/{LOCOMO_CONV}", q.qid, q.question) for q in spread(loc, WARMUP)] + \
        [(f"beam/{BEAM_ID}", q.qid, q.question) for q in spread(beam, WARMUP)]


def _env(var_dir: Path) -> None:
    from bench.golden import _env as golden_env

    golden_env(var_dir)
    os.environ.pop("PALIMPSEST_RERANKER_MODEL_PATH", None)  # a fresh clone's default: the var dir's, if trained


def seed(data_dir: Path, var_dir: Path) -> None:
    from bench.golden import ingest

    if var_dir.exists():
        raise SystemExit(f"{var_dir} exists: stop its server and remove it first")
    var_dir.mkdir(parents=True)
    _env(var_dir)
    datasets, questions = conversations(data_dir)
    t0 = time.perf_counter()
    tid = ingest(datasets, tenant=TENANT)
    sizes = {f"{ds.name}/{c.id}": {"turns": len(c.turns), "chars": sum(len(t.content) for t in c.turns)}
             for ds in datasets for c in ds.conversations}
    (var_dir / "seed.json").write_text(json.dumps({"tenant_id": tid, "conversations": sizes,
                                                    "questions": len(questions),
                                                    "seed_s": round(time.perf_counter() - t0, 1)}, indent=1))
    print(f"seeded {sizes} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def asker(tenant_id: int):  # noqa: ANN201
    from app.adapters.embedder import get_embedder
    from app.domain.recipe import Recipe
    from app.services.query import QueryInput, installed_reranker, run_query
    from app.settings import get_settings
    from app.storage.candidates import Scope
    from app.storage.db import get_engine

    engine = get_engine()
    recipe = Recipe.from_settings(get_settings())
    embedder = get_embedder()
    reranker = installed_reranker() if recipe.rerank else None

    def ask(conversation_id: str, question: str) -> dict[str, Any]:
        started = time.perf_counter()
        with engine.connect() as conn:
            out = run_query(conn, QueryInput(question, Scope(tenant_id=tenant_id, conversation_id=conversation_id),
                                             TOP_K, BUDGET), recipe, embedder, reranker=reranker, llm=None)
        total = (time.perf_counter() - started) * 1000.0
        return {"ranked": [[it.event.event_id, round(float(it.score), 7)] for it in out.items],
                "context": out.context, "abstain": bool(out.abstain),
                "timings": dict(out.timings) | {"total": round(total, 3)}}

    return ask, {"rerank": reranker is not None, "learned": recipe.learned}


def ask_all(data_dir: Path, var_dir: Path, profile: Path | None = None) -> dict[str, Any]:
    from app.runtime import install

    _env(var_dir)
    install()
    tid = json.loads((var_dir / "seed.json").read_text())["tenant_id"]
    _, questions = conversations(data_dir)
    ask, setup = asker(tid)
    for conv, _, text in warmup_questions(data_dir):  # the models, the plans, the caches, the collector
        ask(conv, text)
    gc.collect()
    answers = []
    for conv in dict.fromkeys(c for c, _, _ in questions):
        profiler = None
        if profile is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005)
            profiler.start()
        for c, qid, text in questions:
            if c == conv:
                answers.append({"conversation": c, "qid": qid, "question": text} | ask(c, text))
        if profiler is not None:
            profiler.stop()
            profile.mkdir(parents=True, exist_ok=True)
            (profile / f"{conv.replace('/', '_')}.txt").write_text(profiler.output_text(unicode=False, show_all=False))
            (profile / f"{conv.replace('/', '_')}.html").write_text(profiler.output_html())
    return {"setup": setup, "answers": answers}


def http_pass(data_dir: Path, var_dir: Path) -> dict[str, Any]:
    """The same questions through the HTTP API of the service started as `palimpsest run` starts it
    (no beat), timed at the client: what a caller waits."""
    import httpx

    from app.embedded import ServiceStack
    from app.storage import tenants
    from app.storage.db import make_engine
    from bench.harness import DEFAULT_API_KEY

    stack = ServiceStack(var_dir=var_dir, beat=False, log_dir=var_dir / "logs",
                         extra_env={"PALIMPSEST_LLM_BASE_URL": "", "PALIMPSEST_LOG_LEVEL": "WARNING"})
    _, questions = conversations(data_dir)
    answers = []
    try:
        stack.start()
        # The API queues each answer's heat bump (what it times); with no worker to apply them, the
        # seeded rows, which the ranker reads, stay as the in-process passes saw them.
        stack.kill("worker", signal.SIGTERM)
        engine = make_engine(stack.database_url)
        with engine.begin() as conn:
            tenants.ensure_bootstrap_key(conn, TENANT, DEFAULT_API_KEY)
        engine.dispose()
        with httpx.Client(base_url=stack.base_url, timeout=120,
                          headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"}) as client:
            def ask(conv: str, text: str) -> tuple[float, dict[str, Any]]:
                started = time.perf_counter()
                r = client.post("/v1/query", json={"query": text, "conversation_id": conv, "top_k": TOP_K,
                                                   "token_budget": BUDGET})
                r.raise_for_status()
                return (time.perf_counter() - started) * 1000.0, r.json()

            for conv, _, text in warmup_questions(data_dir):
                ask(conv, text)
            for c, qid, text in questions:
                ms, body = ask(c, text)
                answers.append({"conversation": c, "qid": qid, "ranked": [[it["event_id"], 0.0] for it in body["items"]],
                                "context": body["context"], "abstain": bool(body.get("abstain")),
                                "timings": dict(body.get("timings_ms") or {}) | {"total": round(ms, 3)}})
    finally:
        stack.stop()
    return {"answers": answers}


# ---------------------------------------------------------------- A/B and the report


def differences(a: list[dict[str, Any]], b: list[dict[str, Any]], tol: float = 1e-6) -> list[str]:
    """Where two passes over the same questions differ: ranked ids, scores (beyond `tol`), context, abstention."""
    out = []
    for x, y in zip(a, b, strict=True):
        key = f"{x['conversation']}/{x['qid']}"
        if [r[0] for r in x["ranked"]] != [r[0] for r in y["ranked"]]:
            out.append(f"{key}: ranked ids differ")
        elif max((abs(p[1] - q[1]) for p, q in zip(x["ranked"], y["ranked"])), default=0.0) > tol:
            out.append(f"{key}: scores differ")
        if x["context"] != y["context"]:
            out.append(f"{key}: context differs")
        if x["abstain"] != y["abstain"]:
            out.append(f"{key}: abstain differs")
    return out


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))]


def summarise(passes: list[dict[str, Any]], conversation: str) -> dict[str, Any]:
    """p50/p95 of the total and p50/mean per stage over every answer of `conversation` in `passes`."""
    rows = [a for p in passes for a in p["answers"] if a["conversation"] == conversation]
    totals = [a["timings"]["total"] for a in rows]
    stages = sorted({s for a in rows for s in a["timings"]} - {"total"})
    per_stage = {s: {"p50": statistics.median([a["timings"].get(s, 0.0) for a in rows]),
                     "mean": statistics.fmean([a["timings"].get(s, 0.0) for a in rows])} for s in stages}
    return {"n": len(rows), "p50": statistics.median(totals), "p95": percentile(totals, 95),
            "mean": statistics.fmean(totals), "stages": per_stage}


def _spawn_ask(checkout: Path, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    # run as a path, not `-m` (the base checkout has no such module) and not as a script (its folder would
    # go first on sys.path and shadow installed packages with bench/'s modules): `checkout` is sys.path[0]
    boot = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    cmd = [sys.executable, "-c", boot, str(Path(__file__).resolve()), "ask", "--out", str(out),
           "--data-dir", str(args.data_dir), "--var-dir", str(args.var_dir)]
    subprocess.run(cmd, env=env, cwd=checkout, check=True)
    return json.loads(out.read_text())


def ab(args: argparse.Namespace) -> int:
    from app import embedded

    tmp = args.var_dir / "ab"
    tmp.mkdir(exist_ok=True)
    started_pg = not embedded.postgres_running(args.var_dir)
    started_redis = not embedded.redis_running(args.var_dir)
    embedded.ensure_postgres(args.var_dir)
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "new": []}
    try:
        for r in range(args.rounds):
            for name, checkout in (("base", args.base), ("new", ROOT)) if r % 2 == 0 else \
                    (("new", ROOT), ("base", args.base)):
                runs[name].append(_spawn_ask(checkout.resolve(), args, tmp / f"{name}-{r}.json"))
                print(f"round {r + 1}: {name} done", file=sys.stderr)
        http = http_pass(args.data_dir, args.var_dir) if args.http else None
    finally:
        if started_redis and embedded.redis_running(args.var_dir):
            embedded.stop_redis(args.var_dir)
        if started_pg:
            embedded.stop_postgres(args.var_dir)
    diffs = differences(runs["base"][0]["answers"], runs["new"][0]["answers"])
    seed_info = json.loads((args.var_dir / "seed.json").read_text())
    convs = list(seed_info["conversations"])
    result = {"base": _commit(args.base), "new": _commit(ROOT), "rounds": args.rounds, "budget": BUDGET,
              "top_k": TOP_K, "seed": seed_info, "setup": runs["new"][0]["setup"], "differences": diffs,
              "summary": {c: {name: summarise(runs[name], c) for name in runs} for c in convs},
              "http": {c: summarise([http], c) for c in convs} if http else None,
              "http_same_context": None if not http else sum(
                  a["context"] == b["context"] for a, b in zip(http["answers"], runs["new"][0]["answers"])),
              "load_avg": os.getloadavg(), "runs": {name: slim(passes) for name, passes in runs.items()},
              "http_pass": slim([http])[0] if http else None}
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.out_dir / f"latency-{args.tag}-{stamp}"
    out.parent.mkdir(parents=True, exist_ok=True)  # a fresh --out-dir: made, not a crash after every round
    out.with_suffix(".json").write_text(json.dumps(result, indent=0))
    md = report(result)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 1 if diffs else 0


def slim(passes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pass as the results keep it: per question its timings, ranked ids and a hash of its context."""
    import hashlib

    return [{"setup": p.get("setup"), "answers": [
        {"conversation": a["conversation"], "qid": a["qid"], "timings": a["timings"], "abstain": a["abstain"],
         "ranked": [r[0] for r in a["ranked"]], "context_sha1": hashlib.sha1(a["context"].encode()).hexdigest()}
        for a in p["answers"]]} for p in passes]


def _commit(checkout: Path) -> str:
    r = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return r.stdout.strip() + ("+changes" if dirty else "")


def report(result: dict[str, Any]) -> str:
    lines = [f"# Query latency, paired A/B: base {result['base']} against new {result['new']}", "",
             f"`python -m bench.latency ab` — {result['rounds']} rounds alternating the two checkouts on one "
             f"database, one question at a time, in process (`run_query`), token_budget {result['budget']}, "
             f"top_k {result['top_k']}; recipe: learned ranker {result['setup']['learned']}, cross-encoder "
             f"{result['setup']['rerank']}, no LLM. 1-minute load average at the end: "
             f"{result['load_avg'][0]:.2f} (2 cores, shared).", "",
             f"Identity check (ranked ids, scores within 1e-6, context text, abstention; every question): "
             f"**{len(result['differences'])} differences**.", ""]
    for conv, by in result["summary"].items():
        size = result["seed"]["conversations"][conv]
        b, n = by["base"], by["new"]
        lines += [f"## {conv}: {size['turns']} turns, {size['chars']:,} characters ({b['n']} timed queries each)", "",
                  "| | base ms | new ms | new / base |", "| --- | ---: | ---: | ---: |"]
        for k in ("p50", "p95", "mean"):
            lines.append(f"| total {k} | {b[k]:.1f} | {n[k]:.1f} | {n[k] / b[k]:.2f} |")
        both = {k: {m: by[k]["stages"].get("assemble", {}).get(m, 0.0) + by[k]["stages"].get("abstain", {}).get(m, 0.0)
                    for m in ("p50", "mean")} for k in ("base", "new")}
        lines.append("| assemble + abstain, mean (the base times both as assemble) | "
                     f"{both['base']['mean']:.1f} | {both['new']['mean']:.1f} | "
                     f"{both['new']['mean'] / both['base']['mean']:.2f} |")
        for s in sorted(set(b["stages"]) | set(n["stages"])):
            bs, ns = b["stages"].get(s, {"p50": 0.0, "mean": 0.0}), n["stages"].get(s, {"p50": 0.0, "mean": 0.0})
            ratio = f"{ns['mean'] / bs['mean']:.2f}" if bs["mean"] else "–"
            lines.append(f"| {s} p50 / mean | {bs['p50']:.1f} / {bs['mean']:.1f} | {ns['p50']:.1f} / "
                         f"{ns['mean']:.1f} | {ratio} |")
        lines.append("")
    if result.get("http"):
        lines += ["## Through the HTTP API (new code only)", "",
                  "The same questions to `POST /v1/query` of the service as `palimpsest run` starts it (the API "
                  "queues each answer's heat bump; the worker is stopped so the rows stay as the in-process passes "
                  "read them), timed at the client (httpx, same machine); "
                  f"{result['http_same_context']} of the contexts are the in-process pass's, character for character.", "",
                  "| conversation | p50 ms | p95 ms | mean ms | stages p50 (service's timings_ms) |",
                  "| --- | ---: | ---: | ---: | --- |"]
        for conv, h in result["http"].items():
            st = ", ".join(f"{k} {v['p50']:.1f}" for k, v in h["stages"].items())
            lines.append(f"| {conv} | {h['p50']:.1f} | {h['p95']:.1f} | {h['mean']:.1f} | {st} |")
        lines.append("")
    for d in result["differences"][:50]:
        lines.append(f"- {d}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("seed", "ask", "ab", "pin", "report"))
    p.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "latency")
    p.add_argument("--out", type=Path, help="ask: where the pass's JSON goes; report: the ab JSON to render")
    p.add_argument("--base", type=Path, help="ab: the checkout compared against")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tag", default="ab")
    p.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    p.add_argument("--profile", type=Path, help="pin: folder for the pyinstrument profiles")
    p.add_argument("--http", action="store_true", help="ab: then one pass of the new code through the HTTP API")
    a = p.parse_args(argv)
    a.var_dir = a.var_dir.resolve()
    if a.mode == "seed":
        seed(a.data_dir, a.var_dir)
    elif a.mode == "ask":
        a.out.write_text(json.dumps(ask_all(a.data_dir, a.var_dir)))
    elif a.mode == "report":
        md = report(json.loads(a.out.read_text()))
        a.out.with_suffix(".md").write_text(md)
        print(md)
    elif a.mode == "pin":
        result = ask_all(a.data_dir, a.var_dir, profile=a.profile)
        for conv in dict.fromkeys(x["conversation"] for x in result["answers"]):
            s = summarise([result], conv)
            print(conv, f"p50 {s['p50']:.1f} p95 {s['p95']:.1f}",
                  {k: round(v["p50"], 1) for k, v in s["stages"].items()})
    else:
        if a.base is None:
            raise SystemExit("ab needs --base")
        return ab(a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
