"""`palimpsest bench locomo|beam|longmemeval|ablate|scale|load|layers`: the benchmark's commands.

The product's CLI mounts `bench_app` as `bench` through the `palimpsest.commands` entry point in
pyproject.toml; the product itself never imports this package. Also runnable alone:
`python -m bench.cli locomo --limit 20`.
"""
from __future__ import annotations

import time
from pathlib import Path

import typer

from bench.ablate import STAGES, ablate
from bench.ablate import markdown as ablation_markdown
from bench.datasets import default_data_dir
from bench.harness import DEFAULT_BUDGETS, REPO_ROOT, RunOptions, run
from bench.load import load_command
from bench.provenance import TrainOverlapError
from bench.report import markdown
from bench.runner import parse_overrides
from bench.splits import SPLITS

bench_app = typer.Typer(help="Recall benchmarks through the HTTP API, with baselines in the same run.",
                        no_args_is_help=True)

_T0 = time.perf_counter()


def _log(msg: str) -> None:
    typer.echo(f"[{time.perf_counter() - _T0:7.1f}s] {msg}", err=True)


def _budgets(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(sorted({int(x) for x in text.replace(" ", "").split(",") if x}))
    except ValueError as exc:
        raise typer.BadParameter(f"--budgets expects comma-separated integers, got {text!r}") from exc
    if not vals or min(vals) <= 0:
        raise typer.BadParameter("--budgets needs positive token counts")
    return vals


def _split(value: str) -> str:
    if value not in SPLITS:
        raise typer.BadParameter(f"--split is one of {', '.join(SPLITS)}, not {value!r}")
    return value


def _run(benchmark: str, data_dir: Path | None, url: str | None, api_key: str | None,
         limit: int | None, conversations: int | None, pipeline: list[str], budgets: str, top_k: int,
         out_dir: Path, concurrency: int, baselines_only: bool, var_dir: Path, tag: str | None,
         keep_running: bool, fresh: bool, latency_sample: int, wait_for: str | None, only: str | None = None,
         *, split: str = "validation", allow_train_overlap: bool = False, reranker: Path | None = None) -> None:
    try:
        overrides = parse_overrides(pipeline or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    data = data_dir or default_data_dir()
    if not data.exists():
        raise typer.BadParameter(f"no data directory at {data} (set --data-dir or PALIMPSEST_BENCH_DATA)")
    opts = RunOptions(benchmark=benchmark, data_dir=data, url=url, api_key=api_key, limit=limit,
                      conversations=conversations, only=tuple(x.strip() for x in (only or "").split(",") if x.strip()),
                      pipeline=overrides, budgets=_budgets(budgets), top_k=top_k,
                      out_dir=out_dir, concurrency=concurrency, baselines_only=baselines_only, var_dir=var_dir,
                      tag=tag, keep_running=keep_running, fresh=fresh, latency_sample=latency_sample,
                      wait_for=tuple(x.strip() for x in wait_for.split(",") if x.strip()) if wait_for else None,
                      split=split, allow_train_overlap=allow_train_overlap, reranker=reranker)
    try:
        result, paths = run(opts, log=_log)
    except TrainOverlapError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    typer.echo(markdown(result))
    for kind, p in paths.items():
        typer.echo(f"{kind}: {p}")


_DATA = typer.Option(None, "--data-dir", envvar="PALIMPSEST_BENCH_DATA",
                     help="Folder holding locomo/, beam100k/ and longmemeval/ [default: ../shared/data from the repo root]")
_URL = typer.Option(None, "--url", help="A running service; without it the harness starts one on the embedded default.")
_KEY = typer.Option(None, "--api-key", envvar="PALIMPSEST_API_KEY", help="API key for --url.")
_LIMIT = typer.Option(None, "--limit", min=1,
                      help="Quick subset: N questions per conversation, spread evenly over its questions.")
_SPLIT = typer.Option("validation", "--split", help="Which conversations (bench/splits.json): train, validation "
                      "(reported results) or all.", callback=lambda v: _split(v))
_OVERLAP = typer.Option(False, "--allow-train-overlap", help="Score even when the embedder or reranker was trained "
                        "on some evaluated conversations (otherwise the run refuses); the report says so.")
_RERANKER = typer.Option(None, "--reranker", help="The reranker directory the service uses: passed to the service "
                         "the harness starts, recorded (and checked for training overlap) for --url.")
_CONVS = typer.Option(None, "--conversations", min=1, help="Only the first N conversations (ingest and questions).")
_ONLY = typer.Option(None, "--only", help="Only these conversations, comma-separated ids (e.g. the reranker's "
                     "held-out conv-43,conv-44,conv-47).")
_PIPE = typer.Option([], "--pipeline", help="key=value passed in the query's \"pipeline\" object (repeatable; "
                     "JSON values, else strings; dotted keys nest).")
_BUDGETS = typer.Option(",".join(map(str, DEFAULT_BUDGETS)), "--budgets", help="Token budgets, comma-separated.")
_TOPK = typer.Option(10, "--top-k", min=1, help="Items asked for per query (r@k, mrr are over these).")
_OUT = typer.Option(REPO_ROOT / "bench" / "results", "--out-dir", help="Where the JSON, Markdown and PNG go.")
_CONC = typer.Option(2, "--concurrency", min=1, help="Requests in flight for the untimed queries.")
_WAIT = typer.Option(None, "--wait-for", help="Index layers to wait for before querying, comma-separated "
                     "(e.g. embed); default: every layer. Work left pending is recorded in the results.")
_LAT = typer.Option(300, "--latency-sample", min=0,
                    help="Questions asked one at a time at the largest budget to time latency (0 = all).")
_BONLY = typer.Option(False, "--baselines-only", help="Run the baselines alone (no service).")
_VAR = typer.Option(REPO_ROOT / "var" / "bench", "--var-dir", help="Embedded service data and the embedding cache.")
_TAG = typer.Option(None, "--tag", help="Added to the result file names (e.g. an ablation's name).")
_KEEP = typer.Option(False, "--keep-running", help="Leave the embedded PostgreSQL and Redis running afterwards.")
_FRESH = typer.Option(False, "--fresh", help="Delete the data set's conversations first and ingest them anew "
                      "(measures ingest throughput; without it a re-run reuses what is already indexed). On the "
                      "embedded service (no --url) every other conversation in --var-dir is deleted too.")


@bench_app.command("locomo")
def locomo(data_dir: Path | None = _DATA, url: str | None = _URL, api_key: str | None = _KEY,
           limit: int | None = _LIMIT, conversations: int | None = _CONVS, pipeline: list[str] = _PIPE,
           budgets: str = _BUDGETS, top_k: int = _TOPK, out_dir: Path = _OUT, concurrency: int = _CONC,
           baselines_only: bool = _BONLY, var_dir: Path = _VAR, tag: str | None = _TAG,
           keep_running: bool = _KEEP, fresh: bool = _FRESH,
           latency_sample: int = _LAT, wait_for: str | None = _WAIT, only: str | None = _ONLY,
           split: str = _SPLIT, allow_train_overlap: bool = _OVERLAP, reranker: Path | None = _RERANKER) -> None:
    """LoCoMo dev (7 conversations, 1,347 questions); adversarial questions are reported apart."""
    _run("locomo", data_dir, url, api_key, limit, conversations, pipeline, budgets, top_k, out_dir, concurrency,
         baselines_only, var_dir, tag, keep_running, fresh, latency_sample, wait_for, only,
         split=split, allow_train_overlap=allow_train_overlap, reranker=reranker)


@bench_app.command("beam")
def beam(data_dir: Path | None = _DATA, url: str | None = _URL, api_key: str | None = _KEY,
         limit: int | None = _LIMIT, conversations: int | None = _CONVS, pipeline: list[str] = _PIPE,
         budgets: str = _BUDGETS, top_k: int = _TOPK, out_dir: Path = _OUT, concurrency: int = _CONC,
         baselines_only: bool = _BONLY, var_dir: Path = _VAR, tag: str | None = _TAG,
         keep_running: bool = _KEEP, fresh: bool = _FRESH,
         latency_sample: int = _LAT, wait_for: str | None = _WAIT, only: str | None = _ONLY,
         split: str = _SPLIT, allow_train_overlap: bool = _OVERLAP, reranker: Path | None = _RERANKER) -> None:
    """BEAM 100K (20 conversations, 400 questions in ten abilities); abstention is reported apart."""
    _run("beam", data_dir, url, api_key, limit, conversations, pipeline, budgets, top_k, out_dir, concurrency,
         baselines_only, var_dir, tag, keep_running, fresh, latency_sample, wait_for, only,
         split=split, allow_train_overlap=allow_train_overlap, reranker=reranker)


@bench_app.command("longmemeval")
def longmemeval(data_dir: Path | None = _DATA, url: str | None = _URL, api_key: str | None = _KEY,
                limit: int | None = typer.Option(None, "--limit", min=1, help="Quick subset: N questions (each "
                                                 "its own haystack), spread evenly over the split's questions."),
                pipeline: list[str] = _PIPE, budgets: str = _BUDGETS, top_k: int = _TOPK, out_dir: Path = _OUT,
                concurrency: int = _CONC, baselines_only: bool = _BONLY, var_dir: Path = _VAR,
                tag: str | None = _TAG, keep_running: bool = _KEEP, fresh: bool = _FRESH,
                latency_sample: int = _LAT, wait_for: str | None = _WAIT,
                only: str | None = typer.Option(None, "--only", help="Only these question ids, comma-separated."),
                split: str = _SPLIT, allow_train_overlap: bool = _OVERLAP, reranker: Path | None = _RERANKER) -> None:
    """LongMemEval_S (363 questions, each with a ~50-session haystack ingested as its own conversation):
    turn-level and session-level recall; abstention questions are reported apart."""
    _run("longmemeval", data_dir, url, api_key, limit, None, pipeline, budgets, top_k, out_dir, concurrency,
         baselines_only, var_dir, tag, keep_running, fresh, latency_sample, wait_for, only,
         split=split, allow_train_overlap=allow_train_overlap, reranker=reranker)


@bench_app.command("ablate")
def ablate_cmd(benchmark: str = typer.Argument(..., help="locomo, beam or longmemeval"), data_dir: Path | None = _DATA,
               url: str | None = _URL, api_key: str | None = _KEY, limit: int | None = _LIMIT,
               conversations: int | None = _CONVS, only: str | None = _ONLY, pipeline: list[str] = _PIPE,
               budgets: str = "2000", top_k: int = _TOPK, out_dir: Path = _OUT, concurrency: int = _CONC,
               var_dir: Path = _VAR, latency_sample: int = 100,
               stages: str = typer.Option(",".join(STAGES), "--stages", help="Stages to switch off, one per run."),
               split: str = _SPLIT, allow_train_overlap: bool = _OVERLAP) -> None:
    """The full pipeline, then each stage switched off in turn: one table of every stage's effect."""
    if benchmark not in ("locomo", "beam", "longmemeval"):
        raise typer.BadParameter("benchmark must be locomo, beam or longmemeval")
    try:
        overrides = parse_overrides(pipeline or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    opts = RunOptions(benchmark=benchmark, data_dir=data_dir or default_data_dir(), url=url, api_key=api_key,
                      limit=limit, conversations=conversations,
                      only=tuple(x.strip() for x in (only or "").split(",") if x.strip()), pipeline=overrides,
                      budgets=_budgets(budgets), top_k=top_k, out_dir=out_dir, concurrency=concurrency,
                      var_dir=var_dir, latency_sample=latency_sample, split=split,
                      allow_train_overlap=allow_train_overlap)
    try:
        summary, paths = ablate(opts, [x.strip() for x in stages.split(",") if x.strip()], log=_log)
    except TrainOverlapError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    typer.echo(ablation_markdown(summary))
    for kind, p in paths.items():
        typer.echo(f"{kind}: {p}")



def _sizes(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(sorted({int(x.replace("_", "")) for x in text.replace(" ", "").split(",") if x}))
    except ValueError as exc:
        raise typer.BadParameter(f"--sizes expects comma-separated event counts, got {text!r}") from exc
    if not vals or min(vals) <= 0:
        raise typer.BadParameter("--sizes needs positive event counts")
    return vals


@bench_app.command("scale")
def scale(
    sizes: str = typer.Option("10000,100000,1000000", "--sizes",
                              help="Tenant sizes in events, grown one after the other (the 1M point takes hours "
                              "on 2 cores; see docs/scaling.md)."),
    queries: int = typer.Option(200, "--queries", min=1, help="Planted pairs asked per size and mode."),
    seed: int = typer.Option(7, "--seed", help="Corpus seed: the same seed gives the same events, byte for byte."),
    layers: str = typer.Option("embed", "--layers", help="embed: measure the embed layer, conversation-level "
                               "layers parked; all: the real worker with every layer (much slower)."),
    clients: int = typer.Option(3, "--clients", min=1, help="POSTs in flight."),
    batch: int = typer.Option(1000, "--batch", min=1, max=1000, help="Events per POST."),
    raw_sample: int = typer.Option(1000, "--raw-sample", min=32, help="Texts per size for the raw embedder rate."),
    out_dir: Path = _OUT,
    var_dir: Path = typer.Option(REPO_ROOT / "var" / "bench-scale", "--var-dir",
                                 help="Embedded service data; its database is emptied at the start."),
    data_dir: Path | None = _DATA,
    reranker: Path | None = typer.Option(None, "--reranker", help="A cross-encoder directory [default: "
                                         "<var-dir>/models/reranker-minilm, else var/models/reranker-minilm]."),
    tag: str | None = _TAG,
    service_env: list[str] = typer.Option([], "--service-env", help="KEY=VALUE setting for the service and the "
                                          "raw embedder (repeatable), e.g. PALIMPSEST_INDEX_CHUNK_SIZE=256."),
    dump: Path | None = typer.Option(None, "--dump", help="Only write the corpus of the largest size "
                                     "(events.jsonl, questions.jsonl) into this folder; no service."),
    vectors: Path | None = typer.Option(None, "--vectors", help="A folder of `python -m bench.scale_vectors`: "
                                        "each step's events below its last --api-events are seeded from it "
                                        "(writer + COPY + one HNSW build) instead of posted."),
    api_events: int = typer.Option(10_000, "--api-events", min=1, help="With --vectors: events per step "
                                   "posted through the API and embedded by the worker."),
) -> None:
    """Cost from 10 thousand to 1 million events in one tenant: ingest, indexing, latency, recall, size, memory."""
    from bench.scale import ScaleOptions, run as run_scale
    from bench.scale_data import Corpus, SourcePool, dump as dump_corpus
    from bench.scale_report import markdown as scale_markdown

    if layers not in ("embed", "all"):
        raise typer.BadParameter("--layers is embed or all")
    if any("=" not in kv for kv in service_env):
        raise typer.BadParameter("--service-env expects KEY=VALUE")
    opts = ScaleOptions(sizes=_sizes(sizes), queries=queries, seed=seed, layers=layers, clients=clients,
                        batch=batch, raw_sample=raw_sample, out_dir=out_dir, var_dir=var_dir,
                        data_dir=data_dir or default_data_dir(), reranker=reranker, tag=tag,
                        service_env=dict(kv.split("=", 1) for kv in service_env),
                        vectors=vectors, api_events=api_events)
    if dump:
        dump.mkdir(parents=True, exist_ok=True)
        corpus = Corpus(SourcePool.load(opts.data_dir), seed, assistant_share=opts.assistant_share)
        with open(dump / "events.jsonl", "w") as ev, open(dump / "questions.jsonl", "w") as qs:
            n = dump_corpus(corpus, max(opts.sizes), ev, qs)
        typer.echo(f"{n} events in {dump / 'events.jsonl'}; planted pairs in {dump / 'questions.jsonl'}")
        return
    result, paths = run_scale(opts, log=_log)
    typer.echo(scale_markdown(result))
    for kind, p in paths.items():
        typer.echo(f"{kind}: {p}")


@bench_app.command("layers")
def layers_cmd(
    split: str = typer.Option("all", "--split", help="dev (tune on these), test (the six held apart) or all."),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="The labelled set (default: bench/data/layers)."),
    out_dir: Path = _OUT,
    tag: str | None = _TAG,
    errors: int = typer.Option(0, "--errors", min=0, help="Print up to N misses and false hits per split."),
    embedder: bool = typer.Option(False, "--embedder/--no-embedder", help="Merge entities by name embeddings as "
                                  "the service does with graph_entity_merge on (loads the embedding model)."),
    save: bool = typer.Option(True, "--save/--no-save", help="Write the JSON and Markdown under --out-dir."),
    note: str | None = typer.Option(None, "--note", help="A line recorded in the results (e.g. what code ran)."),
    llm: bool = typer.Option(False, "--llm/--no-llm", help="Build the memory graph with the product's LLM extractor "
                             "over the LLM the product is configured with (PALIMPSEST_LLM_BASE_URL, _MODEL, _API_KEY, "
                             "_TIMEOUT_S), as a service build does."),
    llm_url: str | None = typer.Option(None, "--llm-url", help="An OpenAI-compatible base URL (the part before "
                                       "/chat/completions), instead of PALIMPSEST_LLM_BASE_URL; implies --llm."),
    llm_model: str | None = typer.Option(None, "--llm-model", help="The model name, instead of PALIMPSEST_LLM_MODEL; "
                                         "implies --llm."),
    allow_llm_errors: bool = typer.Option(
        False, "--allow-llm-errors",
        help="Save the results even when LLM calls failed (their chunks fell back to the rules); else exit 1."),
) -> None:
    """Facts, changes, dates and entities: the product's layer code, in process, scored on the hand-labelled
    set (assertion and supersession P/R/F1, time spans exact/overlap, entity-cluster F1). With --llm the
    entity clusters, assertions and supersessions come from the LLM extractors (a batch whose answer is
    unusable takes the rules', counted); time spans stay the rules'."""
    from bench.layers import markdown as layers_markdown
    from bench.layers import run as run_layers
    from bench.layers import write as write_layers
    from bench.layers_data import DATA_DIR

    if split not in ("all", "dev", "test"):
        raise typer.BadParameter(f"--split is dev, test or all, not {split!r}")
    encode = None
    if embedder:
        from app.adapters.embedder import get_embedder

        encode = get_embedder().encode
    client = _layers_llm(llm, llm_url, llm_model)
    try:
        result = run_layers(split, data_dir or DATA_DIR, encode, log=_log, note=note, llm=client,
                            stop_on_llm_failure=not allow_llm_errors)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(layers_markdown(result, errors=errors))
    failed = (result.get("llm") or {}).get("failed_calls", 0)
    if failed and not allow_llm_errors:
        info = result["llm"]
        typer.echo(f"error: the LLM failed on {failed} of {info['calls']} calls ({info['errors'][0]}); "
                   f"{info['fallback_chunks']} of {info['chunks']} chunks were extracted by the rules instead and the "
                   f"run stopped after {info['stopped_after']}, so it does not measure the LLM. Nothing saved "
                   "(--allow-llm-errors runs every conversation and saves the results anyway).", err=True)
        raise typer.Exit(1)
    if save:
        for kind, p in write_layers(result, out_dir, tag).items():
            typer.echo(f"{kind}: {p}")


def _layers_llm(use: bool, url: str | None, model: str | None):
    """The product's LLM client for `bench layers`: its settings, with --llm-url/--llm-model on top; None
    without --llm (the rules, as a service with no LLM configured)."""
    if not (use or url or model):
        return None
    from app.adapters.llm import llm_from_settings
    from app.settings import get_settings

    update = {k: v for k, v in (("llm_base_url", url), ("llm_model", model)) if v}
    client = llm_from_settings(get_settings().model_copy(update=update))
    if client is None:
        raise typer.BadParameter("no LLM is configured: set PALIMPSEST_LLM_BASE_URL (and PALIMPSEST_LLM_MODEL) "
                                 "or pass --llm-url", param_hint="--llm")
    return client


bench_app.command("load")(load_command)  # last, so `--help` lists it after the recall benchmarks


if __name__ == "__main__":
    bench_app()
