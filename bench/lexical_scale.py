"""The lexical stage at 10 thousand to 1 million events in one tenant, without embedding them.

    .venv/bin/python -m bench.lexical_scale                       # 10k, 100k, 1M (about 15 min)
    .venv/bin/python -m bench.lexical_scale --sizes 10000,100000  # quicker

The full scale benchmark (`palimpsest bench scale`) pushes every event through the API and the
embedder, which caps it at a few tens of events per second on two cores: 1M events would take days.
The lexical stage, whose cost grows with the tenant (a full-text OR over the GIN index, BM25 over
the matches), needs no vectors, so here the events go straight into the service's own `events`
table (same schema and indexes, migrated by Alembic, `search_tsv` computed by PostgreSQL) with COPY,
from the scale benchmark's corpus (`bench.scale_data`: recombined LoCoMo and BEAM turns with
planted facts), and the stage is timed as the service runs it.

Per size, on planted questions spread over the tenant, scoped to the tenant and to the planted
fact's conversation, interleaved query by query (each question starting with the next variant, so
none always pays for the cold pages; N and avgdl refreshed untimed when their reuse expires):
- `current`: `app.services.retrievers.lexical_signal` as the service runs it: terms held by more than
  `lexical_common_share` of the events (PostgreSQL's own statistics say which) only score, never
  find, and of the rest, rarest first, only as many find as are expected to match
  `lexical_find_budget` events together; the query terms' frequencies read out of the tsvectors in
  SQL; BM25's N and avgdl reused per scope for `lexical_stats_ttl_s`;
- `share-only`: `current` without the budget (every term under `lexical_common_share` finds);
- `every-term`: the same with every term finding candidates (no share limit, no budget);
- `recount`: `current` with N and avgdl counted on every query (`lexical_stats_ttl_s` = 0);
- `before`: the implementation this replaced: every matching event's whole tsvector shipped to
  Python and parsed there, N and avgdl counted on every query.
Reported: p50 / p95 ms and recall@10 of the planted event (lexical alone). Results go to
`bench/results/lexical-scale-<ts>.{json,md}`; the server is a private one under `var/lexical-scale`.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, text

from bench.datasets import spread
from bench.datasets import default_data_dir
from bench.harness import REPO_ROOT, _git
from bench.scale_data import Corpus, Planted, SourcePool

VARIANTS = ("current", "share-only", "every-term", "recount", "before")


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------- the replaced implementation

_ENTRY = re.compile(r"'((?:[^']|'')+)'(?::([0-9A-D,]+))?")
_DOCS_SQL = """
WITH q AS (SELECT replace(websearch_to_tsquery('english', :query)::text, ' & ', ' | ')::tsquery AS tsq)
SELECT e.id, e.search_tsv::text FROM events e, q
WHERE {filters} AND e.search_tsv @@ q.tsq
ORDER BY ts_rank_cd(e.search_tsv, q.tsq, 1) DESC, e.id LIMIT :limit
"""


def before_signal(conn: Connection, scope, query: str, limit: int, max_docs: int = 2000) -> list[tuple[int, float]]:
    """The lexical stage as it was: whole tsvectors parsed in Python, N and avgdl counted each time."""
    from app.domain.retrieval.lexical import bm25
    from app.storage.candidates import _filters, query_lexemes, scope_stats

    terms = [t.replace("'", "''") for t in query_lexemes(conn, query)]  # as the tsvector text spells them
    if not terms:
        return []
    where, params = _filters(scope)
    params.update(query=query, limit=max_docs)
    docs = [(pk, {m.group(1): (len(m.group(2).split(",")) if m.group(2) else 1) for m in _ENTRY.finditer(tsv)})
            for pk, tsv in conn.execute(text(_DOCS_SQL.format(filters=where)), params)]
    if not docs:
        return []
    n_docs, avgdl = scope_stats(conn, scope, max_age_s=0)
    return bm25(terms, docs, n_docs, avgdl)[:limit]


# ---------------------------------------------------------------- loading

def start(var_dir: Path) -> str:
    from app.embedded import ensure_postgres
    from app.storage.migrate import upgrade

    url = ensure_postgres(var_dir, database="lexical_scale")
    upgrade(url)
    return url


def tenant_id(conn: Connection) -> int:
    from app.storage.tenants import create_tenant

    tid = conn.execute(text("SELECT id FROM tenants WHERE name = 'lexical-scale'")).scalar()
    return int(tid) if tid is not None else create_tenant(conn, "lexical-scale")


def grow(url: str, tid: int, corpus: Corpus, have: int, want: int, log: Callable[[str], None]) -> list[Planted]:
    """COPY events [have, want) of the corpus into the tenant; returns the planted facts among them."""
    import psycopg

    planted: list[Planted] = []
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    t0 = time.perf_counter()
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy("COPY events (tenant_id, conversation_id, event_id, speaker, content, occurred_at) "
                      "FROM STDIN") as cp:
            for ev, plant in corpus.events(have, want):
                cp.write_row((tid, ev["conversation_id"], ev["event_id"], ev["speaker"], ev["content"],
                              ev["occurred_at"]))
                if plant is not None:
                    planted.append(plant)
        cur.execute("ANALYZE events")
        conn.commit()
    log(f"loaded events {have:,}..{want:,} in {time.perf_counter() - t0:.0f}s")
    return planted


def planted_before(corpus: Corpus, n: int) -> list[Planted]:
    return [p for _, p in corpus.events(0, n) if p is not None]


# ---------------------------------------------------------------- measuring

def measure(engine, tid: int, questions: Sequence[Planted], limit: int = 100) -> dict[str, Any]:
    from app.services.retrievers import lexical_signal
    from app.storage import candidates as search
    from app.storage.candidates import Scope

    out: dict[str, Any] = {}
    for scope_name in ("tenant", "conversation"):
        lat: dict[str, list[float]] = {v: [] for v in VARIANTS}
        hit: dict[str, int] = {v: 0 for v in VARIANTS}
        search._STATS.clear()
        for i, q in enumerate(questions):
            scope = Scope(tid, q.conversation_id if scope_name == "conversation" else None)
            with engine.connect() as conn:
                gold = conn.execute(text("SELECT id FROM events WHERE tenant_id = :t AND conversation_id = :c "
                                         "AND event_id = :e"), {"t": tid, "c": q.conversation_id, "e": q.gold}).scalar_one()
                search.scope_stats(conn, scope)  # untimed: N and avgdl as the service reuses them (not when expired)
            # the variant that reads a question's matches first pays for the cold pages (a 1M-event
            # tenant's tsvectors do not fit the buffers): each question starts with the next variant
            for variant in VARIANTS[i % len(VARIANTS):] + VARIANTS[:i % len(VARIANTS)]:
                with engine.connect() as conn:
                    if variant == "recount":
                        search._STATS.pop((tid, scope.conversation_id, None, None, None), None)
                    t0 = time.perf_counter()
                    if variant == "before":
                        hits = before_signal(conn, scope, q.question, limit)
                    elif variant == "share-only":
                        hits = lexical_signal(conn, scope, q.question, limit, find_budget=math.inf)
                    elif variant == "every-term":
                        hits = lexical_signal(conn, scope, q.question, limit, max_share=1.0, find_budget=math.inf)
                    else:
                        hits = lexical_signal(conn, scope, q.question, limit)
                    lat[variant].append((time.perf_counter() - t0) * 1000.0)
                hit[variant] += int(gold in [pk for pk, _ in hits[:10]])
        out[scope_name] = {v: {"p50_ms": round(statistics.median(lat[v]), 2),
                               "p95_ms": round(_pct(lat[v], 95), 2),
                               "recall_at_10": round(hit[v] / len(questions), 4)} for v in VARIANTS}
    return out


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]


def report(result: dict[str, Any]) -> str:
    lines = [f"# Lexical stage at scale {result['run_id']}", "",
             f"`python -m bench.lexical_scale --sizes {','.join(str(s['events']) for s in result['sizes'])} "
             f"--queries {result['queries']}`; git {_commit(result['git'])}; one tenant, events loaded with COPY "
             "(no embeddings), the stage timed in-process on planted questions spread over the tenant.", "",
             "| events | scope | variant | p50 ms | p95 ms | recall@10 | DB MB |", "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for s in result["sizes"]:
        for scope in ("tenant", "conversation"):
            for v in VARIANTS:
                m = s[scope][v]
                lines.append(f"| {s['events']:,} | {scope} | {v} | {m['p50_ms']:.1f} | {m['p95_ms']:.1f} | "
                             f"{m['recall_at_10']:.3f} | {s['db_mb']:,} |")
    lines += ["", "- current: the service's lexical stage; share-only: the same without the find budget (every term "
              "under the common share finds); every-term: the same with common terms finding "
              "candidates too; recount: current with BM25's N and avgdl counted on every "
              "query; before: whole tsvectors parsed in Python and N/avgdl counted every query (the implementation "
              "the current one replaced).",
              "- recall@10: the planted event among the lexical stage's first 10 (lexical alone, no fusion)."]
    return "\n".join(lines) + "\n"


def _commit(g: Any) -> str:
    return f"{g.get('commit')}{' (dirty)' if g.get('dirty') else ''}" if isinstance(g, dict) else str(g)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--var-dir", type=Path, default=REPO_ROOT / "var" / "lexical-scale")
    ap.add_argument("--out-dir", type=Path, default=REPO_ROOT / "bench" / "results")
    ap.add_argument("--data-dir", type=Path, default=None)
    a = ap.parse_args(argv)
    sizes = sorted(int(x) for x in a.sizes.split(","))
    corpus = Corpus(SourcePool.load(a.data_dir or default_data_dir()), seed=a.seed)
    url = start(a.var_dir)
    engine = create_engine(url)
    with engine.begin() as conn:
        tid = tenant_id(conn)
        have = conn.execute(text("SELECT count(*) FROM events WHERE tenant_id = :t"), {"t": tid}).scalar_one()
    run_id = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    result: dict[str, Any] = {"run_id": run_id, "git": _git(), "queries": a.queries, "seed": a.seed, "sizes": []}
    a.out_dir.mkdir(parents=True, exist_ok=True)
    planted = planted_before(corpus, have)
    for size in sizes:
        if have > size:
            _log(f"the tenant already holds {have:,} events (> {size:,}): skipped (delete {a.var_dir} to start over)")
            continue
        if have < size:
            planted += grow(url, tid, corpus, have, size, _log)
            have = size
        questions = spread(planted, a.queries)
        _log(f"{size:,} events: timing {len(questions)} planted questions x {len(VARIANTS)} variants x 2 scopes")
        with engine.connect() as conn:
            db_mb = round(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one() / 2**20)
        result["sizes"].append({"events": size, "db_mb": db_mb, **measure(engine, tid, questions)})
        base = a.out_dir / f"lexical-scale-{run_id}"
        base.with_suffix(".json").write_text(json.dumps(result, indent=1))
        base.with_suffix(".md").write_text(report(result))
        _log(f"wrote {base}.md")
    engine.dispose()
    from app.embedded import stop_postgres

    stop_postgres(a.var_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
