"""The role and speaker priors (issue 17, item 5) and the time anchor's default (item 7), fitted and
checked in-process on the development database (`bench/evaldb.py`), split by `bench/splits.json`.

    python -m bench.priors_eval fit        # a grid over the priors' sizes on the TRAIN split
    python -m bench.priors_eval validate speaker_beta=0 asker_beta=1 addressee_beta=0.5
                                           # VALIDATION: today's sizes vs these, with BM25 / dense / RRF
    python -m bench.priors_eval anchor     # as_of default: the scope's newest event vs "now" (train)
    python -m bench.priors_eval lme --var-dir var/eval-p --n 4 speaker_beta=0 asker_beta=1 addressee_beta=0.5
                                           # LongMemEval train, single-session-assistant, own database
    python -m bench.priors_eval report <JSON results...>   # the markdown report

The fit runs each question once through `app.services.query.run_query` with today's recipe and keeps
what the reweight stage was handed (the fused list, the intent, the per-event signals); every grid
point then replays only the reweight over it (`app.domain.retrieval.ranking.reweight_ranked`), which
is exact when no reranker runs (it does not here: a fresh install has none). Validation runs the whole
query for each setting. Metrics and baselines are `bench.metrics`, `bench.evaluate`, `bench.baselines`.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("PALIMPSEST_TORCH_THREADS", "1")

from bench.golden import ROOT  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
TOP, BUDGET = 50, 2000
TODAY = {"asker_beta": 1.0, "addressee_beta": 0.0, "speaker_beta": 0.25}
GRID = {"speaker_beta": (0.0, 0.05, 0.1, 0.15, 0.25),
        "asker_beta": (0.0, 0.1, 0.25, 0.5, 1.0),
        "addressee_beta": (0.0, 0.1, 0.25, 0.5, 1.0)}
RESULTS = ROOT / "bench" / "results"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def datasets(split: str) -> list[Any]:
    from bench.datasets import load_beam, load_locomo
    from bench.splits import select

    return [select(load_locomo(DATA), split), select(load_beam(DATA), split)]


def recipe_with(**sizes: float) -> Any:
    from app.domain.recipe import Recipe
    from app.settings import get_settings

    return Recipe.from_settings(get_settings()).with_overrides(sizes)


# ---------------------------------------------------------------- one question, in-process


def ask(tid: int, cid: str, question: str, recipe: Any, as_of: datetime | None = None) -> Any:
    from app.adapters.embedder import get_embedder
    from app.services.query import QueryInput, run_query
    from app.storage.candidates import Scope
    from app.storage.db import get_engine

    with get_engine().connect() as conn:
        return run_query(conn, QueryInput(question, Scope(tenant_id=tid, conversation_id=cid), TOP, BUDGET,
                                          as_of=as_of), recipe, get_embedder(), reranker=None, llm=None)


def answer_of(out: Any) -> Any:
    from bench.context import count_tokens
    from bench.evaluate import SystemAnswer

    ids = [str(e.event_id) for e, _ in out.context_items]
    return SystemAnswer(ranked=[str(it.event.event_id) for it in out.items], in_context={BUDGET: ids},
                        ctx_tokens={BUDGET: count_tokens(out.context) if out.context else 0},
                        abstain=bool(out.abstain), relevance=dict(out.relevance))


@dataclass
class Captured:
    items: list[tuple[Any, float, dict, dict]]  # (event, fused score, signals, stages) as reweight got them
    intent: Any
    query: str
    scope: Any
    sig: Any
    rows: Any
    final: list[str]  # what run_query returned (the replay of today's recipe must match it)


def capture(tid: int, ds: Any, recipe: Any) -> dict[str, Captured | list[str]]:
    """Each question once with `recipe`: what the reweight stage was handed (or the final ranking
    when the stage did not run)."""
    import app.services.query as service

    original = service.reweight_ranked
    seen: dict[str, Any] = {}

    def spy(ranked, intent, query, scope, rec, *, signals_of, events):  # noqa: ANN001, ANN202
        seen["args"] = ([(r.event, r.score, dict(r.signals), dict(r.stages)) for r in ranked], intent, query,
                        scope, signals_of, events)
        return original(ranked, intent, query, scope, rec, signals_of=signals_of, events=events)

    service.reweight_ranked = spy
    out: dict[str, Captured | list[str]] = {}
    try:
        for i, q in enumerate(ds.questions, 1):
            if not q.gold:
                continue
            seen.clear()
            res = ask(tid, f"{ds.name}/{q.conversation_id}", q.question, recipe, q.as_of)
            final = [str(it.event.event_id) for it in res.items]
            out[q.qid] = Captured(*seen["args"], final) if "args" in seen else final
            if i % 100 == 0:
                log(f"{ds.name}: captured {i}/{len(ds.questions)}")
    finally:
        service.reweight_ranked = original
    return out


def replay(cap: Captured | list[str], recipe: Any) -> list[str]:
    from app.domain.retrieval.ranking import RankedItem, reweight_ranked

    if isinstance(cap, list):
        return cap
    items = [RankedItem(ev, score, dict(sig), dict(stages)) for ev, score, sig, stages in cap.items]
    out = reweight_ranked(items, cap.intent, cap.query, cap.scope, recipe, signals_of=cap.sig, events=cap.rows)
    return [str(it.event.event_id) for it in out[:TOP]]


def score(ds: Any, ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Per category, `overall` (without the set-apart category) and `all`: r@5, r@10, all@10, mrr."""
    from bench.metrics import aggregate, rank_metrics

    recs = [{"category": q.category, **rank_metrics(ranked[q.qid][:10], q.gold)} for q in ds.questions
            if q.gold and q.qid in ranked]
    return aggregate(recs, ["r@5", "r@10", "all@10", "mrr"], apart=[c for c in ds.apart])


# ---------------------------------------------------------------- commands


def cached_capture(tid: int, ds: Any, recipe: Any, cache: Path | None) -> dict[str, Any]:
    """`capture`, kept in `cache` (a pickle per data set and split) when one is given."""
    import pickle

    path = cache / f"capture-{ds.name}-train.pkl" if cache else None
    if path is not None and path.exists():
        return pickle.loads(path.read_bytes())
    caps = capture(tid, ds, recipe)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(caps))
    return caps


def fit(tid: int, only: str | None = None, cache: Path | None = None) -> dict[str, Any]:
    base = recipe_with(**TODAY)
    sets = [ds for ds in datasets("train") if only in (None, ds.name)]
    caps = {ds.name: cached_capture(tid, ds, base, cache) for ds in sets}
    for ds in sets:  # the replay of today's sizes is what the service returned
        bad = [qid for qid, c in caps[ds.name].items() if not isinstance(c, list) and replay(c, base) != c.final]
        assert not bad, f"replay differs from run_query on {len(bad)} {ds.name} questions, e.g. {bad[:3]}"
    # A data set without roles (LoCoMo) is moved by the speaker prior alone: its grid is that one size.
    per_ds: dict[str, dict[tuple, dict]] = {}
    for ds in sets:
        roles = any(t.role for c in ds.conversations for t in c.turns)
        keys = tuple(GRID) if roles else ("speaker_beta",)
        per_ds[ds.name] = {}
        for combo in itertools.product(*(GRID[k] for k in keys)):
            rec = recipe_with(**(TODAY | dict(zip(keys, combo))))
            per_ds[ds.name][tuple(zip(keys, combo))] = \
                score(ds, {qid: replay(c, rec) for qid, c in caps[ds.name].items()})["all"]
        log(f"{ds.name}: {len(per_ds[ds.name])} grid points over {keys}")
    rows = []
    for combo in itertools.product(*GRID.values()):
        sizes = dict(zip(GRID, combo))
        per = {name: next(v for k, v in grid.items() if all(sizes[n] == x for n, x in k))
               for name, grid in per_ds.items()}
        objective = sum((t["r@10"] + t["mrr"]) / 2 for t in per.values()) / len(per)
        rows.append({"sizes": sizes, "objective": objective, **{k: v for k, v in per.items()}})
    rows.sort(key=lambda r: -r["objective"])
    today = next(r for r in rows if r["sizes"] == TODAY)
    return {"split": "train", "grid": GRID, "today": today, "best": rows[0], "top": rows[:10], "all": rows}


def validate(tid: int, fitted: dict[str, float], only: str | None = None) -> dict[str, Any]:
    from bench.baselines import baseline_answers, run_baselines
    from bench.evaluate import summarize

    out: dict[str, Any] = {"split": "validation", "today": TODAY, "fitted": fitted, "datasets": {}}
    for ds in [ds for ds in datasets("validation") if only in (None, ds.name)]:
        systems: dict[str, Any] = {}
        for name, sizes in (("service, today's priors", TODAY), ("service, fitted priors", fitted)):
            rec, answers, t0 = recipe_with(**sizes), {}, time.perf_counter()
            for q in ds.questions:
                answers[q.qid] = answer_of(ask(tid, f"{ds.name}/{q.conversation_id}", q.question, rec, q.as_of))
            log(f"{ds.name} {name}: {len(answers)} questions in {time.perf_counter() - t0:.0f}s")
            systems[name] = summarize(ds, answers, [BUDGET])
        rankings = run_baselines(ds, log=log)
        for b, ranks in rankings.items():
            systems[b] = summarize(ds, baseline_answers(ds, ranks, [BUDGET], TOP), [BUDGET])
        out["datasets"][ds.name] = {k: {"table": v["table"], "abstention": v["abstention"]} for k, v in systems.items()}
    return out


def anchor(tid: int) -> dict[str, Any]:
    """Train questions whose time expression resolves differently against the newest event and against
    now (no other question can differ): ranked with the default anchor and with as_of = now."""
    from app.domain.timeexpr import resolve_time_window

    now = datetime.now(UTC)
    rec = recipe_with()
    out: dict[str, Any] = {"split": "train", "now": now.isoformat(), "datasets": {}}
    for ds in datasets("train"):
        newest = {c.id: max(t.occurred_at for t in c.turns) for c in ds.conversations}
        qs = [q for q in ds.questions if q.gold and resolve_time_window(q.question, newest[q.conversation_id])
              != resolve_time_window(q.question, now)]  # only these can differ
        ranked: dict[str, dict[str, list[str]]] = {"newest event (default)": {}, "now": {}}
        for q in qs:
            cid = f"{ds.name}/{q.conversation_id}"
            for name, at in (("newest event (default)", None), ("now", now)):
                ranked[name][q.qid] = [str(i.event.event_id) for i in ask(tid, cid, q.question, rec, at).items]
        sub = type(ds)(ds.name, ds.conversations, qs, ds.apart)
        out["datasets"][ds.name] = {"n": len(qs), **{k: score(sub, v)["all"] for k, v in ranked.items()}}
    return out


def render(fits: list[dict], validations: list[dict], anchors: list[dict], lmes: list[dict]) -> str:
    """The markdown report of the JSON results."""
    def f(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["# Role and speaker priors, time anchor (issue 17, items 5 and 7)", ""]
    for fr in fits:
        names = ", ".join(k for k in fr["best"] if k not in ("sizes", "objective"))
        lines += [f"## Fit on the train split ({names}): mean of (r@10 + mrr) / 2 over every question with gold", "",
                  "| sizes | objective | " + " | ".join(f"{n} r@10 / mrr" for n in names.split(", ")) + " |",
                  "| --- | --- | " + " | ".join("---" for _ in names.split(", ")) + " |"]
        for row in [fr["today"], *fr["top"][:8]]:
            lines.append(f"| {row['sizes']}{' (today)' if row is fr['today'] else ''} | {f(row['objective'])} | "
                         + " | ".join(f"{f(row[n]['r@10'])} / {f(row[n]['mrr'])}" for n in names.split(", ")) + " |")
        lines.append("")
    keys = ["n", "r@5", "r@10", "all@10", "mrr", "er@2k"]
    for v in validations:
        for name, systems in v["datasets"].items():
            lines += [f"## Validation, {name} (today {v['today']}; fitted {v['fitted']})", ""]
            for row in ("all", "overall"):
                label = "every question" if row == "all" else "without the set-apart category"
                lines += [f"{label}:", "", "| system | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
                for sys_name, res in systems.items():
                    t = res["table"].get(row) or res["table"]["overall"]
                    lines.append(f"| {sys_name} | " + " | ".join(f(t[k]) for k in keys) + " |")
                lines.append("")
            cats = [c for c in next(iter(systems.values()))["table"] if c not in ("all", "overall")]
            lines += ["r@10 per category:", "", "| category | n | " + " | ".join(systems) + " |",
                      "|---" * (len(systems) + 2) + "|"]
            for c in cats:
                n = next(iter(systems.values()))["table"][c]["n"]
                lines.append(f"| {c} | {n} | " + " | ".join(f(r["table"][c]["r@10"]) for r in systems.values()) + " |")
            lines.append("")
    for an in anchors:
        lines += ["## The anchor's default: train questions whose window differs between the two anchors", "",
                  "| data | n | newest event (default) r@10 / mrr | now r@10 / mrr |", "|---|---|---|---|"]
        for name, d in an["datasets"].items():
            a_, b_ = d["newest event (default)"], d["now"]
            lines.append(f"| {name} | {d['n']} | {f(a_['r@10'])} / {f(a_['mrr'])} | {f(b_['r@10'])} / {f(b_['mrr'])} |")
        lines.append("")
    for lm in lmes:
        lines += [f"## LongMemEval_S train, {lm['category']}, {lm['questions']} questions (own database; as_of = the "
                  "question's date)", "", "| system | r@5 | r@10 | mrr | er@2k |", "|---|---|---|---|---|"]
        for sys_name, t in lm["systems"].items():
            lines.append(f"| {sys_name} | {f(t['r@5'])} | {f(t['r@10'])} | {f(t['mrr'])} | {f(t['er@2k'])} |")
        lines += ["", "first gold rank per question: " + "; ".join(
            f"{qid}: " + ", ".join(f"{k} {v}" for k, v in d.items() if k != "question")
            for qid, d in lm["first_gold_rank"].items()), ""]
    return "\n".join(lines)


def sizes_from(pairs: list[str]) -> dict[str, float]:
    got = {k: float(v) for k, v in (p.split("=", 1) for p in pairs)}
    unknown = set(got) - set(TODAY)
    if unknown:
        raise SystemExit(f"unknown sizes: {sorted(unknown)} (known: {sorted(TODAY)})")
    return TODAY | got


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["fit", "validate", "anchor", "lme", "report"])
    p.add_argument("sizes", nargs="*", help="asker_beta=.. addressee_beta=.. speaker_beta=.. (validate, lme)")
    p.add_argument("--var-dir", type=Path, default=ROOT / "var" / "eval")
    p.add_argument("--n", type=int, default=5, help="lme: how many questions")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--dataset", choices=["locomo", "beam"], default=None, help="fit, validate: only this data set")
    p.add_argument("--cache", type=Path, default=None, help="fit: keep each data set's capture here")
    a = p.parse_intermixed_args(argv)
    if a.command == "report":  # sizes: the JSON results, any kind, in order
        docs = [json.loads(Path(x).read_text()) for x in a.sizes]
        kinds: dict[str, list[dict]] = {"fit": [], "validate": [], "anchor": [], "lme": []}
        for d in docs:
            kinds["lme" if "category" in d else "fit" if "grid" in d else "validate" if "fitted" in d
                  else "anchor"].append(d)
        text = render(kinds["fit"], kinds["validate"], kinds["anchor"], kinds["lme"])
        (a.out or RESULTS / f"priors-{datetime.now(UTC):%Y%m%d-%H%M%S}.md").write_text(text + "\n")
        print(text)
        return 0
    t0 = time.perf_counter()
    if a.command == "lme":
        from bench.priors_lme import run_lme

        result = run_lme(a.var_dir.resolve(), a.n, TODAY, sizes_from(a.sizes), ask, answer_of, log, recipe_with,
                         BUDGET, TOP)
    else:
        from bench.evaldb import attach

        tid = attach(a.var_dir.resolve())
        result = {"fit": lambda: fit(tid, a.dataset, a.cache),
                  "validate": lambda: validate(tid, sizes_from(a.sizes), a.dataset),
                  "anchor": lambda: anchor(tid)}[a.command]()
    result["seconds"] = round(time.perf_counter() - t0, 1)
    path = a.out or RESULTS / f"priors-{a.command}-{datetime.now(UTC):%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    if a.command == "fit":
        result = {k: v for k, v in result.items() if k != "all"}
    print(json.dumps(result, indent=1, default=str))
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
