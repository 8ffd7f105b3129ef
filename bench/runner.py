"""Talks to the service over its public HTTP API: ingest a data set, wait until it is indexed,
ask every question at every token budget, and turn the responses into `SystemAnswer`s.

What is measured is what a user of the API gets: nothing here reaches into the service's process.
"""
from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from bench.client import Client, ServiceError
from bench.context import count_tokens
from bench.datasets import Dataset, Question, spread
from bench.evaluate import SystemAnswer

Log = Callable[[str], None]


def parse_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """`["rerank=false", "fusion.k=30", "intent=temporal"]` -> {"rerank": False, "fusion": {"k": 30},
    "intent": "temporal"}: values are JSON when they parse as JSON, else strings; dots nest."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--pipeline expects key=value, got {pair!r}")
        key, raw = pair.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError(f"--pipeline expects key=value, got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError(f"--pipeline {key!r} conflicts with an earlier value")  # noqa: TRY004
        node[parts[-1]] = value
    return out


# ---------------------------------------------------------------- ingest

def pending_total(status: dict[str, Any], layers: Sequence[str] | None = None) -> int:
    """Pending index tasks in a status response: every layer's, or only those named in `layers`."""
    pending = status.get("pending") or {}
    if not isinstance(pending, dict):
        return int(pending)
    return int(sum(int(v or 0) for k, v in pending.items() if layers is None or k in layers))


def ingest(client: Client, ds: Dataset, batch_size: int = 1000, index_timeout: float = 3600.0,
           poll_s: float = 0.5, fresh: bool = False, stall_s: float = 600.0, wait_for: Sequence[str] | None = None,
           log: Log = print, erase_others: bool = False, probe_s: float = 10.0) -> dict[str, Any]:
    """Post every turn (idempotent by event_id), then wait until every conversation is fully indexed
    (or, with `wait_for`, until those layers are). Throughput = events created / seconds from the
    first post until nothing (waited for) is pending. With `fresh`, the data set's conversations are
    deleted first, so everything is ingested anew, and with `erase_others` (a var dir the harness
    owns) every other conversation of the tenant too: an earlier run's (one that crashed mid-ingest,
    or ran another selection) would otherwise keep work queued ahead of this run's. Indexing stalls
    only when nothing moves in the whole service (`/metrics`), not merely in the data set's
    conversations. The pending counts left are in the result."""
    ids = [c.id for c in ds.conversations]
    if fresh:
        deleted = sum(client.delete_conversation(c) for c in ids)
        log(f"--fresh: deleted {deleted} events of {len(ds.conversations)} conversations")
        others = sorted(set(client.conversation_ids()) - set(ids)) if erase_others else []
        if others:
            n = sum(client.delete_conversation(c) for c in others)
            log(f"--fresh: also deleted {n} events of {len(others)} other conversations an earlier run left in "
                "this var dir (their queued work would be indexed before this run's)")
    before = client.service_pending()
    if before:
        log(f"warning: the service already has {before} (event, layer) rows waiting to be indexed: this run's "
            "conversations are indexed after them, and the time measured includes them")
    created = duplicate = 0
    t0 = time.perf_counter()
    for conv in ds.conversations:
        events = [t.to_event(conv.id) for t in conv.turns]
        for i in range(0, len(events), batch_size):
            for res in client.post_events(events[i:i + batch_size]):
                if res.get("status") == "duplicate":
                    duplicate += 1
                else:
                    created += 1
    post_s = time.perf_counter() - t0
    log(f"posted {created + duplicate} events ({created} created, {duplicate} duplicates) in {post_s:.1f}s")

    expected = {c.id: len(c.turns) for c in ds.conversations}
    deadline = time.monotonic() + index_timeout
    last_log = 0.0
    last_change, last_pending, last_probe, elsewhere = time.monotonic(), -1, 0.0, before
    statuses: dict[str, dict[str, Any]] = {}
    while True:
        statuses = {cid: client.status(cid) for cid in ids}
        pending = sum(pending_total(s, wait_for) for s in statuses.values())
        if pending == 0:
            break
        now = time.monotonic()
        if pending != last_pending:
            last_change, last_pending = now, pending
        elif now - last_probe >= probe_s:  # still here: the worker may be busy with other conversations
            last_probe, was = now, elsewhere
            if (elsewhere := client.service_pending()) != was:
                last_change = now
        if now > deadline:
            raise ServiceError(f"still {pending} pending index tasks after {index_timeout}s")
        if now - last_change > stall_s:
            raise ServiceError(f"indexing made no progress for {stall_s:.0f}s ({pending} pending here, {elsewhere} "
                               "in the whole service): is a worker (and the beat sweeper) running?")
        if now - last_log > 10:
            kinds: dict[str, int] = {}
            for s in statuses.values():
                for k, v in (s.get("pending") or {}).items():
                    kinds[k] = kinds.get(k, 0) + int(v or 0)
            log(f"indexing: {pending} pending {({k: v for k, v in kinds.items() if v})} "
                f"(service-wide at the last look: {elsewhere}) after {time.perf_counter() - t0:.0f}s")
            last_log = now
        time.sleep(poll_s)
    total_s = time.perf_counter() - t0
    mismatched = {cid: (statuses[cid].get("events"), expected[cid]) for cid in ids
                  if statuses[cid].get("events") is not None and statuses[cid].get("events") != expected[cid]}
    if mismatched:
        log(f"warning: event counts differ from the data set (service, data): {mismatched}")
    left: dict[str, int] = {}
    for st in statuses.values():
        for k, v in (st.get("pending") or {}).items():
            if v:
                left[k] = left.get(k, 0) + int(v)
    if left:
        log(f"warning: querying with index work still pending (not waited for): {left}")
    out = {
        "waited_for": list(wait_for) if wait_for else "all layers", "pending_at_query_time": left,
        "events": created + duplicate, "created": created, "duplicate": duplicate,
        "post_s": post_s, "until_indexed_s": total_s, "pending_before": before,
        "events_per_s": (created / total_s) if created else None,
        "count_mismatch": mismatched,
    }
    if not created:
        out["note"] = "every event was already there (re-run on the same var dir): no throughput measured"
    log(f"{'indexed (' + ','.join(wait_for) + ')' if wait_for else 'fully indexed'} after {total_s:.1f}s"
        + (f": {created / total_s:.1f} events/s" if created else ""))
    return out


# ---------------------------------------------------------------- queries

def query_body(q: Question, budget: int, top_k: int, pipeline: dict[str, Any] | None,
               last_event: datetime | None = None) -> dict[str, Any]:
    """The request for one question. `as_of` (the time relative dates are read from): the question's own
    date where the data has one (LongMemEval), else `last_event`, the conversation's last turn."""
    body: dict[str, Any] = {"query": q.question, "conversation_id": q.conversation_id, "top_k": top_k,
                            "token_budget": budget}
    as_of = q.as_of or last_event
    if as_of is not None:
        body["as_of"] = as_of.isoformat()
    if pipeline:
        body["pipeline"] = pipeline
    return body


def _ranked(resp: dict[str, Any]) -> list[str]:
    return [str(it.get("event_id") if it.get("event_id") is not None else it.get("id"))
            for it in resp.get("items") or []]


def _in_context(resp: dict[str, Any]) -> list[str]:
    return [str(it.get("event_id") if it.get("event_id") is not None else it.get("id"))
            for it in resp.get("items") or [] if it.get("in_context")]


def gold_in_context(resp: dict[str, Any], gold: Sequence[str], lines: dict[str, str]) -> tuple[list[str], str]:
    """Which gold turns a service response's context holds, and how that was decided.

    1. `context_items` in the response (every event in the context): exact; used when present.
    2. Otherwise the union of (a) items flagged `in_context` and (b) gold turns whose rendered line
       (`[YYYY-MM-DD HH:MM] speaker: content`, the service's own format) is verbatim in the context.
       (b) is needed because `items` holds only the top_k, while the context may hold turns ranked
       lower; a verbatim line with its timestamp and speaker cannot be there by accident."""
    if isinstance(resp.get("context_items"), list):  # every event in the context, with its client id
        ids = {str(c.get("event_id") if c.get("event_id") is not None else c.get("id")) for c in resp["context_items"]}
        return [g for g in gold if g in ids], "context_items"
    flagged = set(_in_context(resp))
    text = resp.get("context") or ""
    found = [g for g in gold if g in flagged or (lines.get(g) and lines[g] in text)]
    return found, "flags+text"


def service_answers(client: Client, ds: Dataset, budgets: Sequence[int], top_k: int,
                    pipeline: dict[str, Any] | None = None, concurrency: int = 2, latency_sample: int = 300,
                    warmup: int = 3,
                    max_error_rate: float = 0.05, log: Log = print) -> tuple[dict[str, SystemAnswer], dict[str, Any]]:
    """Ask every question at every budget.

    First `latency_sample` questions (spread evenly; 0 = all) are asked at the largest budget one
    request at a time: their latencies, those of a single client, are the reported p50/p95. Every
    other query follows with `concurrency` requests in flight, untimed. The ranked items (r@k, mrr)
    come from the largest budget's response. Gold presence in a context is
    decided by `gold_in_context`; the context's tokens are counted with the fixed tokenizer and
    checked against the budget and the service's own `context_tokens`."""
    from bench.context import render_turn

    budgets = sorted(set(budgets))
    big = budgets[-1]
    lines = {c.id: {t.event_id: render_turn(t.speaker, t.content, t.occurred_at) for t in c.turns}
             for c in ds.conversations}
    last = {c.id: max(t.occurred_at for t in c.turns) for c in ds.conversations if c.turns}
    answers: dict[str, SystemAnswer] = {}
    stage_ms: dict[str, list[float]] = {}
    checks: dict[str, Any] = {"over_budget": 0, "reported_tokens_differ": 0, "flagged_not_in_text": 0,
                              "gold_present": 0, "gold_present_not_flagged": 0, "responses": 0,
                              "presence_method": {}, "errors": []}
    lock = threading.Lock()
    questions = list(ds.questions)
    if not questions:
        return answers, checks

    for q in questions[:warmup]:
        try:
            client.query(query_body(q, big, top_k, pipeline, last.get(q.conversation_id)))
        except ServiceError as exc:
            raise ServiceError(f"the first queries fail: {exc}") from exc

    def record(q: Question, budget: int, resp: dict[str, Any] | None, ms: float | None, err: str | None) -> None:
        with lock:
            ans = answers.setdefault(q.qid, SystemAnswer(ranked=[], in_context={}, ctx_tokens={}))
            if err is not None:
                ans.error = err
                checks["errors"].append(f"{q.qid}@{budget}: {err}")
                ans.in_context[budget] = []
                ans.ctx_tokens[budget] = 0
                return
            assert resp is not None
            text = resp.get("context") or ""
            ntok = count_tokens(text) if text else 0
            found, method = gold_in_context(resp, q.gold, lines[q.conversation_id])
            ans.in_context[budget] = found
            ans.ctx_tokens[budget] = ntok
            checks["responses"] += 1
            checks["presence_method"][method] = checks["presence_method"].get(method, 0) + 1
            if ntok > budget:
                checks["over_budget"] += 1
            reported = resp.get("context_tokens")
            if reported is not None and int(reported) != ntok:
                checks["reported_tokens_differ"] += 1
            for it in resp.get("items") or []:  # flagged in_context, but its text is not in the context
                snippet = str(it.get("content") or "")[:80]
                if it.get("in_context") and snippet and snippet not in text:
                    checks["flagged_not_in_text"] += 1
            flagged = set(_in_context(resp))
            checks["gold_present"] += len(found)
            checks["gold_present_not_flagged"] += sum(1 for g in found if g not in flagged)
            if budget == big:
                ans.ranked = _ranked(resp)
                ans.abstain = bool(resp.get("abstain", False))
                ans.relevance = {k: float(v) for k, v in (resp.get("relevance") or {}).items()}
            if ms is not None:
                ans.latency_ms[budget] = ms
                for stage, v in (resp.get("timings_ms") or {}).items():  # where the timed queries' time went
                    stage_ms.setdefault(stage, []).append(float(v))

    def ask(q: Question, budget: int, timed: bool) -> None:
        try:
            resp, ms = client.query(query_body(q, budget, top_k, pipeline, last.get(q.conversation_id)))
            record(q, budget, resp, ms if timed else None, None)
        except (ServiceError, ValueError, KeyError) as exc:
            record(q, budget, None, None, str(exc)[:300])

    def check_errors(done: int) -> None:
        n_err = len(checks["errors"])
        if n_err > 10 and n_err > max_error_rate * max(done, 1):
            raise ServiceError(f"{n_err} of {done} queries failed; first: {checks['errors'][0]}")

    t0 = time.perf_counter()
    timed = spread(questions, latency_sample) if latency_sample else questions
    timed_ids = {q.qid for q in timed}
    for i, q in enumerate(timed, 1):
        ask(q, big, True)
        if i % 100 == 0 or i == len(timed):
            check_errors(i)
            log(f"budget {big}, one at a time (timed): {i}/{len(timed)} questions, {time.perf_counter() - t0:.0f}s")
    rest = [(q, big) for q in questions if q.qid not in timed_ids] + [(q, b) for q in questions for b in budgets[:-1]]
    if rest:
        t1 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = [pool.submit(ask, q, b, False) for q, b in rest]
            for i, f in enumerate(as_completed(futures), 1):
                f.result()
                if i % 500 == 0 or i == len(futures):
                    check_errors(len(timed) + i)
                    log(f"the other queries, {concurrency} in flight: {i}/{len(futures)}, "
                        f"{time.perf_counter() - t1:.0f}s")
    checks["query_s"] = time.perf_counter() - t0
    checks["stage_ms"] = {stage: {"n": len(v), "p50": round(statistics.median(v), 2),
                                  "mean": round(statistics.fmean(v), 2)} for stage, v in stage_ms.items()}
    checks["n_errors"] = len(checks["errors"])
    checks["errors"] = checks["errors"][:20]
    return answers, checks
