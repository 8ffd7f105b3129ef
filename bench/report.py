"""Writes a run's results: the JSON file, the Markdown tables and the accuracy–context frontier PNG.

Every table puts the service beside the baselines, with the ratio service / baseline.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.evaluate import RANK_KEYS, SESSION_KEYS
from bench.metrics import ctx_key, er_key

SERVICE = "service"
TITLES = {"locomo": "LoCoMo (dev, 7 conversations)", "beam": "BEAM 100K", "longmemeval": "LongMemEval_S"}


def _fmt(v: Any, key: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if key.startswith("ctx@") or key == "n":
        return f"{v:.0f}"
    return f"{v:.3f}"


def _ms(v: Any) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.0f}"


def _ratio(a: Any, b: Any) -> str:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return "—"
    if b == 0:
        return "—"
    return f"{a / b:.2f}×"


def _systems(result: dict[str, Any]) -> tuple[list[str], list[str]]:
    systems = list(result["systems"])
    baselines = [s for s in systems if s != SERVICE]
    return systems, baselines


def _header(systems: Sequence[str], baselines: Sequence[str], first: str) -> list[str]:
    cols = [first, *systems]
    if SERVICE in systems:
        cols += [f"service/{b}" for b in baselines]
    return ["| " + " | ".join(cols) + " |", "|" + "|".join(["---"] + ["---:"] * (len(cols) - 1)) + "|"]


def _row(label: str, values: dict[str, Any], systems: Sequence[str], baselines: Sequence[str], key: str) -> str:
    cells = [label, *(_fmt(values.get(s), key) for s in systems)]
    if SERVICE in systems:
        cells += [_ratio(values.get(SERVICE), values.get(b)) for b in baselines]
    return "| " + " | ".join(cells) + " |"


def _session_keys(result: dict[str, Any]) -> list[str]:
    """The session-level metrics, when some system's table has them (LongMemEval)."""
    tables = [summ.get("table", {}) for summ in result["systems"].values()]
    return [k for k in SESSION_KEYS if any(k in row for t in tables for row in t.values())]


def metric_table(result: dict[str, Any], group: str) -> list[str]:
    """Rows = metrics, columns = systems and ratios, for one row group (a category, overall, all)."""
    systems, baselines = _systems(result)
    budgets = result["budgets"]
    keys = [*RANK_KEYS, *_session_keys(result), *(er_key(b) for b in budgets), *(ctx_key(b) for b in budgets)]
    lines = _header(systems, baselines, "metric")
    for k in keys:
        vals = {s: result["systems"][s]["table"].get(group, {}).get(k) for s in systems}
        lines.append(_row(k, vals, systems, baselines, k))
    return lines


def category_table(result: dict[str, Any], key: str) -> list[str]:
    """Rows = categories (then overall and all), columns = systems and ratios, for one metric."""
    systems, baselines = _systems(result)
    first = result["systems"][systems[0]]["table"]
    cats = [c for c in first if c not in ("overall", "all")]
    lines = _header(systems, baselines, "category (n)")
    for c in [*cats, "overall", "all"]:
        if c not in first:
            continue
        vals = {s: result["systems"][s]["table"].get(c, {}).get(key) for s in systems}
        lines.append(_row(f"{c} ({first[c]['n']})", vals, systems, baselines, key))
    return lines


def headline_table(result: dict[str, Any]) -> list[str]:
    """Rows = systems; per headline metric two columns side by side: every question with gold evidence,
    and without the categories reported apart (LoCoMo's adversarial). Where nothing with evidence is
    set apart (BEAM and LongMemEval set apart abstention questions, which have none), one column."""
    apart = [c for c in result.get("apart", []) if c != "abstention"] or list(result.get("apart", []))
    first = result["systems"][next(iter(result["systems"]))]["table"]
    both = "all" in first
    keys = [*RANK_KEYS, *_session_keys(result), er_key(max(result["budgets"]))] if result["budgets"] else \
        [*RANK_KEYS, *_session_keys(result)]
    without = f"w/o {', '.join(apart)}"
    cols = [f"{k} all | {k} {without}" if both else k for k in keys]
    n = (f"all n={first['all']['n']:.0f}, {without} n={first.get('overall', {}).get('n', 0):.0f}" if both
         else f"n={first.get('overall', {}).get('n', 0):.0f}")
    out = [f"| system ({n}) | " + " | ".join(cols) + " |",
           "|---|" + "---:|" * (len(keys) * (2 if both else 1))]
    for s, summ in result["systems"].items():
        t = summ["table"]
        cells = [f"{_fmt(t.get('all', {}).get(k), k)} | {_fmt(t.get('overall', {}).get(k), k)}" if both
                 else _fmt(t.get("overall", {}).get(k), k) for k in keys]
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    return out


def _models_lines(result: dict[str, Any]) -> list[str]:
    """Split, models and their training data, and a loud mark when scored on training conversations."""
    out: list[str] = []
    split = result.get("split")
    if split:
        out.append(f"Split: **{split['name']}** ({split['manifest']})")
    for role, m in (result.get("models") or {}).items():
        if not m:
            continue
        w = m.get("weights") or {}
        tr = m.get("training")
        trained = ("trained on " + ", ".join(f"{d} {len(v)}" for d, v in tr["datasets"].items() if v)
                   + f" ({tr.get('source')})") if tr else "no training manifest"
        if not m.get("path"):
            out.append(f"{role.capitalize()}: {m.get('resolved_by') or 'none'}")
            continue
        out.append(f"{role.capitalize()}: {m.get('name')} `{m['path']}`"
                   + (f" · sha256 {w['sha256'][:12]}" if w.get("sha256") else "") + f" · {trained}"
                   + (f" · {m['resolved_by']}" if m.get("resolved_by") and m.get("path") else ""))
    ov = result.get("train_overlap") or {}
    if ov.get("conversations"):
        out.append("**Scored on conversations a model was trained on (--allow-train-overlap): "
                   + "; ".join(f"{r}: {', '.join(ids)}" for r, ids in ov["conversations"].items())
                   + ". Not a held-out result.**")
    return out


def markdown(result: dict[str, Any]) -> str:
    name = result["benchmark"]
    d = result["data"]
    budgets = result["budgets"]
    apart = result.get("apart", [])
    out = [f"# {TITLES.get(name, name)}: recall through the HTTP API", ""]
    out.append(f"Run {result['run_id']} · {result['duration_s']:.0f}s · {d['conversations']} conversations, "
               f"{d['turns']} turns, {d['questions']} questions ({d['scored']} with gold evidence) · "
               f"top_k {result['top_k']} · budgets {', '.join(map(str, budgets))} · tokens: {result['tokenizer']}")
    if result.get("subset"):
        out.append(f"Subset: {result['subset']}")
    out += _models_lines(result)
    svc = result.get("service")
    if svc:
        out.append(f"Service: {svc['url']} ({'started by the harness, embedded default' if svc.get('embedded') else 'given URL'})"
                   f" · pipeline overrides: `{json.dumps(result.get('pipeline') or {})}`")
    else:
        out.append("Service: not run (`--baselines-only`); baselines only.")
    out.append("")
    out.append("Baselines: BM25 (BM25Okapi, stop words removed), dense (the packaged all-MiniLM-L6-v2, cosine), "
               "RRF(BM25, dense, k=60); each packs its ranked turns into the budget in rank order and stops at "
               "the first turn that does not fit. r@k / all@10 / mrr over the top_k items returned; er@B = "
               "fraction of gold turns inside the context returned for token_budget B; ctx@B = its tokens.")
    out.append("")
    side = "all" in result["systems"][next(iter(result["systems"]))]["table"]
    out.append("## Headline: all questions and without " + ", ".join(apart) + ", side by side" if side else
               "## Headline" + (f" ({', '.join(apart)} questions have no evidence: reported apart below)" if apart else ""))
    out += headline_table(result)
    if result.get("benchmark") == "longmemeval":
        out += ["", "sR@k: session-level recall — a gold session (`answer_session_ids`) counts as retrieved at k "
                "when any of its turns is among the first k turns returned; sall@10: every gold session is; "
                "dsR@k: a gold session is among the first k distinct sessions of the ranking (sessions ranked "
                "by their best turn, the unit of systems that retrieve whole sessions). "
                "The turn-level metrics score the `has_answer` turns."]
    out.append("")
    out.append(f"## Overall ({'all categories except ' + ', '.join(apart) if apart else 'all categories'})")
    out += metric_table(result, "overall")
    for cat in apart:
        if cat in result["systems"][next(iter(result["systems"]))]["table"]:
            out += ["", f"## {cat} (reported apart)"]
            out += metric_table(result, cat)
    if apart and "all" in result["systems"][next(iter(result["systems"]))]["table"]:
        out += ["", "## All questions with gold evidence"]
        out += metric_table(result, "all")
    for key in [*RANK_KEYS, *_session_keys(result), *(er_key(b) for b in budgets)]:
        out += ["", f"## By category: {key}"]
        out += category_table(result, key)

    systems = list(result["systems"])
    ab = {s: result["systems"][s]["abstention"] for s in systems}
    if any(a.get("n") for a in ab.values()):
        out += ["", "## Abstention (questions without evidence)",
                "Abstain = `\"abstain\": true` or no items. Baselines never abstain.", ""]
        out += ["| | " + " | ".join(systems) + " |", "|---|" + "---:|" * len(systems)]
        out.append(f"| abstain rate on {ab[systems[0]]['n']} abstention questions | "
                   + " | ".join(_fmt(ab[s]["abstain_rate"]) for s in systems) + " |")
        out.append("| false abstain rate on questions with evidence | "
                   + " | ".join(_fmt(ab[s]["false_abstain_rate"]) for s in systems) + " |")
        for b in budgets:
            out.append(f"| mean context tokens on abstention questions @ {b} | "
                       + " | ".join(_fmt(ab[s].get(ctx_key(b)), "ctx@") for s in systems) + " |")
        floors = (ab.get(SERVICE) or {}).get("floors") or {}
        if floors:
            out += ["", "Calibrated abstain floors (best abstain − false-abstain with false abstains ≤ 10%; "
                    "set as PALIMPSEST_ABSTAIN_DENSE_FLOOR / PALIMPSEST_ABSTAIN_RERANK_FLOOR):", "",
                    "| relevance signal | floor | abstain rate | false abstain rate |", "|---|---:|---:|---:|"]
            for sig, f in floors.items():
                out.append(f"| {sig} | {f['floor']:.4f} | {_fmt(f['abstain_rate'])} | {_fmt(f['false_abstain_rate'])} |")

    if svc:
        lat = result["systems"][SERVICE].get("latency") or {}
        ing = svc.get("ingest") or {}
        chk = svc.get("checks") or {}
        out += ["", "## Service: latency, ingest, context checks", ""]
        out.append(f"- query latency (one client, token_budget {budgets[-1]}, n={lat.get('n', 0)} questions; "
                   f"the other queries ran {result.get('concurrency')} in flight, untimed): "
                   f"p50 {_ms(lat.get('p50_ms'))} ms, p95 {_ms(lat.get('p95_ms'))} ms, mean {_ms(lat.get('mean_ms'))} ms")
        stages = chk.get("stage_ms") or {}
        if stages:
            out.append("- where it went (the service's own per-stage wall time, timed queries): "
                       + ", ".join(f"{k} p50 {v['p50']:.1f} / mean {v['mean']:.1f} ms" for k, v in stages.items()))
        if ing:
            eps = ing.get("events_per_s")
            out.append(f"- ingest: {ing.get('created', 0)} events created, {ing.get('duplicate', 0)} duplicates; "
                       + (f"{eps:.1f} events/s until fully indexed ({ing['until_indexed_s']:.1f}s)" if eps
                          else ing.get("note", "no throughput measured")))
            if ing.get("pending_at_query_time"):
                out.append(f"- **queried before indexing finished**: waited for {ing.get('waited_for')}; still pending "
                           f"`{json.dumps(ing['pending_at_query_time'])}`")
        out.append(f"- {chk.get('responses', 0)} query responses: {chk.get('over_budget', 0)} contexts over budget, "
                   f"{chk.get('reported_tokens_differ', 0)} with `context_tokens` differing from the fixed tokenizer, "
                   f"{chk.get('flagged_not_in_text', 0)} items flagged `in_context` whose text is not in the context; "
                   f"{chk.get('n_errors', 0)} failed queries")
        out.append(f"- gold presence decided by {json.dumps(chk.get('presence_method', {}))}: "
                   f"{chk.get('gold_present', 0)} gold turns found in contexts, "
                   f"{chk.get('gold_present_not_flagged', 0)} of them not among the flagged items (ranked below top_k)")
    t = result.get("timings", {})
    if t:
        out += ["", "Timings: " + ", ".join(f"{k} {v:.0f}s" for k, v in t.items())]
    if d.get("unscored"):
        out += ["", f"Not scored (no usable gold evidence, not abstention): {len(d['unscored'])} questions."]
    out += ["", f"Frontier plot: `{result.get('plot', '')}`", ""]
    return "\n".join(out)


def plot_frontier(result: dict[str, Any], path: Path, group: str = "overall") -> None:
    """er@budget against the mean context tokens at that budget, one line per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = result["budgets"]
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    styles = {SERVICE: ("tab:red", "o", 2.4), "bm25": ("tab:blue", "s", 1.4), "dense": ("tab:green", "^", 1.4),
              "rrf": ("tab:purple", "D", 1.4)}
    for s, summ in result["systems"].items():
        row = summ["table"].get(group, {})
        xs = [row.get(ctx_key(b), math.nan) for b in budgets]
        ys = [row.get(er_key(b), math.nan) for b in budgets]
        color, marker, lw = styles.get(s, ("gray", "x", 1.2))
        ax.plot(xs, ys, marker=marker, color=color, lw=lw, label=s)
        if s == SERVICE or (SERVICE not in result["systems"] and s == "rrf"):
            for b, x, y in zip(budgets, xs, ys):
                ax.annotate(str(b), (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7, color=color)
    ax.set_xlabel("context tokens returned (all-MiniLM-L6-v2 word pieces, mean)")
    ax.set_ylabel("evidence recall of the context (er@budget)")
    ax.set_ylim(0, 1)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"{TITLES.get(result['benchmark'], result['benchmark'])}: accuracy–context frontier ({group})",
                 fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write(result: dict[str, Any], out_dir: Path, stem: str) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / f"{stem}.json", "md": out_dir / f"{stem}.md", "png": out_dir / f"{stem}.png"}
    result["plot"] = paths["png"].name
    plot_frontier(result, paths["png"])
    paths["md"].write_text(markdown(result))
    paths["json"].write_text(to_json(result))
    return paths


def to_json(result: dict[str, Any]) -> str:
    """Strict JSON, indented, except that per-question records are columnar, one row per line."""
    rows: list[str] = []
    doc = _clean(result)
    for summ in doc.get("systems", {}).values():
        recs = summ.get("records")
        if not recs:
            continue
        cols = list(recs[0])
        table = []
        for r in recs:
            rows.append(json.dumps([_round(r.get(c)) for c in cols], allow_nan=False))
            table.append(f"@@row{len(rows) - 1}@@")
        summ["records"] = {"columns": cols, "rows": table}
    text = json.dumps(doc, indent=1, default=_json_default, allow_nan=False)
    return re.sub(r'"@@row(\d+)@@"', lambda m: rows[int(m.group(1))], text)


def _round(v: Any) -> Any:
    if isinstance(v, float):
        return int(v) if v.is_integer() else round(v, 4)
    return v


def _clean(o: Any) -> Any:
    """NaN -> null, so the file is strict JSON."""
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def _json_default(o: Any) -> Any:
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"not JSON serialisable: {type(o)}")
