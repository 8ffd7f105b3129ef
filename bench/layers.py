"""`palimpsest bench layers`: the product's own layer code, in process, scored on the labelled set.

For each conversation of bench/data/layers/ the turns become `LayerEvent`s and go through the same
domain functions the workers call: `consolidation.consolidate` (assertions and the timeline with its
superseded-by links), `timeturns.resolve_turns` (each turn against its own time and what the turns
before it settled) and the
memory-graph extractor `extractors.choose_extractor` (rules; with `encode`, entity merging by name
embeddings as the service does when `graph_entity_merge` is on; with `llm`, the product's LLM
extractor over that client, as a build does when PALIMPSEST_LLM_BASE_URL is set). No database, no
service. Scores (bench/layers_score.py) are summed per split (dev, test) and written as JSON and Markdown.

With an LLM, the memory graph (the entity clusters) and the timeline's assertions (and so its
supersessions) are the LLM's (`extractors.choose_extractor`, `extractors.extract_assertion_set`, then
`consolidation.build_timeline`), while time spans still come from the rule layer (timeparse); the
results say which layer came from which (`scored_from`). Every LLM call
is counted; a failed call (`LLMError`: HTTP error, timeout) is recorded with the chunks the extractor
then handed to its rules, so a run whose LLM failed is never mistaken for a measurement of the LLM.
"""
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable, Sequence

from app.domain.layers import consolidation
from app.domain.layers.assertion_spans import SpanModel
from app.domain.layers.events import LayerEvent
from app.domain.layers.extractors import choose_extractor, extract_assertion_set
from app.domain.layers.graph_extract import Encode
from app.domain.layers.timeturns import resolve_turns
from app.ports import LLM, LLMError
from app.services.consolidation_build import span_model
from bench.layers_data import DATA_DIR, SPLITS, Conversation, load_set
from bench.layers_score import (
    Counts,
    PredAssertion,
    PredEntity,
    PredTime,
    b3,
    prf,
    score_assertions,
    score_entities,
    score_times,
    share,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Predictions:
    assertions: list[PredAssertion]
    times: list[PredTime]
    entities: list[PredEntity]
    extractor: str = "rules"  # the memory-graph extractor that ran ("rules" or "llm")
    llm_stats: dict | None = None  # the LLM extractor's chunk counts (chunks, llm_chunks, fallback_chunks, ...)


class CountedLLM:
    """The product's LLM client as handed to the extractor, with its calls and failures counted.
    It only forwards: the HTTP request, retries and errors are the client's own."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.model = llm.model
        self.calls = 0
        self.failures: list[str] = []

    def chat(self, messages: Sequence[dict[str, str]], *, json_mode: bool = False,
             timeout_s: float | None = None) -> str:
        self.calls += 1
        try:
            return self.llm.chat(messages, json_mode=json_mode, timeout_s=timeout_s)
        except LLMError as exc:
            self.failures.append(str(exc))
            raise


def events_of(conv: Conversation) -> list[LayerEvent]:
    return [LayerEvent(id=t.id, speaker=t.speaker, content=t.text, occurred_at=t.at, conversation_id=conv.id, seq=i)
            for i, t in enumerate(conv.turns)]


def predict(conv: Conversation, encode: Encode | None = None, llm: LLM | None = None,
            spans: SpanModel | None = None) -> Predictions:
    """What the product's layers make of one conversation, as plain predictions. `spans`: the learned
    reader of names joined with the rules (without an LLM), as the service's consolidation does."""
    events = events_of(conv)
    fragment = choose_extractor(encode, llm).extract(events)
    if llm is None:
        timeline, assertion_stats = consolidation.consolidate(events, spans=spans).timeline, None
    else:  # the LLM's assertions, on the timeline the product builds from them
        extraction = extract_assertion_set(events, llm)
        timeline, assertion_stats = consolidation.build_timeline(extraction.assertions)[0], extraction.stats
    assertions = [PredAssertion(a.id, a.event_id, a.entity, a.attribute, a.value, a.effective_day, a.negated,
                                a.superseded_by) for a in timeline]
    times = []
    for t, (_, found) in zip(conv.turns, resolve_turns([(t.text, t.at) for t in conv.turns])):
        for m in found:
            start = end = None
            if m.resolved and m.range_start and m.range_end:
                start, end = date.fromisoformat(m.range_start), date.fromisoformat(m.range_end)
            times.append(PredTime(t.id, m.start, m.end, m.surface, start, end))
    entities = [PredEntity((e.name, *e.aliases)) for e in fragment.entities]
    llm_stats = fragment.stats.get("llm")
    return Predictions(assertions, times, entities, fragment.extractor,
                       {**llm_stats, "assertions": assertion_stats} if llm_stats and assertion_stats else llm_stats)


@dataclass
class SplitScore:
    assertions: Counts = field(default_factory=Counts)
    supersessions: Counts = field(default_factory=Counts)
    times: Counts = field(default_factory=Counts)
    entities: Counts = field(default_factory=Counts)
    entities_named: Counts = field(default_factory=Counts)
    conversations: int = 0

    def add(self, other: "SplitScore") -> None:
        self.assertions += other.assertions
        self.supersessions += other.supersessions
        self.times += other.times
        self.entities += other.entities
        self.entities_named += other.entities_named
        self.conversations += other.conversations

    def metrics(self) -> dict:
        a, s, t, e, en = self.assertions, self.supersessions, self.times, self.entities, self.entities_named
        return {
            "conversations": self.conversations,
            "assertions": {**prf(a["tp"], a["fp"], a["fn"]), "validity_exact": share(a["validity_exact"], a["tp"]),
                           "validity_overlap": share(a["validity_overlap"], a["tp"])},
            "supersessions": prf(s["tp"], s["fp"], s["fn"]),
            "times": {"gold": t["gold"], "exact": share(t["exact"], t["gold"]), "overlap": share(t["overlap"], t["gold"]),
                      "detected": share(t["detected"], t["gold"]), "predicted": t["predicted"], "spurious": t["spurious"],
                      "detection_precision": share(t["predicted"] - t["spurious"], t["predicted"])},
            "entities": {**prf(e["tp"], e["fp"], e["fn"]), "b3": b3(e)},
            "entities_without_speakers": {**prf(en["tp"], en["fp"], en["fn"]), "b3": b3(en)},
        }


def score_conversation(conv: Conversation, pred: Predictions) -> tuple[SplitScore, list[str]]:
    sc = SplitScore(conversations=1)
    sc.assertions, sc.supersessions, errs = score_assertions(conv, pred.assertions)
    sc.times, terrs = score_times(conv, pred.times)
    sc.entities, eerrs = score_entities(conv, pred.entities)
    sc.entities_named, _ = score_entities(conv, pred.entities, skip_speaker_only=True)
    return sc, errs + terrs + eerrs


def _commit() -> str:
    """The commit of the `app` package actually imported ("+dirty" when app/ differs from it);
    PALIMPSEST_BENCH_COMMIT names it when the code runs from an export (`git archive`) with no history."""
    import os

    import app

    if os.environ.get("PALIMPSEST_BENCH_COMMIT"):
        return os.environ["PALIMPSEST_BENCH_COMMIT"]

    root = Path(app.__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return f"unknown (app from {root})"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "app"], cwd=root, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return f"unknown (app from {root})"


def _llm_summary(llm: CountedLLM, rows: list[dict]) -> dict:
    chunks = {k: sum((r.get("llm") or {}).get(k, 0) for r in rows) for k in ("chunks", "llm_chunks", "fallback_chunks")}
    reasons: dict[str, int] = {}
    for r in rows:
        for why, n in ((r.get("llm") or {}).get("fallback_reasons") or {}).items():
            reasons[why] = reasons.get(why, 0) + n
    assertions: dict = {"batches": 0, "llm_batches": 0, "fallback_batches": 0, "fallback_reasons": {}, "items": 0,
                        "kept": 0, "dropped": {}}
    for r in rows:  # the assertion extractor's counts (llm_assertions), summed like the graph's
        st = (r.get("llm") or {}).get("assertions") or {}
        for k in ("batches", "llm_batches", "fallback_batches", "items", "kept"):
            assertions[k] += st.get(k, 0)
        for k in ("fallback_reasons", "dropped"):
            for why, n in (st.get(k) or {}).items():
                assertions[k][why] = assertions[k].get(why, 0) + n
    return {"model": llm.model, "base_url": getattr(llm.llm, "base_url", None), "calls": llm.calls,
            "failed_calls": len(llm.failures), "errors": list(dict.fromkeys(llm.failures))[:5],
            **chunks, "fallback_reasons": reasons, "assertions": assertions}


def run(split: str = "all", data_dir: Path = DATA_DIR, encode: Encode | None = None,
        log: Callable[[str], None] = lambda _: None, note: str | None = None, llm: LLM | None = None,
        stop_on_llm_failure: bool = False) -> dict:
    """Score every conversation of `split`; the result is plain JSON data. With `llm` the memory graph
    (the entity clusters) comes from the product's LLM extractor over that client; `stop_on_llm_failure`
    ends the run after the first conversation on which an LLM call failed (`llm.stopped_after` names it).
    Without one, the timeline's claims are the rules' joined with the shipped span model's, as the
    service makes them (`PALIMPSEST_SPAN_CLAIMS=false`: the rules' alone)."""
    convs = load_set(split, data_dir)
    spans = span_model() if llm is None else None
    counted = CountedLLM(llm) if llm is not None else None
    per_split = {s: SplitScore() for s in SPLITS}
    rows, errors = [], {s: [] for s in SPLITS}
    t0 = time.perf_counter()
    for conv in convs:
        pred = predict(conv, encode, counted, spans)
        sc, errs = score_conversation(conv, pred)
        per_split[conv.split].add(sc)
        errors[conv.split].extend(errs)
        rows.append({"id": conv.id, "split": conv.split, "register": conv.register, **sc.metrics(),
                     "extractor": pred.extractor, **({"llm": pred.llm_stats} if pred.llm_stats else {})})
        log(f"{conv.split} {conv.id}: {len(errs)} errors"
            + (f", LLM chunks {pred.llm_stats['llm_chunks']}/{pred.llm_stats['chunks']}" if pred.llm_stats else ""))
        if stop_on_llm_failure and counted and counted.failures:
            stopped = conv.id
            break
    else:
        stopped = None
    splits = {s: per_split[s].metrics() for s in SPLITS if per_split[s].conversations}
    graph = ("llm" if counted else "rules") + ("+embedding-merge" if encode else "")
    return {
        "benchmark": "layers",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _commit(),
        "note": note or "",
        "extractor": graph,
        "llm": _llm_summary(counted, rows) | {"stopped_after": stopped} if counted else None,
        "scored_from": {"assertions": "llm (assertion extractor, consolidation's timeline)" if counted
                        else _rules(spans),
                        "supersessions": "llm (assertion extractor, consolidation's timeline)" if counted
                        else _rules(spans),
                        "times": "rules (timeparse)", "entities": f"{graph} (memory-graph extractor)"},
        "split": split,
        "seconds": round(time.perf_counter() - t0, 2),
        "dataset": {s: sum(c.split == s for c in convs) for s in SPLITS}
        | {"turns": sum(len(c.turns) for c in convs), "assertions": sum(len(c.assertions) for c in convs),
           "supersessions": sum(len(a.supersedes) for c in convs for a in c.assertions),
           "times": sum(t.start is not None for c in convs for t in c.times),
           "entities": sum(len(c.entities) for c in convs)},
        "splits": splits,
        "conversations": rows,
        "errors": errors,
    }


def _rules(spans: SpanModel | None) -> str:
    return f"rules + span model {spans.version} (consolidation)" if spans is not None else "rules (consolidation)"


def markdown(result: dict, errors: int = 0) -> str:
    llm = result.get("llm")
    who = result["extractor"] + (f" {llm['model']}" if llm else "")
    lines = [f"# Layers on the labelled set ({result['created']}, commit {result['commit']}, {who})", ""]
    if llm:
        la = llm["assertions"]
        lines += [f"Memory graph (entity clusters) by the LLM extractor, model `{llm['model']}` at {llm['base_url']}: "
                  f"{llm['calls']} calls, {llm['failed_calls']} failed; {llm['llm_chunks']} of {llm['chunks']} chunks "
                  f"extracted by the LLM, {llm['fallback_chunks']} by its rule fallback"
                  + (f" ({', '.join(f'{k}: {v}' for k, v in llm['fallback_reasons'].items())})"
                     if llm["fallback_reasons"] else "")
                  + ".", "",
                  f"Assertions and supersessions by the LLM assertion extractor: {la['llm_batches']} of {la['batches']} "
                  f"batches extracted by the LLM, {la['fallback_batches']} by its rule fallback"
                  + (f" ({', '.join(f'{k}: {v}' for k, v in la['fallback_reasons'].items())})"
                     if la["fallback_reasons"] else "")
                  + f"; {la['kept']} of {la['items']} items kept"
                  + (f", dropped: {', '.join(f'{k} {v}' for k, v in sorted(la['dropped'].items()))}"
                     if la["dropped"] else "")
                  + ". Time spans come from the rule layer (timeparse) either way.", ""]
        if llm["failed_calls"]:
            lines += [f"**The LLM failed** ({llm['errors'][0]}): the chunks and batches it failed on were scored with the "
                      "rules, so the entity, assertion and supersession scores below do not measure the LLM"
                      + (f"; the run stopped after {llm['stopped_after']}." if llm.get("stopped_after") else "."), ""]
    lines += ["| split | conv | assertions P / R / F1 | supersessions P / R / F1 | validity exact / overlap "
              "| time exact | time overlap | time detected / spurious | entities P / R / F1 | entities B³ F1 "
              "| named entities F1 |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s, m in result["splits"].items():
        a, su, t, e, en = m["assertions"], m["supersessions"], m["times"], m["entities"], m["entities_without_speakers"]
        lines.append(
            f"| {s} | {m['conversations']} | {a['precision']:.2f} / {a['recall']:.2f} / **{a['f1']:.2f}** "
            f"| {su['precision']:.2f} / {su['recall']:.2f} / **{su['f1']:.2f}** "
            f"| {a['validity_exact']:.2f} / {a['validity_overlap']:.2f} | **{t['exact']:.2f}** | {t['overlap']:.2f} "
            f"| {t['detected']:.2f} / {t['spurious']} | {e['precision']:.2f} / {e['recall']:.2f} / **{e['f1']:.2f}** "
            f"| {e['b3']['f1']:.2f} | {en['f1']:.2f} |")
    d = result["dataset"]
    if result.get("note"):
        lines += ["", result["note"]]
    lines += ["", f"Set: {d['dev']} dev + {d['test']} test conversations, {d['turns']} turns, {d['assertions']} "
              f"assertions, {d['supersessions']} supersessions, {d['times']} time spans, {d['entities']} entity "
              "clusters (bench/data/layers/). Targets on test: assertions and supersessions F1 >= 0.8, "
              "time exact >= 0.9, entity clusters F1 >= 0.85.", ""]
    lines += ["| conversation | split | assertions F1 | supersessions F1 | time exact | entities F1 |", "|---|---|---|---|---|---|"]
    for r in result["conversations"]:
        lines.append(f"| {r['id']} | {r['split']} | {r['assertions']['f1']:.2f} | {r['supersessions']['f1']:.2f} "
                     f"| {r['times']['exact']:.2f} | {r['entities']['f1']:.2f} |")
    if errors:
        for s, errs in result["errors"].items():
            if s == "test" and result["split"] != "test" and "test" in result["splits"]:
                lines += ["", f"## test: {len(errs)} errors, not shown (held apart: ask with --split test)"]
                continue
            if errs:
                lines += ["", f"## {s}: first {min(errors, len(errs))} of {len(errs)} errors", ""]
                lines += [f"- {e}" for e in errs[:errors]]
    return "\n".join(lines) + "\n"


def write(result: dict, out_dir: Path, tag: str | None = None) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = out_dir / f"layers-{stamp}{'-' + tag if tag else ''}"
    paths = {"json": base.with_suffix(".json"), "markdown": base.with_suffix(".md")}
    saved = dict(result)
    if result["split"] != "test":  # the held-apart set's errors stay out of files people tune against
        saved["errors"] = {s: e for s, e in result["errors"].items() if s != "test"}
        saved["errors_withheld"] = {"test": len(result["errors"].get("test", []))}
    paths["json"].write_text(json.dumps(saved, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown(result, errors=0), encoding="utf-8")
    return paths
