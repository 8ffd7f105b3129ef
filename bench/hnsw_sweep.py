"""HNSW parameter sweep on the embedded PostgreSQL + pgvector: build time, recall vs an exact scan,
and query latency, for m x ef_construction x ef_search.

    .venv/bin/python -m bench.hnsw_sweep                          # 100k vectors, the full grid
    .venv/bin/python -m bench.hnsw_sweep --n 20000 --m 16 --ef-construction 64   # quicker

Writes bench/results/hnsw-sweep-<ts>.json and .md. The server is a private one under
`var/hnsw-sweep` (its own data directory, started here, stopped at the end unless `--keep`).

**Vectors.** Real embeddings first: every LoCoMo turn and a sample of BEAM turns, embedded by the
service's embedder as the worker embeds them (`speaker: content`; cached in the sweep's data
directory). The rest of the N rows are recombinations of those: normalise(v_a + w*v_b + 0.3*g)
with random real a, b, w ~ U(0.2, 0.5) and g a random direction. Random unit vectors would be the
wrong test: in 384 dimensions they are all nearly orthogonal and no neighbour is near, whereas
real turns crowd a narrow cone with close paraphrases; the recombinations keep that geometry
(clusters of near-duplicates around real turns, topics mixed) at any N. The **queries** are real:
LoCoMo questions, embedded the same way the query path embeds them.

**Table.** Shaped like `embeddings` (tenant, conversation, model, vector) with the same index
kinds (HNSW cosine; btree on tenant, conversation, model); all rows in one tenant, split into
conversations of `--conv-size` rows (BEAM's 10M-token chats hold ~20,000 turns).

**Measurements.** Per (m, ef_construction): build time and index size. Per ef_search, two query
shapes, each with `hnsw.iterative_scan = relaxed_order` as in the service:
- `k10`: the top 10 of the tenant (ORDER BY distance LIMIT 10): recall@10 against the exact top 10;
- `pool`: what the dense signal asks (LIMIT candidate_pool = 100): recall@10 and recall@100;
and client-side latency p50/p95 (one statement per query, warm cache). Finally, at the chosen
parameters, the conversation-filtered query the service runs for a conversation-scoped question.
The exact answers come from a brute-force scan in numpy (the same float32 cosine).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
DIM = 384
MODEL = "sweep"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------- vectors

def real_vectors(data_dir: Path, cache: Path, beam_sample: int, seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """(turn vectors, question vectors, description); cached by the inputs that make them."""
    from bench.datasets import LOCOMO_ADVERSARIAL, load_beam, load_locomo
    from app.domain.event import turn_text as embed_text

    loc = load_locomo(data_dir)
    turns = [embed_text(t.speaker, t.content) for c in loc.conversations for t in c.turns]
    n_loc = len(turns)
    try:
        beam = [embed_text(t.speaker, t.content) for c in load_beam(data_dir).conversations for t in c.turns]
        turns += random.Random(seed).sample(beam, min(beam_sample, len(beam)))
    except FileNotFoundError:
        pass
    questions = [q.question for q in loc.questions if q.category != LOCOMO_ADVERSARIAL]
    from app.adapters.embedder import get_embedder

    emb = get_embedder()
    key = f"{emb.name}-{len(turns)}-{len(questions)}-{seed}"
    path = cache / f"real-{key}.npz"
    if path.exists():
        z = np.load(path)
        tv, qv = z["turns"], z["questions"]
    else:
        _log(f"embedding {len(turns)} real turns and {len(questions)} questions with {emb.name} (cached after)")
        t0 = time.perf_counter()
        tv = emb.encode(turns)
        qv = emb.encode(questions)
        _log(f"embedded in {time.perf_counter() - t0:.0f}s")
        cache.mkdir(parents=True, exist_ok=True)
        np.savez(path, turns=tv, questions=qv)
    return tv, qv, {"locomo_turns": n_loc, "beam_turns": len(turns) - n_loc, "questions": len(questions),
                    "embedder": emb.name}


def recombine(base: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n unit vectors: the real ones first, then normalise(v_a + w*v_b + 0.3*g)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    k = min(n, len(base))
    out[:k] = base[:k]
    for start in range(k, n, 50_000):
        m = min(50_000, n - start)
        a = base[rng.integers(0, len(base), m)]
        b = base[rng.integers(0, len(base), m)]
        w = rng.uniform(0.2, 0.5, (m, 1)).astype(np.float32)
        g = rng.standard_normal((m, base.shape[1])).astype(np.float32)
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        x = a + w * b + 0.3 * g
        out[start : start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    perm = rng.permutation(n)  # real and synthetic rows interleaved in the heap and the conversations
    return out[perm]


def exact_topk(vecs: np.ndarray, queries: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Row ids (0-based) of the exact top k by cosine (vectors are unit length)."""
    pool = vecs if rows is None else vecs[rows]
    out = np.empty((len(queries), k), dtype=np.int64)
    for i in range(0, len(queries), 64):
        sims = queries[i : i + 64] @ pool.T
        part = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.take_along_axis(sims, part, axis=1).argsort(axis=1)[:, ::-1]
        top = np.take_along_axis(part, order, axis=1)
        out[i : i + 64] = top if rows is None else rows[top]
    return out


# ---------------------------------------------------------------- database

def start_server(var_dir: Path) -> str:
    from app.embedded import ensure_postgres

    url = ensure_postgres(var_dir, database="hnsw_sweep")
    return url.replace("postgresql+psycopg://", "postgresql://")


def connect(dsn: str):
    import psycopg
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(dsn, autocommit=True)
    register_vector(conn)
    return conn


SMALL_EVERY = 200  # one row in 200 belongs to a small conversation "small" (a selective filter)


def conversation_of(i: int, conv_size: int) -> str:
    return "small" if i % SMALL_EVERY == 7 else f"c{i // conv_size}"


def load_table(conn, vecs: np.ndarray, conv_size: int) -> None:
    conn.execute("DROP TABLE IF EXISTS sweep_embeddings")
    conn.execute(f"""CREATE TABLE sweep_embeddings (
        id bigint PRIMARY KEY, tenant_id bigint NOT NULL, conversation_id text NOT NULL,
        model text NOT NULL, embedding vector({DIM}) NOT NULL)""")
    with conn.cursor() as cur, cur.copy(
        "COPY sweep_embeddings (id, tenant_id, conversation_id, model, embedding) FROM STDIN WITH (FORMAT BINARY)"
    ) as cp:
        cp.set_types(["int8", "int8", "text", "text", "vector"])
        for i, v in enumerate(vecs):
            cp.write_row((i, 1, conversation_of(i, conv_size), MODEL, v))
    conn.execute("CREATE INDEX sweep_scope ON sweep_embeddings (tenant_id, conversation_id, model)")
    conn.execute("VACUUM ANALYZE sweep_embeddings")


_K10_SQL = ("SELECT id FROM sweep_embeddings WHERE tenant_id = 1 AND model = %(model)s "
            "ORDER BY embedding <=> %(vec)s LIMIT %(limit)s")
_CONV_SQL = ("SELECT id FROM sweep_embeddings WHERE tenant_id = 1 AND model = %(model)s "
             "AND conversation_id = %(conv)s ORDER BY embedding <=> %(vec)s LIMIT %(limit)s")


def run_queries(conn, sql: str, queries: np.ndarray, ef: int, limit: int, conv: str | None = None,
                ) -> tuple[list[list[int]], list[float]]:
    conn.execute("SET hnsw.iterative_scan = 'relaxed_order'")
    conn.execute(f"SET hnsw.ef_search = {int(ef)}")
    got, lat = [], []
    with conn.cursor() as cur:
        for q in queries:
            params = {"model": MODEL, "vec": q, "limit": limit, "conv": conv}
            t0 = time.perf_counter()
            cur.execute(sql, params)  # psycopg prepares it after 5 runs, as in the service
            rows = cur.fetchall()
            lat.append((time.perf_counter() - t0) * 1000.0)
            got.append([r[0] for r in rows])
    return got, lat


def recall(got: list[list[int]], exact: np.ndarray, k: int) -> float:
    return float(np.mean([len(set(g[:k]) & set(e[:k].tolist())) / k for g, e in zip(got, exact)]))


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(xs, p))


def plan_of(conn, sql: str, params: dict) -> str:
    rows = conn.execute("EXPLAIN " + sql, params, prepare=False).fetchall()
    text = " ".join(r[0] for r in rows)
    if "sweep_hnsw" in text:
        return "hnsw"
    if "sweep_scope" in text:
        return "btree scope + exact sort"
    return "seq scan"


# ---------------------------------------------------------------- sweep

def sweep(args: argparse.Namespace, vectors: tuple[np.ndarray, np.ndarray, dict] | None = None) -> dict[str, Any]:
    """`vectors`: (base, queries, description) instead of embedding the real turns (tests);
    `args.dsn`: an existing server's database instead of the sweep's own one under `args.var_dir`."""
    var = args.var_dir
    base, qv, desc = vectors or real_vectors(args.data_dir, var, args.beam_sample, args.seed)
    rng = np.random.default_rng(args.seed)
    qv = qv[rng.choice(len(qv), min(args.queries, len(qv)), replace=False)]
    vecs = recombine(base, args.n, args.seed)
    exact100 = exact_topk(vecs, qv, 100)
    _log(f"{args.n} vectors ({len(base)} real), {len(qv)} queries; exact answers computed")

    dsn = args.dsn or start_server(var)
    conn = connect(dsn)
    version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
    pg_settings = {k: conn.execute(f"SHOW {k}").fetchone()[0] for k in
                   ("shared_buffers", "maintenance_work_mem", "max_parallel_maintenance_workers", "work_mem")}
    t0 = time.perf_counter()
    load_table(conn, vecs, args.conv_size)
    load_s = time.perf_counter() - t0
    table_mb = conn.execute("SELECT pg_total_relation_size('sweep_embeddings') / 1048576.0").fetchone()[0]
    _log(f"loaded in {load_s:.1f}s ({float(table_mb):.0f} MB); pgvector {version}; {pg_settings}")
    conn.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
    conn.execute(f"SET max_parallel_maintenance_workers = {args.parallel_workers}")

    rows: list[dict[str, Any]] = []
    builds: list[dict[str, Any]] = []
    skipped = []
    for m in args.m:
        for efc in args.ef_construction:
            if efc < 2 * m:  # pgvector: ef_construction must be >= 2 * m
                skipped.append({"m": m, "ef_construction": efc})
                continue
            conn.execute("DROP INDEX IF EXISTS sweep_hnsw")
            t0 = time.perf_counter()
            conn.execute(f"CREATE INDEX sweep_hnsw ON sweep_embeddings USING hnsw (embedding vector_cosine_ops) "
                         f"WITH (m = {m}, ef_construction = {efc})")
            build_s = time.perf_counter() - t0
            size_mb = float(conn.execute("SELECT pg_relation_size('sweep_hnsw') / 1048576.0").fetchone()[0])
            builds.append({"m": m, "ef_construction": efc, "build_s": build_s, "index_mb": size_mb})
            _log(f"m={m} ef_construction={efc}: built in {build_s:.1f}s, {size_mb:.0f} MB")
            run_queries(conn, _K10_SQL, qv[: min(50, len(qv))], max(args.ef_search), 10)  # warm the cache
            for ef in args.ef_search:
                got10, lat10 = run_queries(conn, _K10_SQL, qv, ef, 10)
                gotp, latp = run_queries(conn, _K10_SQL, qv, ef, args.pool)
                row = {"m": m, "ef_construction": efc, "ef_search": ef, "build_s": build_s, "index_mb": size_mb,
                       "k10_recall@10": recall(got10, exact100, 10), "k10_p50_ms": pct(lat10, 50),
                       "k10_p95_ms": pct(lat10, 95),
                       "pool_recall@10": recall(gotp, exact100, 10), "pool_recall@100": recall(gotp, exact100, 100),
                       "pool_p50_ms": pct(latp, 50), "pool_p95_ms": pct(latp, 95)}
                rows.append(row)
                _log(f"  ef_search={ef:3d}: k10 r@10 {row['k10_recall@10']:.4f} p50 {row['k10_p50_ms']:.1f} "
                     f"p95 {row['k10_p95_ms']:.1f} ms | pool r@10 {row['pool_recall@10']:.4f} "
                     f"r@100 {row['pool_recall@100']:.4f} p50 {row['pool_p50_ms']:.1f} p95 {row['pool_p95_ms']:.1f} ms")

    choice = choose(rows, args.target_recall)
    filtered: list[dict[str, Any]] = []
    if choice:
        # the conversation-scoped query at the chosen parameters (rebuild that index if needed):
        # a large conversation and a small one (a selective filter for the HNSW scan)
        last = builds[-1]
        if (last["m"], last["ef_construction"]) != (choice["m"], choice["ef_construction"]):
            conn.execute("DROP INDEX IF EXISTS sweep_hnsw")
            conn.execute(f"CREATE INDEX sweep_hnsw ON sweep_embeddings USING hnsw (embedding vector_cosine_ops) "
                         f"WITH (m = {choice['m']}, ef_construction = {choice['ef_construction']})")
        convs = np.array([conversation_of(i, args.conv_size) for i in range(args.n)])
        for conv in ("c0", "small"):
            rows_c = np.flatnonzero(convs == conv)
            if len(rows_c) < 20:
                continue
            exact_c = exact_topk(vecs, qv, min(100, len(rows_c) - 1), rows=rows_c)
            run_queries(conn, _CONV_SQL, qv[:20], choice["ef_search"], args.pool, conv)  # warm
            got, lat = run_queries(conn, _CONV_SQL, qv, choice["ef_search"], args.pool, conv)
            f = {"conversation": conv, "rows": int(len(rows_c)), "share_of_table": len(rows_c) / args.n,
                 "ef_search": choice["ef_search"], "recall@10": recall(got, exact_c, 10),
                 "returned_min": min(len(g) for g in got), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
                 "plan": plan_of(conn, _CONV_SQL, {"model": MODEL, "vec": qv[0], "limit": args.pool, "conv": conv})}
            filtered.append(f)
            _log(f"conversation-filtered at the choice: {f}")
    if not args.keep:
        conn.execute("DROP TABLE IF EXISTS sweep_embeddings")
    conn.close()
    if not args.keep and not args.dsn:
        from app.embedded import stop_postgres

        stop_postgres(var)
    return {
        "benchmark": "hnsw-sweep",
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "load_avg_start": list(os.getloadavg())},
        "n": args.n, "queries": len(qv), "pool": args.pool, "conv_size": args.conv_size,
        "vectors": desc | {"synthetic": args.n - min(args.n, len(base)),
                           "recipe": "normalise(v_a + w*v_b + 0.3*g), w~U(0.2,0.5), g random unit"},
        "pgvector": version, "pg_settings": pg_settings,
        "build_settings": {"maintenance_work_mem": args.maintenance_work_mem,
                           "max_parallel_maintenance_workers": args.parallel_workers},
        "load_s": load_s, "table_mb": float(table_mb),
        "builds": builds, "skipped_invalid": skipped, "rows": rows, "target_recall": args.target_recall, "choice": choice,
        "conversation_filtered": filtered,
    }


BEFORE = {"m": 16, "ef_construction": 64, "ef_search": 200}  # migration 0001 and the old hard-coded ef_search


def choose(rows: list[dict[str, Any]], target: float, tolerance: float = 0.005) -> dict[str, Any] | None:
    """The cheapest point that keeps the dense signal as good as before.

    "As good": pool recall@10 and recall@100 within `tolerance` of the parameters before the sweep
    (`BEFORE`), or, when those were not measured, at least `target`. "Cheapest": fewest distance
    computations per query (ef_search x m: the candidate list times the neighbours per node), then
    the shortest build. Latency is reported, not used: on a shared 2-core machine its differences
    between neighbouring points are smaller than its run-to-run noise, while recall is exact.
    """
    base = next((r for r in rows if all(r[k] == v for k, v in BEFORE.items())), None)
    if base is not None:
        need10, need100 = base["pool_recall@10"] - tolerance, base["pool_recall@100"] - tolerance
    else:
        need10 = need100 = target
    ok = [r for r in rows if r["pool_recall@10"] >= need10 and r["pool_recall@100"] >= need100]
    if not ok:
        return max(rows, key=lambda r: r["pool_recall@10"]) if rows else None
    return min(ok, key=lambda r: (r["ef_search"] * r["m"], r["build_s"]))


def markdown(res: dict[str, Any]) -> str:
    v = res["vectors"]
    lines = [f"# HNSW sweep ({res['when']})", "",
             f"{res['n']:,} vectors of 384 dimensions in one tenant ({v['locomo_turns']} LoCoMo + {v['beam_turns']} BEAM "
             f"turns embedded by `{v['embedder']}`, {v['synthetic']:,} recombinations: {v['recipe']}); "
             f"{res['queries']} real LoCoMo questions as queries; conversations of {res['conv_size']:,} rows. "
             f"pgvector {res['pgvector']}, builds with maintenance_work_mem {res['build_settings']['maintenance_work_mem']} "
             f"and {res['build_settings']['max_parallel_maintenance_workers']} parallel workers; "
             f"{res['machine']['cpus']} CPUs (load average at start {res['machine']['load_avg_start'][0]:.2f}). "
             f"Table loaded in {res['load_s']:.0f}s ({res['table_mb']:.0f} MB).", "",
             "`k10`: ORDER BY distance LIMIT 10 (recall@10 vs exact). `pool`: LIMIT "
             f"{res['pool']}, the dense signal's query (recall@10 and @100 vs exact). Both with "
             "`hnsw.iterative_scan = relaxed_order`; latency is client-side per statement.", "",
             "| m | ef_construction | build s | index MB | ef_search | k10 r@10 | k10 p50 ms | k10 p95 ms | "
             "pool r@10 | pool r@100 | pool p50 ms | pool p95 ms |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in res["rows"]:
        lines.append(f"| {r['m']} | {r['ef_construction']} | {r['build_s']:.1f} | {r['index_mb']:.0f} | {r['ef_search']} | "
                     f"{r['k10_recall@10']:.4f} | {r['k10_p50_ms']:.1f} | {r['k10_p95_ms']:.1f} | "
                     f"{r['pool_recall@10']:.4f} | {r['pool_recall@100']:.4f} | {r['pool_p50_ms']:.1f} | "
                     f"{r['pool_p95_ms']:.1f} |")
    if res.get("skipped_invalid"):
        lines += ["", "Not built (pgvector needs ef_construction ≥ 2·m): " + ", ".join(
            f"m={x['m']}/ef_construction={x['ef_construction']}" for x in res["skipped_invalid"]) + "."]
    c = res["choice"]
    if c:
        lines += ["", "Chosen (`choose`: the fewest distance computations, ef_search × m, whose pool recall@10 and "
                  f"@100 stay within 0.5 points of m={BEFORE['m']}, ef_construction={BEFORE['ef_construction']}, "
                  f"ef_search={BEFORE['ef_search']}, the parameters before): m={c['m']}, "
                  f"ef_construction={c['ef_construction']}, ef_search={c['ef_search']} (pool r@10 "
                  f"{c['pool_recall@10']:.4f}, p50 {c['pool_p50_ms']:.1f} ms, p95 {c['pool_p95_ms']:.1f} ms, "
                  f"build {c['build_s']:.1f}s)."]
    for f in res["conversation_filtered"]:
        lines += ["", f"Conversation-scoped `pool` query at that point, conversation `{f['conversation']}` "
                  f"({f['rows']:,} rows, {f['share_of_table']:.1%} of the table; plan: {f['plan']}): recall@10 "
                  f"{f['recall@10']:.4f}, fewest rows returned {f['returned_min']}, p50 {f['p50_ms']:.1f} ms, "
                  f"p95 {f['p95_ms']:.1f} ms."]
    return "\n".join(lines) + "\n"


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    p.add_argument("--var-dir", type=Path, default=REPO_ROOT / "var" / "hnsw-sweep")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--pool", type=int, default=100, help="the dense signal's LIMIT (candidate_pool)")
    p.add_argument("--conv-size", type=int, default=20_000)
    p.add_argument("--beam-sample", type=int, default=500, help="BEAM turns among the real vectors")
    p.add_argument("--m", type=_ints, default=[8, 16, 32])
    p.add_argument("--ef-construction", type=_ints, default=[32, 64, 128])
    p.add_argument("--ef-search", type=_ints, default=[20, 40, 80, 160, 200], help="200: the value before the sweep")
    p.add_argument("--target-recall", type=float, default=0.95)
    p.add_argument("--maintenance-work-mem", default="512MB")
    p.add_argument("--parallel-workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", action="store_true", help="leave the sweep's server running")
    p.add_argument("--dsn", default=None, help="use this database (postgresql://...) instead of a private server")
    p.add_argument("--out-dir", type=Path, default=REPO_ROOT / "bench" / "results")
    p.add_argument("--no-write", action="store_true")
    return p.parse_args(argv)


def main(argv: list[str] | None = None, vectors: tuple[np.ndarray, np.ndarray, dict] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    res = sweep(args, vectors)
    md = markdown(res)
    print(md)
    if not args.no_write:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        stem = "hnsw-sweep-" + datetime.now().strftime("%Y%m%d-%H%M%S")
        (args.out_dir / f"{stem}.json").write_text(json.dumps(res, indent=2))
        (args.out_dir / f"{stem}.md").write_text(md)
        _log(f"wrote {args.out_dir / stem}.json/.md")
    return res


if __name__ == "__main__":
    main()
