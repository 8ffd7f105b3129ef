"""The learned fusion on the VALIDATION split, beside the pipeline with it off and the plain baselines, all
from one run over the same turns:

    python -m training.fusion --evaluate

For every validation question of LoCoMo (conv-43/44/47) and BEAM 100K (15-20), asked in-process of
the shared development database (`bench.evaldb`): the service's default recipe (no reranker, no
LLM, top 50, budget 2,000: the model file the product ships, with the reweight's factors on top),
the same with the priors off (`learned_priors`), with the learned ranker off (weighted RRF and the
reweight), and BM25, dense and RRF over the same turns (`bench.baselines`). Scored by `bench.evaluate`
(r@5, r@10, all@10, mrr, er@2k; the context as the service assembles it). LoCoMo is reported with
and without its adversarial category, BEAM without abstention. Writes
`bench/results/fusion-validation-<date>[-<tag>].{md,json}` (tag: $PALIMPSEST_FUSION_EVAL_TAG, so a
run does not overwrite a committed report). $PALIMPSEST_FUSION_EVAL_EXTRA adds rows: a JSON list of
[label, recipe overrides, model file], e.g. an ablation's model fitted with a stage off.
$PALIMPSEST_FUSION_EVAL_TOP_K asks for that many items instead of 50 (the context's direct evidence is
the top_k, so the context stages get room below 50; the rank metrics read the first 10 either way).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "bench" / "results"
TOP_K = int(os.environ.get("PALIMPSEST_FUSION_EVAL_TOP_K") or 50)  # items asked for (the server's default is 10)
BUDGET = 2000
KEYS = ("r@5", "r@10", "all@10", "mrr", "er@2k")
SESSION_KEYS = ("sR@5", "sR@10", "dsR@5", "dsR@10")  # LongMemEval_S: session level (bench.metrics)
COMMAND = "python -m training.fusion --evaluate"
# the service's answers are kept per top_k (its context takes the top_k first); a baseline's are not: its
# context is packed from its whole ranking and the metrics read its first 10 (`baselines.baseline_answers`)
_TOP = "" if TOP_K == 50 else f"-top{TOP_K}"


def _recipe(overrides: dict[str, Any]) -> Any:
    """The server's default recipe (its settings) with these overrides."""
    from app.domain.recipe import Recipe
    from app.settings import get_settings

    return Recipe.from_settings(get_settings()).with_overrides(overrides)


def service_answers(ds: Any, tenant_id: int, overrides: dict[str, Any], fusion_model: Any = None
                    ) -> tuple[dict[str, Any], list[float]]:
    from app.adapters.embedder import get_embedder
    from app.services.query import QueryInput, run_query
    from app.storage.candidates import Scope
    from app.storage.db import get_engine
    from bench.context import count_tokens
    from bench.evaluate import SystemAnswer

    recipe = _recipe(overrides)
    embedder, engine = get_embedder(), get_engine()
    answers, stage_ms = {}, []
    for q in ds.questions:
        scope = Scope(tenant_id=tenant_id, conversation_id=f"{ds.name}/{q.conversation_id}")
        started = time.perf_counter()
        with engine.connect() as conn:
            out = run_query(conn, QueryInput(q.question, scope, TOP_K, BUDGET, as_of=q.as_of), recipe, embedder,
                            reranker=None,
                            llm=None, fusion_model=fusion_model)
        ms = (time.perf_counter() - started) * 1000.0
        stage_ms.append(out.timings.get("learned", out.timings.get("reweight", 0.0)))
        answers[q.qid] = SystemAnswer(
            ranked=[str(it.event.event_id) for it in out.items],
            in_context={BUDGET: [str(e.event_id) for e, _ in out.context_items]},
            ctx_tokens={BUDGET: count_tokens(out.context) if out.context else 0},
            abstain=out.abstain, relevance=out.relevance, latency_ms={BUDGET: ms})
    return answers, stage_ms


def _recipe_key(overrides: dict[str, Any]) -> str:
    """A short digest of the recipe these overrides give on today's defaults and of the embedder:
    kept answers are asked again once a default or the embedder changes."""
    import hashlib

    from app.settings import get_settings

    dump = _recipe(overrides).model_dump() | {"embedder": get_settings().embedding_model_name}  # the vectors asked
    return hashlib.sha1(json.dumps(dump, sort_keys=True, default=str).encode()).hexdigest()[:10]


def _rows(summary: dict[str, Any], row: str) -> dict[str, float]:
    t = summary["table"].get(row) or {}
    return ({k: round(float(t.get(k, float("nan"))), 4) for k in KEYS + tuple(k for k in SESSION_KEYS if k in t)}
            | {"n": int(t.get("n", 0))})


def _cached_answers(key: str, make: Any) -> dict[str, Any]:
    """Answers that do not depend on the model (the learned ranker off, the baselines), kept under
    var/fusion/ between runs of the same day (the service's under a key naming its recipe): delete the
    files to ask again."""
    import pickle

    path = ROOT / "var" / "fusion" / f"eval-{datetime.now(UTC):%Y%m%d}-{key}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    answers = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(answers))
    return answers


def evaluate(tenant_id: int, only: tuple[str, ...] | None = None, prefetch: bool = False) -> dict[str, Any]:
    """The report; `only`: these data sets; `prefetch`: only ask (and keep) the learned-off answers and the
    baselines, for a later run with the model."""
    from app.adapters.fusion_ranker import MODEL_FILE, FusionRanker
    from app.settings import get_settings
    from bench.baselines import BASELINE_EMBEDDER, baseline_answers, run_baselines
    from bench.evaluate import summarize
    from bench.splits import load_split

    model = None if prefetch else FusionRanker.load(MODEL_FILE)
    sets = load_split("validation", names=only or ("locomo", "beam"))
    if "longmemeval" in sets:  # the haystacks the database was built with
        from bench.datasets import subset
        from app.storage.db import get_engine
        from bench.evaldb import built_conversations

        sets["longmemeval"] = subset(sets["longmemeval"], only=tuple(sorted(
            built_conversations(get_engine(), tenant_id, "longmemeval"))))
    result: dict[str, Any] = {"command": COMMAND, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                              "model": (model.meta if model else {}) | {"file": str(MODEL_FILE.relative_to(ROOT))},
                              "embedder": get_settings().embedding_model_name,
                              "datasets": {}}
    for name, ds in sets.items():
        systems: dict[str, Any] = {}
        stage: dict[str, float] = {}
        runs = [("learned off", {"learned": False}, None)]
        if model is not None:
            runs += [("learned + priors (default)", {"learned": True, "learned_priors": True}, model),
                     ("learned, priors off", {"learned": True, "learned_priors": False}, model)]
            for label, overrides, path in json.loads(os.environ.get("PALIMPSEST_FUSION_EVAL_EXTRA") or "[]"):
                runs.append((label, {"learned": True} | overrides, FusionRanker.load(Path(path))))
        for label, overrides, fm in runs:
            if label == "learned off":
                answers, ms = _cached_answers(f"{name}-default{_TOP}-{_recipe_key(overrides)}",
                                              lambda: service_answers(ds, tenant_id, overrides, fm))
            else:
                answers, ms = service_answers(ds, tenant_id, overrides, fm)
            systems[label] = summarize(ds, answers, [BUDGET], top_k=10)
            stage[label] = round(statistics.median(ms), 3) if ms else 0.0
            print(f"{name} {label} done", file=sys.stderr)
        base = _cached_answers(f"{name}-baselines-{BASELINE_EMBEDDER}", lambda: {
            b: baseline_answers(ds, rk, [BUDGET], TOP_K)
            for b, rk in run_baselines(ds, cache_dir=ROOT / "var" / "fusion" / "vectors").items()})
        for b, answers in base.items():
            systems[b] = summarize(ds, answers, [BUDGET], top_k=10)
        entry: dict[str, Any] = {"questions": len(ds.questions), "abstention": {
                                     k: {m: v for m, v in summ["abstention"].items() if m != "floors"}
                                     for k, summ in systems.items() if summ.get("abstention", {}).get("n")},
                                 "conversations": [c.id for c in ds.conversations], "systems": {},
                                 "stage_p50_ms": stage}
        for sysname, summ in systems.items():
            entry["systems"][sysname] = {
                "overall": _rows(summ, "overall"), "all": _rows(summ, "all") if "all" in summ["table"] else None,
                "per_category": {c: _rows(summ, c) for c in summ["table"] if c not in ("overall", "all")},
                "latency": summ["latency"]}
        result["datasets"][name] = entry
    if not prefetch:
        write(result)
    return result


def _line(name: str, r: dict[str, float], keys: tuple[str, ...] = KEYS) -> str:
    return f"| {name} | " + " | ".join(f"{r[k]:.3f}" for k in keys) + f" | {r['n']} |"


def markdown(result: dict[str, Any]) -> str:
    from bench.baselines import BASELINE_EMBEDDER

    m = result["model"]
    lines = [f"# Learned fusion on the validation split ({result['date']})", "",
             f"Command: `{result['command']}` (shared dev database, in-process, no reranker, no LLM, "
             f"top {TOP_K}, budget {BUDGET}; embedder {result.get('embedder', '?')}, dense baseline "
             f"{BASELINE_EMBEDDER}). Model: `{m['file']}`, {m['kind']}, trained {m['trained_at']} on "
             + "; ".join(f"{ds} {', '.join(ids)}" for ds, ids in m["trained_on"].items()) + ".", ""]
    for name, entry in result["datasets"].items():
        first = next(iter(entry["systems"].values()))["overall"]
        keys = KEYS + tuple(k for k in SESSION_KEYS if k in first)
        head = "| system | " + " | ".join(keys) + " | n |\n| --- |" + " ---: |" * (len(keys) + 1)
        views = [("overall", "without adversarial" if name == "locomo" else "without abstention")]
        if name == "locomo":
            views.append(("all", "all questions"))
        for view, title in views:
            lines += [f"## {name} validation ({', '.join(entry['conversations'])}), {title}", "", head]
            for sysname, s in entry["systems"].items():
                if s.get(view):
                    lines.append(_line(sysname, s[view], keys))
            lines.append("")
        if entry.get("abstention"):
            lines += ["Questions without evidence (abstention), how often each system abstains:", ""]
            lines += [f"- {k}: {v['n']} questions, abstains on {v['abstain_rate']:.3f}; false abstention on "
                      f"answerable ones {v['false_abstain_rate']:.3f}" for k, v in entry["abstention"].items()]
            lines.append("")
        lines += [f"Per category, r@10 / mrr ({name}):", "",
                  "| category | " + " | ".join(entry["systems"]) + " |", "| --- |" + " ---: |" * len(entry["systems"])]
        cats = sorted(next(iter(entry["systems"].values()))["per_category"])
        for c in cats:
            cells = [f"{s['per_category'][c]['r@10']:.3f} / {s['per_category'][c]['mrr']:.3f}"
                     if c in s["per_category"] else "" for s in entry["systems"].values()]
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        lines += ["", f"Median stage time (reweight with learned off, learned otherwise): {entry['stage_p50_ms']} ms", ""]
    return "\n".join(lines)


def write(result: dict[str, Any]) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    tag = os.environ.get("PALIMPSEST_FUSION_EVAL_TAG")
    stem = OUT_DIR / (f"fusion-validation-{datetime.now(UTC):%Y%m%d}" + (f"-{tag}" if tag else ""))
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    stem.with_suffix(".md").write_text(markdown(result) + "\n")
    print(f"wrote {stem}.md / .json", file=sys.stderr)
    print(markdown(result))
    return stem
