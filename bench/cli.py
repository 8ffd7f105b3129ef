"""`palimpsest bench locomo` and `palimpsest bench beam` (mounted by app/cli.py as `bench`).

Also runnable alone: `python -m bench.cli locomo --limit 20`.
"""
from __future__ import annotations

import time
from pathlib import Path

import typer

from bench.harness import DEFAULT_BUDGETS, REPO_ROOT, RunOptions, default_data_dir, run
from bench.report import markdown
from bench.runner import parse_overrides

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


def _run(benchmark: str, data_dir: Path | None, url: str | None, api_key: str | None,
         limit: int | None, conversations: int | None, pipeline: list[str], budgets: str, top_k: int,
         out_dir: Path, concurrency: int, baselines_only: bool, var_dir: Path, tag: str | None,
         keep_running: bool, fresh: bool, latency_sample: int, wait_for: str | None) -> None:
    try:
        overrides = parse_overrides(pipeline or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    data = data_dir or default_data_dir()
    if not data.exists():
        raise typer.BadParameter(f"no data directory at {data} (set --data-dir or PALIMPSEST_BENCH_DATA)")
    opts = RunOptions(benchmark=benchmark, data_dir=data, url=url, api_key=api_key, limit=limit,
                      conversations=conversations, pipeline=overrides, budgets=_budgets(budgets), top_k=top_k,
                      out_dir=out_dir, concurrency=concurrency, baselines_only=baselines_only, var_dir=var_dir,
                      tag=tag, keep_running=keep_running, fresh=fresh, latency_sample=latency_sample,
                      wait_for=tuple(x.strip() for x in wait_for.split(",") if x.strip()) if wait_for else None)
    result, paths = run(opts, log=_log)
    typer.echo(markdown(result))
    for kind, p in paths.items():
        typer.echo(f"{kind}: {p}")


_DATA = typer.Option(None, "--data-dir", envvar="PALIMPSEST_BENCH_DATA",
                     help="Folder holding locomo/ and beam100k/ [default: ../shared/data from the repo root]")
_URL = typer.Option(None, "--url", help="A running service; without it the harness starts one on the embedded default.")
_KEY = typer.Option(None, "--api-key", envvar="PALIMPSEST_API_KEY", help="API key for --url.")
_LIMIT = typer.Option(None, "--limit", min=1,
                      help="Quick subset: N questions per conversation, spread evenly over its questions.")
_CONVS = typer.Option(None, "--conversations", min=1, help="Only the first N conversations (ingest and questions).")
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
                      "(measures ingest throughput; without it a re-run reuses what is already indexed).")


@bench_app.command("locomo")
def locomo(data_dir: Path | None = _DATA, url: str | None = _URL, api_key: str | None = _KEY,
           limit: int | None = _LIMIT, conversations: int | None = _CONVS, pipeline: list[str] = _PIPE,
           budgets: str = _BUDGETS, top_k: int = _TOPK, out_dir: Path = _OUT, concurrency: int = _CONC,
           baselines_only: bool = _BONLY, var_dir: Path = _VAR, tag: str | None = _TAG,
           keep_running: bool = _KEEP, fresh: bool = _FRESH,
           latency_sample: int = _LAT, wait_for: str | None = _WAIT) -> None:
    """LoCoMo dev (7 conversations, 1,347 questions); adversarial questions are reported apart."""
    _run("locomo", data_dir, url, api_key, limit, conversations, pipeline, budgets, top_k, out_dir, concurrency,
         baselines_only, var_dir, tag, keep_running, fresh, latency_sample, wait_for)


@bench_app.command("beam")
def beam(data_dir: Path | None = _DATA, url: str | None = _URL, api_key: str | None = _KEY,
         limit: int | None = _LIMIT, conversations: int | None = _CONVS, pipeline: list[str] = _PIPE,
         budgets: str = _BUDGETS, top_k: int = _TOPK, out_dir: Path = _OUT, concurrency: int = _CONC,
         baselines_only: bool = _BONLY, var_dir: Path = _VAR, tag: str | None = _TAG,
         keep_running: bool = _KEEP, fresh: bool = _FRESH,
         latency_sample: int = _LAT, wait_for: str | None = _WAIT) -> None:
    """BEAM 100K (20 conversations, 400 questions in ten abilities); abstention is reported apart."""
    _run("beam", data_dir, url, api_key, limit, conversations, pipeline, budgets, top_k, out_dir, concurrency,
         baselines_only, var_dir, tag, keep_running, fresh, latency_sample, wait_for)


if __name__ == "__main__":
    bench_app()
