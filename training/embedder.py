"""Fine-tune the packaged all-MiniLM-L6-v2 as the service's bi-encoder: questions and the turns that
answer them drawn together, other turns of the same conversation pushed apart.

    palimpsest train-embedder --datasets beam,longmemeval --out var/models/embedder-minilm

What becomes a training example (`make_pairs`): each question with gold evidence, and each of its
first `max_gold` gold turns, gives one (question, gold turn) pair, with `hard_negatives` turns of the
same conversation that BM25 ranks high for the question but that are neither gold nor a gold turn's
neighbour in its session (the other half of an exchange often answers too). A turn is encoded as
the service encodes it (`app.domain.event.embedding_text`: its words alone).

The loss is the usual in-batch one (multiple-negatives ranking, as sentence-transformers'
`MultipleNegativesRankingLoss`): for each question, a softmax over the cosine similarities (× 20) to
every positive and hard negative of its batch, the question's own positive the target. The model is
saved as a sentence-transformers directory with `training-manifest.json` (`bench.provenance`: every
conversation / question id it saw, so the harness refuses to score it on them) and
`training_report.json`.

`--leave-out-fold K` (of `--folds N`) trains a cross-fitting embedder: fold K's conversations are left
out, and so is any pair whose positive is a turn some left-out question cites as evidence (LongMemEval_S
haystacks share sessions, so the same turn can be evidence in both). The fusion ranker's train rows of
fold K are collected with it (`training.fusion`), so the ranker learns how far to trust a dense signal
that has not seen the question, as on a user's conversations.

Only the manifest's TRAIN split is read (`bench/splits.json`); `--split all` reads every conversation of
data of one's own. `python -m training.export SRC DST` makes the fp16 release the package ships.
"""
from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from training.data import PERMISSIVE, TrainingData, load_training_data
from training.locomo import Conv

SCALE = 20.0  # cosine similarities × 20 before the softmax (sentence-transformers' default)


@dataclass
class EmbedderConfig:
    data_dir: str | None = None  # None: $PALIMPSEST_BENCH_DATA, else ../shared/data beside the repository
    datasets: tuple[str, ...] = PERMISSIVE
    split: str = "train"  # of bench/splits.json; "all" for data of one's own that the manifest does not list
    output_dir: str = "var/models/embedder-minilm"
    base_model_path: str | None = None  # None: the packaged all-MiniLM-L6-v2
    epochs: int = 3
    lr: float = 3e-5
    batch_size: int = 32
    max_length: int = 128  # word pieces per text while training; the saved model keeps the base's 256
    hard_negatives: int = 1
    max_gold: int = 3  # pairs per question (its first gold turns)
    threads: int = 2
    time_limit_s: float = 0.0  # 0: no limit
    seed: int = 42
    # cross-fitting: leave out fold k of `folds` (`training.data.fold_of`), and every pair whose positive is
    # an evidence turn of a left-out question (LongMemEval_S haystacks share sessions)
    leave_out_fold: int | None = None
    folds: int = 2
    # decontamination: drop every pair whose positive or a negative is, word for word, an evidence turn of a
    # validation question (LongMemEval_S haystacks reuse sessions across questions of both splits)
    decontaminate: bool = True


@dataclass(frozen=True)
class Pair:
    question: str
    positive: str
    negatives: tuple[str, ...]
    conversation_id: str


@dataclass
class EmbedderReport:
    output_dir: str
    pairs: int
    steps: int
    seconds: float
    stopped_early: bool
    losses: list[float] = field(default_factory=list)
    config: dict = field(default_factory=dict)


def make_pairs(convs: Sequence[Conv], hard_negatives: int = 1, max_gold: int = 3, pool: int = 10,
               seed: int = 42) -> list[Pair]:
    """(question, gold turn, hard negatives) from conversations with gold evidence, shuffled."""
    from rank_bm25 import BM25Okapi

    from app.domain.event import embedding_text
    from bench.baselines import tokenize

    rng = random.Random(seed)
    out: list[Pair] = []
    for conv in convs:
        by_id = conv.by_id()
        bm25 = BM25Okapi([tokenize(t.content) or ["_"] for t in conv.turns])
        for qa in conv.questions:
            gold = [g for g in qa.gold if g in by_id]
            if not gold:
                continue
            banned = conv.not_negatives(gold)
            scores = bm25.get_scores(tokenize(qa.question) or ["_"])
            ranked = [conv.turns[i].id for i in np.argsort(-scores, kind="stable")
                      if conv.turns[i].id not in banned][:pool]
            for g in gold[:max_gold]:
                negs = rng.sample(ranked, min(hard_negatives, len(ranked)))
                out.append(Pair(qa.question, embedding_text(by_id[g].content),
                                tuple(embedding_text(by_id[n].content) for n in negs), conv.id))
    rng.shuffle(out)
    return out


def evidence_texts(conv: Conv) -> set[str]:
    """The texts, as the service encodes them, of the turns `conv`'s questions cite as evidence."""
    from app.domain.event import embedding_text

    by_id = conv.by_id()
    return {embedding_text(by_id[g].content) for qa in conv.questions for g in qa.gold if g in by_id}


def leave_out(data: TrainingData, fold: int, folds: int,
              log: Callable[[str], None] = print) -> tuple[TrainingData, set[str]]:
    """`data` without the conversations of cross-fitting `fold` (their ids leave the manifest too), and
    the texts of the left-out questions' evidence turns: no pair may have one of them as its positive."""
    from training.data import fold_of

    if not 0 <= fold < folds:
        raise ValueError(f"fold {fold} is not one of 0..{folds - 1}")
    kept, held_ids, held = [], set(), set()
    for conv in data.conversations:
        dataset, cid = conv.id.split("/", 1)
        if fold_of(dataset, cid, folds) != fold:
            kept.append(conv)
            continue
        held_ids.add(conv.id)
        held |= evidence_texts(conv)
    ids = {ds: [c for c in got if f"{ds}/{c}" not in held_ids] for ds, got in data.ids.items()}
    log(f"fold {fold} of {folds} left out: {len(held_ids)} conversations, {len(held)} evidence turns")
    return TrainingData(kept, ids, data.notes + [f"cross-fitting: fold {fold} of {folds} left out"]), held


def validation_evidence(data_dir: str | Path, datasets: Sequence[str],
                        log: Callable[[str], None] = print) -> set[str]:
    """The texts (as encoded) of every evidence turn of the VALIDATION split's questions: a training pair
    holding one would teach the embedder a validation answer. Only the evidence is read, never fitted on."""
    held = load_training_data(data_dir, datasets, "validation", log=lambda _m: None)
    out = set().union(*(evidence_texts(conv) for conv in held.conversations))
    log(f"decontamination: {len(out)} validation evidence turns")
    return out


def drop_held(pairs: Sequence[Pair], held: set[str]) -> list[Pair]:
    """`pairs` without those whose positive or any negative is one of the `held` texts."""
    return [p for p in pairs if p.positive not in held and not any(n in held for n in p.negatives)]


def _batch_loss(model, batch: Sequence[Pair]):  # noqa: ANN001, ANN202 - SentenceTransformer, torch tensor
    import torch

    docs = [p.positive for p in batch] + [n for p in batch for n in p.negatives]
    features = getattr(model, "preprocess", None) or model.tokenize  # `tokenize` before sentence-transformers 6
    q = model(features([p.question for p in batch]))["sentence_embedding"]
    d = model(features(docs))["sentence_embedding"]
    q, d = torch.nn.functional.normalize(q, dim=-1), torch.nn.functional.normalize(d, dim=-1)
    sims = q @ d.T * SCALE
    # a positive that another question of the batch shares is not that question's negative
    same = torch.tensor([[docs[j] == batch[i].positive and j != i for j in range(len(docs))]
                         for i in range(len(batch))])
    sims = sims.masked_fill(same, float("-inf"))
    return torch.nn.functional.cross_entropy(sims, torch.arange(len(batch)))


def train_embedder(cfg: EmbedderConfig | None = None, log: Callable[[str], None] = print) -> EmbedderReport:
    """Train, save the model with its training manifest and report; the report."""
    import torch
    from sentence_transformers import SentenceTransformer

    from app.settings import packaged_minilm_path
    from bench.datasets import default_data_dir
    from bench.provenance import write_training_manifest

    cfg = cfg or EmbedderConfig()
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    data = load_training_data(cfg.data_dir or default_data_dir(), cfg.datasets, cfg.split, log=log)
    held: set[str] = set()
    if cfg.leave_out_fold is not None:
        data, held = leave_out(data, cfg.leave_out_fold, cfg.folds, log)
    pairs = make_pairs(data.conversations, cfg.hard_negatives, cfg.max_gold, seed=cfg.seed)
    if held:
        kept = [p for p in pairs if p.positive not in held]
        log(f"{len(pairs) - len(kept)} pairs dropped: their positive is evidence in the left-out fold")
        pairs = kept
    if cfg.decontaminate and cfg.split == "train":
        kept = drop_held(pairs, validation_evidence(cfg.data_dir or default_data_dir(), cfg.datasets, log))
        log(f"{len(pairs) - len(kept)} pairs dropped: a validation question's evidence is in them")
        pairs = kept
    if not pairs:
        raise ValueError("no question with gold evidence in the data: nothing to train on")
    log(f"{len(pairs)} pairs from {len(data.conversations)} conversations")
    model = SentenceTransformer(cfg.base_model_path or packaged_minilm_path(), device="cpu", local_files_only=True)
    keep_length = model.max_seq_length
    model.max_seq_length = cfg.max_length
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    total = cfg.epochs * math.ceil(len(pairs) / cfg.batch_size)
    warmup = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total - s) / total))
    model.train()
    started, steps, losses, stopped = time.perf_counter(), 0, [], False
    for _ in range(cfg.epochs):
        for b in range(0, len(pairs), cfg.batch_size):
            loss = _batch_loss(model, pairs[b:b + cfg.batch_size])
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
            steps += 1
            losses.append(round(float(loss.item()), 4))
            if steps % 10 == 0:
                log(f"step {steps}/{total} loss {np.mean(losses[-10:]):.3f} ({time.perf_counter() - started:.0f} s)")
            if cfg.time_limit_s and time.perf_counter() - started > cfg.time_limit_s:
                stopped = True
                break
        if stopped:
            break
    model.eval()
    model.max_seq_length = keep_length
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    crossfit = {"left_out_fold": cfg.leave_out_fold, "folds": cfg.folds} if cfg.leave_out_fold is not None else None
    write_training_manifest(out, data.ids, splits="bench/splits.json", split=cfg.split,
                            kind="bi-encoder", base="all-MiniLM-L6-v2", crossfit=crossfit)
    report = EmbedderReport(str(out), len(pairs), steps, round(time.perf_counter() - started, 1), stopped,
                            losses, {**asdict(cfg), "datasets": list(cfg.datasets)})
    (out / "training_report.json").write_text(json.dumps(asdict(report), indent=2) + "\n")
    log(f"trained {steps} steps on {len(pairs)} pairs in {report.seconds:.0f} s -> {out}")
    return report
