"""`palimpsest bench ablate`: the pipeline with every stage on, then each stage switched off in turn,
on one running service, in one table: the overall metrics per variant and each stage's effect per
category (r@10 and er at the largest budget, as the change from the full pipeline).

Every variant is a full benchmark run of its own (JSON, Markdown, PNG under `<out-dir>/ablations/`),
so any row can be inspected or re-run alone with `palimpsest bench <benchmark> --pipeline <stage>=false`.
The stages are the Recipe's (`app.domain.recipe`); a named recipe is a base like any other override
(`--pipeline recipe=hybrid_rrf` ablates from plain lexical + dense fusion).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from app.domain.recipe import Recipe
from bench.harness import DEFAULT_API_KEY, RunOptions, exclusive, run, use_trained_reranker
from bench.metrics import er_key
from bench.report import SERVICE

# The switchable stages in pipeline order (the keys of the query's "pipeline" object): the Recipe's
# fields marked as stages. A count (`neighbours`) is switched off by 0.
STAGES = Recipe.stages()


def variants(stages: Sequence[str], default_off: Sequence[str] = ()) -> list[tuple[str, dict[str, Any]]]:
    """"all on" is the default pipeline; a stage that is on by default is switched off (-stage), one
    that is off by default (measured worse) is switched on (+stage)."""
    return [("all on", {})] + [(f"+{s}", {s: True}) if s in default_off else (f"-{s}", {s: Recipe.off_value(s)})
                               for s in stages]


def default_off_stages() -> list[str]:
    from app.settings import get_settings

    recipe = Recipe.from_settings(get_settings())
    return [s for s in STAGES if getattr(recipe, s) == Recipe.off_value(s)]


def ablate(base: RunOptions, stages: Sequence[str] = STAGES, log: Callable[[str], None] = print) -> tuple[dict, dict]:
    """Run every variant against one service (started here unless `base.url` is given)."""
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise ValueError(f"unknown stages: {', '.join(sorted(unknown))} (known: {', '.join(STAGES)})")
    stack = None
    opts = base
    with exclusive(base.var_dir) if not base.url else _null():
        if not base.url:
            from app.embedded import ServiceStack, stop_postgres, stop_redis

            use_trained_reranker()
            stack = ServiceStack(var_dir=base.var_dir, api_key=base.api_key or DEFAULT_API_KEY, beat=True,
                                 log_dir=base.var_dir / "logs")
            stack.start()
            opts = replace(base, url=stack.base_url, api_key=base.api_key or DEFAULT_API_KEY)
        try:
            rows = {}
            for name, pipeline in variants(stages, default_off_stages()):
                log(f"ablation {name}: pipeline {pipeline or '{}'}")
                tag = "ablate-" + name.replace("+", "plus-").strip("-").replace(" ", "-")
                result, _ = run(replace(opts, pipeline={**base.pipeline, **pipeline}, tag=tag,
                                        out_dir=base.out_dir / "ablations"), log=log)
                rows[name] = {"pipeline": pipeline, "run_id": result["run_id"], "systems": result["systems"]}
        finally:
            if stack is not None:
                stack.stop()
                stop_redis(base.var_dir)
                stop_postgres(base.var_dir)
    summary = {"benchmark": base.benchmark, "budgets": list(base.budgets), "only": list(base.only),
               "conversations": base.conversations, "limit": base.limit, "variants": rows}
    return summary, write_summary(summary, base.out_dir)


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def markdown(summary: dict) -> str:
    big = max(summary["budgets"])
    er = er_key(big)
    keys = ["r@5", "r@10", "all@10", "mrr", *(er_key(b) for b in summary["budgets"])]
    rows = summary["variants"]
    full = rows["all on"]["systems"][SERVICE]
    scope = ", ".join(summary["only"]) if summary["only"] else (
        f"first {summary['conversations']} conversations" if summary.get("conversations") else "all conversations")
    if summary.get("limit"):
        scope += f"; {summary['limit']} questions per conversation, spread evenly"
    out = [f"# Ablation: {summary['benchmark']} ({scope})", "",
           "Each row is the default pipeline with one stage switched off (`-stage`) or, for a stage that is off "
           "by default, on (`+stage`), through the HTTP API on the same service and data. p50/p95: query latency at the largest budget.", "",
           "| variant | " + " | ".join(keys) + " | p50 ms | p95 ms |", "|---|" + "---:|" * (len(keys) + 2)]
    for name, row in rows.items():
        svc = row["systems"][SERVICE]
        t = svc["table"]["overall"]
        lat = svc.get("latency") or {}
        out.append(f"| {name} | " + " | ".join(f"{t[k]:.3f}" for k in keys)
                   + f" | {lat.get('p50_ms', float('nan')):.0f} | {lat.get('p95_ms', float('nan')):.0f} |")
    cats = [c for c in full["table"] if c not in ("overall", "all")]
    for metric in ("r@10", er):
        out += ["", f"## Effect of switching each stage off on {metric}, per category (change from all on)", "",
                "| variant | overall | " + " | ".join(cats) + " |", "|---|" + "---:|" * (len(cats) + 1)]
        for name, row in rows.items():
            if name == "all on":
                base = full["table"]
                out.append("| all on (value) | " + " | ".join(f"{base[c][metric]:.3f}" for c in ["overall", *cats]) + " |")
                continue
            t = row["systems"][SERVICE]["table"]
            out.append(f"| {name} | " + " | ".join(
                f"{t[c][metric] - full['table'][c][metric]:+.3f}" if c in t else "n/a" for c in ["overall", *cats]) + " |")
    return "\n".join(out) + "\n"


def write_summary(summary: dict, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"ablation-{summary['benchmark']}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    slim = {**summary, "variants": {k: {"pipeline": v["pipeline"], "run_id": v["run_id"],
                                        "service": {kk: vv for kk, vv in v["systems"][SERVICE].items()
                                                    if kk != "records"}}
                                    for k, v in summary["variants"].items()}}
    paths = {"json": out_dir / f"{stem}.json", "markdown": out_dir / f"{stem}.md"}
    paths["json"].write_text(json.dumps(slim, indent=1, default=str))
    paths["markdown"].write_text(markdown(summary))
    return paths
