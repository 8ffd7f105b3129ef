"""`palimpsest train-reranker` and `palimpsest train-embedder`: the training jobs on the command line.

The product's CLI finds it through the `palimpsest.commands` entry point in pyproject.toml
(`register` below); the product itself never imports this package. Also runnable alone:

    python -m training.cli --datasets beam,longmemeval --out var/models/reranker-minilm
    python -m training.cli embedder --datasets beam,longmemeval --out var/models/embedder-minilm
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any, Sequence

import typer


def _data_options(ap: argparse.ArgumentParser, datasets: Sequence[str], split: str, datasets_note: str = "") -> None:
    """The options both training jobs read their data by (`training.data.load_training_data`)."""
    ap.add_argument("--data-dir", default=None,
                    help="the folder holding locomo/, beam100k/, longmemeval/ (default: $PALIMPSEST_BENCH_DATA, "
                         "else ../shared/data beside the repository, as the benchmark reads it)")
    ap.add_argument("--datasets", default=",".join(datasets),
                    help="comma-separated, of locomo, beam, longmemeval (a missing one is skipped" + datasets_note + ")")
    ap.add_argument("--split", default=split, choices=("train", "all"),
                    help="train: the manifest's train split (bench/splits.json); all: every conversation "
                         "(data of your own that the manifest does not list)")


def _run_options(ap: argparse.ArgumentParser, d: Any, time_help: str | None = None) -> None:
    """The options both jobs train by (their configs name them alike): output, base model, schedule,
    threads, time budget, seed."""
    ap.add_argument("--out", default=d.output_dir)
    ap.add_argument("--base", default=None, help="base model directory (default: the packaged all-MiniLM-L6-v2)")
    ap.add_argument("--epochs", type=int, default=d.epochs)
    ap.add_argument("--lr", type=float, default=d.lr)
    ap.add_argument("--max-length", type=int, default=d.max_length)
    ap.add_argument("--threads", type=int, default=d.threads)
    ap.add_argument("--time-limit", type=float, default=d.time_limit_s, help=time_help)
    ap.add_argument("--seed", type=int, default=d.seed)


def _run_config(a: argparse.Namespace) -> dict[str, Any]:
    """The config fields `_data_options` and `_run_options` parsed, by their config names."""
    return {"data_dir": a.data_dir, "datasets": _datasets(a.datasets), "split": a.split, "output_dir": a.out,
            "base_model_path": a.base, "epochs": a.epochs, "lr": a.lr, "max_length": a.max_length,
            "threads": a.threads, "time_limit_s": a.time_limit, "seed": a.seed}


def _print_report(report: Any) -> int:
    print(json.dumps({k: v for k, v in asdict(report).items() if k != "losses"}, indent=2))
    return 0


def _datasets(value: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in value.split(",") if x.strip())


def register(app: typer.Typer) -> None:
    """Add `train-reranker` to the root CLI. The job parses its own options (argparse), so the
    command passes its arguments through untouched, `--help` included."""
    app.command("train-reranker", add_help_option=False,
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(train_reranker_cmd)


def register_embedder(app: typer.Typer) -> None:
    """Add `train-embedder` to the root CLI (its options parsed by `embedder_main`)."""
    app.command("train-embedder", add_help_option=False,
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(train_embedder_cmd)


def train_embedder_cmd(ctx: typer.Context) -> None:
    """Fine-tune the packaged MiniLM as the bi-encoder that embeds events and questions (its own
    options: `palimpsest train-embedder --help`); the service uses it once PALIMPSEST_EMBEDDING_MODEL_PATH
    names it."""
    raise typer.Exit(embedder_main(ctx.args))


def embedder_main(argv: Sequence[str] | None = None) -> int:
    """Parse the embedder job's options, train, print the report; the exit status."""
    from training.embedder import EmbedderConfig, train_embedder

    d = EmbedderConfig()
    ap = argparse.ArgumentParser(prog="palimpsest train-embedder",
                                 description="Fine-tune all-MiniLM-L6-v2 as a bi-encoder on (question, evidence "
                                 "turn) pairs of the train split of LoCoMo, BEAM and LongMemEval_S data.")
    _data_options(ap, d.datasets, d.split, "; the default leaves out LoCoMo, whose licence is non-commercial: "
                  "docs/models.md")
    _run_options(ap, d, "seconds; 0: none")
    ap.add_argument("--batch-size", type=int, default=d.batch_size)
    ap.add_argument("--hard-negatives", type=int, default=d.hard_negatives)
    ap.add_argument("--max-gold", type=int, default=d.max_gold)
    ap.add_argument("--leave-out-fold", type=int, default=None,
                    help="cross-fitting: leave out this fold of the train conversations (and every pair whose "
                         "positive is their evidence); the fusion ranker's rows of that fold are collected with it")
    ap.add_argument("--folds", type=int, default=d.folds, help="with --leave-out-fold: how many folds")
    ap.add_argument("--no-decontaminate", dest="decontaminate", action="store_false",
                    help="keep pairs that hold a validation question's evidence turn (the v1 release did)")
    a = ap.parse_args(argv)
    cfg = EmbedderConfig(**_run_config(a), batch_size=a.batch_size, hard_negatives=a.hard_negatives,
                         max_gold=a.max_gold, leave_out_fold=a.leave_out_fold, folds=a.folds,
                         decontaminate=a.decontaminate)
    return _print_report(train_embedder(cfg, log=lambda m: print(m, flush=True)))


def train_reranker_cmd(ctx: typer.Context) -> None:
    """Fine-tune the packaged MiniLM as a cross-encoder on pairs mined from conversations
    (its own options: `palimpsest train-reranker --help`); the query path uses it once it is in place."""
    raise typer.Exit(main(ctx.args))


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the job's options, train, print the report; the exit status."""
    from training.reranker import TrainConfig, train_reranker

    ap = argparse.ArgumentParser(prog="palimpsest train-reranker",
                                 description="Fine-tune the MiniLM cross-encoder reranker on the train split of "
                                 "LoCoMo, BEAM and LongMemEval_S data in their own formats.")
    d = TrainConfig()
    _data_options(ap, d.datasets, d.split)
    _run_options(ap, d)
    ap.add_argument("--negatives", type=int, default=d.negatives)
    ap.add_argument("--pool", type=int, default=d.pool)
    ap.add_argument("--max-groups", type=int, default=d.max_groups, help="0: all mined groups")
    ap.add_argument("--group-batch", type=int, default=d.group_batch)
    ap.add_argument("--freeze-layers", type=int, default=d.freeze_layers)
    ap.add_argument("--layers", type=int, default=None, help="keep only the bottom N transformer layers")
    ap.add_argument("--cache-dir", default=d.cache_dir, help="mined groups are cached here ('' : no cache)")
    a = ap.parse_args(argv)
    cfg = TrainConfig(**_run_config(a), negatives=a.negatives, pool=a.pool, max_groups=a.max_groups,
                      group_batch=a.group_batch, freeze_layers=a.freeze_layers, layers=a.layers,
                      cache_dir=a.cache_dir or None)
    return _print_report(train_reranker(cfg, log=lambda m: print(m, flush=True)))


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["embedder"]:
        raise SystemExit(embedder_main(sys.argv[2:]))
    raise SystemExit(main())
