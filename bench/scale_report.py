"""The scale benchmark's output: JSON (everything), a Markdown table (one row per size) and PNG curves."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODES = ("tenant", "conversation", "tenant+rerank", "conversation+rerank")


def _q(point: dict[str, Any], mode: str, key: str, fmt: str = "{:.0f}") -> str:
    m = (point.get("queries") or {}).get(mode)
    return "n/a" if not m or m.get(key) is None else fmt.format(m[key])


def _mb(point: dict[str, Any], role: str) -> str:
    m = (point.get("memory_mb") or {}).get(role) or {}
    return f"{m.get('sum', 0):.0f}" if m else "—"


def markdown(result: dict[str, Any]) -> str:
    o = result["options"]
    lines = [
        f"# Scale benchmark {result['run_id']}",
        "",
        f"`palimpsest bench scale --sizes {','.join(str(s) for s in o['sizes'])} "
        f"--queries {o['queries']} --seed {o['seed']} --layers {o['layers']}"
        + "".join(f" --service-env {k}={v}" for k, v in (o.get("service_env") or {}).items())
        + (f" --vectors {o['vectors']} --api-events {o['api_events']}" if o.get("vectors") else "")
        + f"`; git {result['git'].get('commit')}"
        f"{' (dirty)' if result['git'].get('dirty') else ''}; {result['machine']['cpus']} CPUs. One tenant; "
        f"{o['batch']}-event POSTs, {o['clients']} in flight; queries one at a time, top_k {o['top_k']}, "
        f"budget {o['token_budget']} tokens, on planted pairs spread over the tenant.",
        "",
        "| events | committed ev/s | embedded ev/s | worker embed ev/s | raw embedder texts/s | share of raw "
        "| p50 / p95 ms tenant | p50 / p95 ms conv. | p50 / p95 ms rerank (tenant) | recall@10 tenant "
        "| recall@10 conv. | recall@10 rerank | bytes/event (events+vectors) | DB bytes/event "
        "| API peak MB | worker peak MB |",
        "|" + " --- |" * 16,
    ]
    for p in result["points"]:
        db = p.get("db") or {}
        lines.append(
            f"| {p['events']:,} | {p['committed_eps']:.0f} | {p['indexed_eps']:.0f} "
            f"| {p.get('worker_embed_eps') or '—'} | {p['raw_embed']['texts_per_s']:.1f} "
            f"| {_pct(p.get('embed_share'))} ({_pct(p.get('worker_embed_share'))}) "
            f"| {_q(p, 'tenant', 'p50_ms')} / {_q(p, 'tenant', 'p95_ms')} "
            f"| {_q(p, 'conversation', 'p50_ms')} / {_q(p, 'conversation', 'p95_ms')} "
            f"| {_q(p, 'tenant+rerank', 'p50_ms')} / {_q(p, 'tenant+rerank', 'p95_ms')} "
            f"| {_q(p, 'tenant', 'recall_at_10', '{:.3f}')} | {_q(p, 'conversation', 'recall_at_10', '{:.3f}')} "
            f"| {_q(p, 'tenant+rerank', 'recall_at_10', '{:.3f}')} "
            f"| {_n(db.get('bytes_per_event'))} | {_n(db.get('database_bytes_per_event'))} "
            f"| {_mb(p, 'api')} | {_mb(p, 'worker')} |")
    lines += _stage_table(result)
    lines += [
        "",
        "- committed: events acknowledged by `POST /v1/events` / seconds from the first to the last POST of the "
        "step; embedded: / seconds from the first POST until no `embed` outbox row of the tenant is pending; "
        "worker embed: vectors of the step / span of their commit times. Share of raw: embedded (worker) "
        "throughput / the embedder's own batch throughput on a sample of the step's texts in this process.",
        "- " + ("conversation-level layers parked (bench/scale_worker.py): their outbox rows are written and "
                "stay pending" if o["layers"] == "embed" else "every layer ran (all-layers ev/s in the JSON)") + ".",
        "- recall@10: the planted event among the first 10 items; `n/a`: no cross-encoder installed.",
        *_seeded(result),
        "- peak MB: the sum of VmHWM over the process and its children, since the service started.",
        "",
    ]
    return "\n".join(lines)


def _stage_table(result: dict[str, Any], mode: str = "tenant") -> list[str]:
    """Median wall time per pipeline stage of the `mode` queries (the service's `timings_ms`), per size."""
    rows = [(p["events"], ((p.get("queries") or {}).get(mode) or {}).get("stage_p50_ms")) for p in result["points"]]
    rows = [(n, st) for n, st in rows if st]
    if not rows:
        return []
    stages: list[str] = []
    for _, st in rows:
        stages += [k for k in st if k not in stages]
    out = ["", f"Median milliseconds per stage, {mode}-scoped queries without the cross-encoder "
           "(the service's own `timings_ms`):", "",
           "| events | " + " | ".join(stages) + " |", "|" + " ---: |" * (len(stages) + 1)]
    for n, st in rows:
        out.append(f"| {n:,} | " + " | ".join(f"{st[k]:.1f}" if k in st else "—" for k in stages) + " |")
    return out


def _seeded(result: dict[str, Any]) -> list[str]:
    """How each seeded step was filled (bench/scale_seed.py): only its last events went through the API."""
    pts = [p for p in result["points"] if p.get("seeded")]
    if not pts:
        return []
    v = result.get("vectors") or {}
    out = [f"- seeded steps: the events below each step's last {result['options']['api_events']:,} were written "
           f"in-process by the service's writer, their vectors COPYed from `{v.get('folder')}` (computed by "
           f"the same embedder on {v.get('device')} at {v.get('texts_per_s')} texts/s, float16) and the HNSW "
           "index built once; the rates in the table are those of the step's posted events:"]
    for p in pts:
        s = p["seeded"]
        out.append(f"  - {p['events']:,}: {s['events']:,} seeded; writer {s['write_s']:.0f} s "
                   f"({s['events'] / max(s['write_s'], 1e-9):,.0f} events/s), vectors {s['vectors_s']:.0f} s, "
                   f"HNSW build over {s['index_vectors']:,} vectors {s['index_build_s']:.0f} s, "
                   f"ANALYZE {s['analyze_s']:.0f} s")
    return out


def _n(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.0f}%"


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = result["points"]
    x = [p["events"] for p in pts]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    a = axes[0][0]
    a.plot(x, [p["committed_eps"] for p in pts], "o-", label="committed")
    a.plot(x, [p["indexed_eps"] for p in pts], "o-", label="embedded (from first POST)")
    a.plot(x, [p["raw_embed"]["texts_per_s"] for p in pts], "o--", label="raw embedder")
    a.set(title="ingest throughput", ylabel="events/s", yscale="log")
    a = axes[0][1]
    a.plot(x, [100 * (p.get("embed_share") or 0) for p in pts], "o-", label="end to end")
    a.plot(x, [100 * (p.get("worker_embed_share") or 0) for p in pts], "o-", label="worker")
    a.axhline(90, color="grey", ls=":", label="target 90%")
    a.set(title="indexing as % of raw embedder", ylabel="%")
    a = axes[0][2]
    for mode in MODES:
        ms = [(p.get("queries") or {}).get(mode) for p in pts]
        if any(ms):
            a.plot(x, [m["p50_ms"] if m else None for m in ms], "o-", label=f"{mode} p50")
            a.plot(x, [m["p95_ms"] if m else None for m in ms], "o--", label=f"{mode} p95")
    a.set(title="query latency (one at a time)", ylabel="ms")
    a = axes[1][0]
    for mode in MODES:
        ms = [(p.get("queries") or {}).get(mode) for p in pts]
        if any(ms):
            a.plot(x, [m["recall_at_10"] if m else None for m in ms], "o-", label=mode)
    a.set(title="recall@10 on planted pairs", ylim=(0, 1.02))
    a = axes[1][1]
    a.plot(x, [p["db"]["bytes_per_event"] for p in pts], "o-", label="events + embeddings (+ indexes)")
    a.plot(x, [p["db"]["database_bytes_per_event"] for p in pts], "o-", label="whole database")
    a.set(title="database size per event", ylabel="bytes")
    a = axes[1][2]
    for role in ("api", "worker"):
        a.plot(x, [p["memory_mb"][role]["sum"] for p in pts], "o-", label=role)
    a.set(title="peak RSS (VmHWM, with children)", ylabel="MB")
    for a in axes.flat:
        a.set_xscale("log")
        a.set_xlabel("events in the tenant")
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle(f"palimpsest bench scale {result['run_id']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(result: dict[str, Any], out_dir: Path, stem: str) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / f"{stem}.json", "markdown": out_dir / f"{stem}.md", "png": out_dir / f"{stem}.png"}
    paths["json"].write_text(json.dumps(result, indent=2, default=str) + "\n")
    paths["markdown"].write_text(markdown(result))
    plot(result, paths["png"])
    return paths
