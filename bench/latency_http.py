"""Query latency through the HTTP API, paired A/B (issue 17): two API servers, one database.

    python -m bench.latency_http --base /tmp/lat-base --rounds 3

Starts the API of `--base` (a checkout of the commit compared against, e.g.
`git worktree add --detach /tmp/lat-base <commit>`) and the API of this checkout as `palimpsest run`
starts it (uvicorn, one process each, no worker: each answer's heat bump is queued and stays queued, so
the rows the ranker reads do not move), both on the seeded database of `bench.latency seed`. Every
question of `bench.latency` goes to both servers in turn (which goes first alternates by question and
round), and, a third arm, to `run_query` in this process (this checkout's code), so one run says both
what a change did through HTTP and what the HTTP path costs over the pipeline itself, under the same load.

Timed at the client (httpx, keep-alive, same machine). Per arm and conversation: p50/p95/mean of the
total, of the sum of the service's `timings_ms` (the pipeline), and of the rest (total - pipeline: the
request's way in and out). Identity: base's and new's response bodies are compared whole, `timings_ms`
by its keys only; the in-process arm's ranked ids and context against new's. Writes
`bench/results/latency-http-<tag>-<timestamp>.{json,md}`.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.latency import BUDGET, ROOT, TENANT, TOP_K, _commit, _env, asker, conversations, percentile, \
    warmup_questions

ARMS = ("base", "new")


def start_api(checkout: Path, env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    from app.embedded import free_port, wait_http

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.api.main:app", "--host", "127.0.0.1",
                             "--port", str(port), "--no-access-log"],
                            env=dict(env, PYTHONPATH=str(checkout)), cwd=checkout, start_new_session=True,
                            stdout=log.open("ab"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/readyz", proc=proc)
    return proc, url


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """A response body with what is timing, not content, reduced: `timings_ms` to its stage names."""
    return body | {"timings_ms": sorted(body.get("timings_ms") or {})}


def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    from app import embedded
    from app.runtime import install
    from app.storage import tenants
    from app.storage.db import make_engine
    from bench.harness import DEFAULT_API_KEY

    _env(args.var_dir)
    db_url, redis_url = embedded.ensure_postgres(args.var_dir), embedded.ensure_redis(args.var_dir)
    engine = make_engine(db_url)
    with engine.begin() as conn:
        tenants.ensure_bootstrap_key(conn, TENANT, DEFAULT_API_KEY)
    engine.dispose()
    env = dict(os.environ, PALIMPSEST_DATABASE_URL=db_url, PALIMPSEST_REDIS_URL=redis_url,
               PALIMPSEST_HEAT_ON_QUERY="queue")  # the server's default: the bump queued for a worker
    os.environ["PALIMPSEST_DATABASE_URL"] = db_url
    install()
    tid = json.loads((args.var_dir / "seed.json").read_text())["tenant_id"]
    _, questions = conversations(args.data_dir)
    procs, clients = [], {}
    (args.var_dir / "logs").mkdir(exist_ok=True)
    try:
        for name, checkout in (("base", args.base.resolve()), ("new", ROOT)):
            proc, url = start_api(checkout, env, args.var_dir / "logs" / f"api-{name}.log")
            procs.append(proc)
            clients[name] = httpx.Client(base_url=url, timeout=120,
                                         headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"})
        ask_inproc, setup = asker(tid)

        def ask(arm: str, conv: str, text: str) -> tuple[float, dict[str, Any]]:
            if arm == "inproc":
                out = ask_inproc(conv, text)
                return out["timings"]["total"], out
            started = time.perf_counter()
            r = clients[arm].post("/v1/query", json={"query": text, "conversation_id": conv, "top_k": TOP_K,
                                                     "token_budget": BUDGET})
            r.raise_for_status()
            return (time.perf_counter() - started) * 1000.0, r.json()

        arms = (*ARMS, "inproc")
        for conv, _, text in warmup_questions(args.data_dir):
            for arm in arms:
                ask(arm, conv, text)
        gc.collect()
        rows: list[dict[str, Any]] = []
        diffs: list[str] = []
        for r in range(args.rounds):
            for i, (conv, qid, text) in enumerate(questions):
                order = arms[(i + r) % 3:] + arms[:(i + r) % 3]
                bodies = {}
                for arm in order:
                    ms, body = ask(arm, conv, text)
                    stages = {k: v for k, v in body["timings"].items() if k != "total"} if arm == "inproc" \
                        else body["timings_ms"]
                    rows.append({"round": r, "arm": arm, "conversation": conv, "qid": qid, "total": round(ms, 3),
                                 "pipeline": round(sum(stages.values()), 3)})
                    bodies[arm] = body
                if r == 0:
                    key = f"{conv}/{qid}"
                    if comparable(bodies["base"]) != comparable(bodies["new"]):
                        diffs.append(f"{key}: base and new bodies differ")
                    if [it["event_id"] for it in bodies["new"]["items"]] != \
                            [e for e, _ in bodies["inproc"]["ranked"]] \
                            or bodies["new"]["context"] != bodies["inproc"]["context"]:
                        diffs.append(f"{key}: in-process and new differ")
            print(f"round {r + 1} done", file=sys.stderr)
    finally:
        for c in clients.values():
            c.close()
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
    return {"base": args.base_label or _commit(args.base), "new": _commit(ROOT), "rounds": args.rounds, "budget": BUDGET,
            "top_k": TOP_K, "setup": setup, "differences": diffs, "load_avg": os.getloadavg(), "rows": rows,
            "summary": summary(rows)}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for conv in dict.fromkeys(r["conversation"] for r in rows):
        out[conv] = {}
        for arm in dict.fromkeys(r["arm"] for r in rows):
            mine = [r for r in rows if r["conversation"] == conv and r["arm"] == arm]
            out[conv][arm] = {"n": len(mine)} | {
                k: {"p50": statistics.median(v), "p95": percentile(v, 95), "mean": statistics.fmean(v)}
                for k, v in (("total", [r["total"] for r in mine]), ("pipeline", [r["pipeline"] for r in mine]),
                             ("rest", [r["total"] - r["pipeline"] for r in mine]))}
    return out


def report(result: dict[str, Any]) -> str:
    lines = [f"# Query latency through the HTTP API, paired A/B: base {result['base']} against new {result['new']}",
             "", f"`python -m bench.latency_http` — {result['rounds']} rounds; each question asked of the base's "
             "API, the new API and `run_query` in the client's process (new code) in turn, the order rotating; "
             f"token_budget {result['budget']}, top_k {result['top_k']}; learned ranker {result['setup']['learned']}, "
             f"cross-encoder {result['setup']['rerank']}, no LLM, heat bumps queued (no worker). Client: httpx, "
             f"keep-alive, same machine. 1-minute load average at the end: {result['load_avg'][0]:.2f} "
             "(2 cores, shared).", "",
             "`pipeline`: the sum of the response's `timings_ms` (in process: of `run_query`'s timings); "
             "`rest`: total - pipeline, the request's way in and out (for `inproc`: ~0).", "",
             f"Identity (base and new bodies whole, `timings_ms` by stage names; in process against new: ranked "
             f"ids and context; every question): **{len(result['differences'])} differences**.", ""]
    for conv, by in result["summary"].items():
        b, n, i = by["base"], by["new"], by["inproc"]
        lines += [f"## {conv} ({b['n']} timed queries per arm)", "",
                  "| ms | base | new | new / base | in process |", "| --- | ---: | ---: | ---: | ---: |"]
        for part in ("total", "pipeline", "rest"):
            for k in ("p50", "p95", "mean"):
                ratio = f"{n[part][k] / b[part][k]:.2f}" if b[part][k] > 0 else "–"
                lines.append(f"| {part} {k} | {b[part][k]:.1f} | {n[part][k]:.1f} | {ratio} | {i[part][k]:.1f} |")
        lines.append("")
    lines += [f"- {d}" for d in result["differences"][:50]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", type=Path, required=True, help="the checkout compared against")
    p.add_argument("--base-label", help="the base's name in the report (default: its git commit)")
    p.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "latency")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tag", default="ab")
    p.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    a = p.parse_args(argv)
    a.var_dir = a.var_dir.resolve()
    result = run(a)
    out = a.out_dir / f"latency-http-{a.tag}-{time.strftime('%Y%m%d-%H%M%S')}"
    out.with_suffix(".json").write_text(json.dumps(result, indent=0))
    md = report(result)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 1 if result["differences"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
