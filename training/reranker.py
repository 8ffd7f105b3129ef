"""Fine-tune a cross-encoder reranker from the packaged MiniLM (`palimpsest train-reranker`).

No pretrained cross-encoder ships in any package we can install, so we make one: the encoder of
all-MiniLM-L6-v2 (the packaged weights, `app.settings.packaged_minilm_path`) with a fresh one-logit head,
trained on (question, turn) pairs from the TRAIN split of the benchmark data (`training.data`: LoCoMo,
BEAM and LongMemEval_S in their own formats under `--data-dir`, split by `bench/splits.json`):

* positives: the gold evidence turns of a question (LongMemEval: its `has_answer` turns);
* hard negatives: other turns of the same conversation that the first-stage signals rank high
  (dense cosine top-`pool` ∪ BM25 top-`pool`; LongMemEval haystacks: BM25 alone), excluding the gold
  turns and their immediate neighbours in the same session (often half of the evidence: label noise).

Each (question, positive) forms a group with `negatives` hard negatives; the loss is the listwise
softmax cross-entropy over the group (the positive should win) plus a pointwise binary term (weight
`bce_weight`) so that sigmoid(logit) stays a usable relevance probability for the sufficient-context
gate. Training is budgeted (`time_limit_s`): the pace of the first steps decides how many groups fit,
and the learning-rate schedule is shortened to end within the budget.

The model is saved as a sentence-transformers CrossEncoder directory with `training-manifest.json`
(`bench.provenance`: the ids of every conversation / question it saw, so the harness refuses to score
it on them) and `training_report.json` (config, time taken). The candidate release (docs/models.md) was

    palimpsest train-reranker --datasets beam,longmemeval   (or: python -m training.cli ...)
"""
from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from app.domain.event import turn_text
from training.data import DATASETS, TrainingData, load_training_data
from training.locomo import Conv, ConversationIndex, embed_conversations

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MINED_NEGATIVES = 7
_HF_FILES = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "tokenizer_config.json",
             "special_tokens_map.json", "vocab.txt")


@dataclass
class TrainConfig:
    data_dir: str | None = None  # the folder holding locomo/, beam100k/, longmemeval/ (None: the bench's default)
    datasets: tuple[str, ...] = DATASETS
    split: str = "train"  # of bench/splits.json; "all" for data of one's own that the manifest does not list
    output_dir: str = "var/models/reranker-minilm"
    base_model_path: str | None = None  # None: the packaged all-MiniLM-L6-v2 (settings.packaged_minilm_path)
    max_length: int = 128
    negatives: int = 3  # hard negatives per group
    pool: int = 30  # first-stage depth the negatives are drawn from
    max_groups_per_question: int = 3
    epochs: int = 2  # the budget below usually cuts this to ~1.5 on two shared cores
    group_batch: int = 8  # groups per optimiser step (x (1 + negatives) pairs)
    lr: float = 4e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    bce_weight: float = 0.5
    freeze_word_embeddings: bool = True  # the 30k x 384 matrix: most of the step time, little to gain
    layers: int | None = None  # keep only the bottom N transformer layers (None: all 6); fewer = faster
    freeze_layers: int = 2  # also freeze the embeddings and the bottom N transformer layers (faster steps)
    cache_dir: str | None = "var/cache/reranker"  # mined groups, keyed by data + mining settings
    seed: int = 42
    threads: int = 0  # 0: torch decides
    time_limit_s: float = 900.0  # training budget: the schedule is shortened to fit, and stops past it
    probe_steps: int = 8  # steps timed before deciding whether the whole schedule fits the budget
    max_groups: int = 0  # 0: every mined group; else a uniform sample of this many


@dataclass
class Group:
    question: str
    positive: str
    negatives: list[str]
    conversation_id: str = ""
    category: str = ""


@dataclass
class TrainReport:
    output_dir: str
    groups: int
    pairs: int
    steps: int
    seconds_mining: float
    seconds_training: float
    stopped_early: bool
    pairs_trained: int = 0
    losses: list[float] = field(default_factory=list)
    config: dict = field(default_factory=dict)


def mine_groups(convs: Sequence[Conv], encode: Callable[[list[str]], np.ndarray], *, negatives: int = 7,
                pool: int = 30, max_groups_per_question: int = 3, seed: int = 42) -> list[Group]:
    """(question, gold turn, hard negatives) groups from conversations with gold evidence."""
    rng = random.Random(seed)
    embs = embed_conversations(convs, encode)
    groups: list[Group] = []
    for conv in convs:
        idx = ConversationIndex(conv, embs[conv.id])
        by_id = conv.by_id()
        qvecs = encode([q.question for q in conv.questions]) if conv.questions and conv.mine_dense \
            else [None] * len(conv.questions)
        for qa, qv in zip(conv.questions, qvecs):
            gold = [g for g in qa.gold if g in by_id]
            if not gold:
                continue
            banned = conv.not_negatives(gold)
            ranked: list[str] = []
            for tid, _ in idx.dense(qv, pool) + idx.bm25(qa.question, pool):
                if tid not in banned and tid not in ranked:
                    ranked.append(tid)
            # interleave dense and BM25 order happened above; weight sampling toward the top
            if len(ranked) < negatives:
                extra = [t.id for t in conv.turns if t.id not in banned and t.id not in ranked]
                ranked += rng.sample(extra, min(len(extra), negatives - len(ranked)))
            for g in gold[:max_groups_per_question]:
                weights = [1.0 / math.sqrt(i + 1) for i in range(len(ranked))]
                chosen: list[str] = []
                cand = list(ranked)
                w = list(weights)
                while cand and len(chosen) < negatives:
                    k = rng.choices(range(len(cand)), weights=w)[0]
                    chosen.append(cand.pop(k))
                    w.pop(k)
                t = by_id[g]
                groups.append(Group(
                    question=qa.question,
                    positive=turn_text(t.speaker, t.content),
                    negatives=[turn_text(by_id[n].speaker, by_id[n].content) for n in chosen],
                    conversation_id=conv.id,
                    category=qa.category,
                ))
    rng.shuffle(groups)
    return groups


def _cached_groups(cfg: TrainConfig, data: TrainingData,
                   encode: Callable[[list[str]], np.ndarray] | None) -> list[Group]:
    """Mined groups, one cache file per data set (so adding a data set does not mine the others again),
    shuffled together."""
    import hashlib

    mined = max(cfg.negatives, MINED_NEGATIVES)  # mine once at the larger size; fewer = a prefix
    by_ds: dict[str, list[Conv]] = {}
    for c in data.conversations:
        by_ds.setdefault(c.id.split("/", 1)[0], []).append(c)
    groups: list[Group] = []
    for name, convs in by_ds.items():
        content = [(c.id, len(c.turns), len(c.questions)) for c in convs]
        key_src = json.dumps([content, mined, cfg.pool, cfg.max_groups_per_question, cfg.seed,
                              cfg.base_model_path, "groups/3"])
        path = Path(cfg.cache_dir) / f"groups-{name}-{hashlib.sha1(key_src.encode()).hexdigest()[:16]}.json" \
            if cfg.cache_dir else None
        if path is not None and path.exists():
            groups += [Group(**g) for g in json.loads(path.read_text())]
            continue
        if encode is None:
            from app.adapters.embedder import get_embedder

            encode = get_embedder().encode
        got = mine_groups(convs, encode, negatives=mined, pool=cfg.pool,
                          max_groups_per_question=cfg.max_groups_per_question, seed=cfg.seed)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps([asdict(g) for g in got]))
        groups += got
    random.Random(cfg.seed).shuffle(groups)
    return [replace(g, negatives=g.negatives[: cfg.negatives]) for g in groups]


def _bucketed_batches(groups: Sequence[Group], size: int, tok, rng: random.Random) -> list[list[Group]]:
    """Shuffled batches of groups of similar length (less padding): shuffle, sort windows of 16
    batches by the group's longest pair, cut into batches, shuffle the batches."""
    order = list(range(len(groups)))
    rng.shuffle(order)
    lengths = {}
    for i in order:
        g = groups[i]
        lengths[i] = max(len(tok(g.question, t)["input_ids"]) for t in [g.positive, *g.negatives])
    batches: list[list[Group]] = []
    window = size * 16  # (train_reranker counts steps with the same window)
    for w in range(0, len(order), window):
        chunk = sorted(order[w : w + window], key=lambda i: lengths[i])
        batches += [[groups[i] for i in chunk[b : b + size]] for b in range(0, len(chunk), size)]
    rng.shuffle(batches)
    return batches


def _prepare_base(base: str) -> str:
    """A temporary directory with only the Hugging Face files of the base model, so that
    sentence-transformers builds a sequence-classification model (fresh head) instead of reading the
    SentenceTransformer's modules.json."""
    src = Path(base)
    if not (src / "config.json").exists():
        raise FileNotFoundError(f"no transformer model at {base!r}")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-ce-base-"))
    for name in _HF_FILES:
        if (src / name).exists():
            shutil.copy(src / name, tmp / name)
    return str(tmp)


def train_reranker(cfg: TrainConfig | None = None, log: Callable[[str], None] = print,
                   encode: Callable[[list[str]], np.ndarray] | None = None) -> TrainReport:
    """Mine pairs from the `cfg.split` conversations of `cfg.datasets`, fine-tune, save to `cfg.output_dir`."""
    cfg = cfg or TrainConfig()
    import torch
    from sentence_transformers import CrossEncoder

    from app.settings import packaged_minilm_path

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    base = cfg.base_model_path or packaged_minilm_path()

    t0 = time.perf_counter()
    if cfg.data_dir is None:
        from bench.datasets import default_data_dir

        cfg = replace(cfg, data_dir=str(default_data_dir()))
    data = load_training_data(cfg.data_dir, cfg.datasets, cfg.split, log=log)
    if not data.conversations:
        raise ValueError(f"no {cfg.split} conversation with gold evidence under {cfg.data_dir} "
                         f"for {', '.join(cfg.datasets)}")
    groups = _cached_groups(cfg, data, encode)
    if cfg.max_groups and len(groups) > cfg.max_groups:
        groups = groups[: cfg.max_groups]  # mined groups are shuffled: a uniform sample
    t_mine = time.perf_counter() - t0
    n_pairs = sum(1 + len(g.negatives) for g in groups) * cfg.epochs
    log(f"mined {len(groups)} groups ({n_pairs} pairs over {cfg.epochs} epoch(s)) from "
        f"{len(data.conversations)} conversations in {t_mine:.1f}s")

    tmp_base = _prepare_base(base)
    try:
        ce = CrossEncoder(tmp_base, num_labels=1, max_length=cfg.max_length, device="cpu", local_files_only=True)
    finally:
        shutil.rmtree(tmp_base, ignore_errors=True)
    model, tok = ce.model, ce.tokenizer
    if cfg.layers:
        enc_layers = model.base_model.encoder.layer
        if not 0 < cfg.layers <= len(enc_layers):
            raise ValueError(f"layers must be in 1..{len(enc_layers)}")
        model.base_model.encoder.layer = enc_layers[: cfg.layers]
        model.config.num_hidden_layers = cfg.layers
        log(f"kept the bottom {cfg.layers} of {len(enc_layers)} transformer layers")
    model.train()
    frozen = tuple(f"encoder.layer.{i}." for i in range(cfg.freeze_layers))
    for n, p in model.named_parameters():
        if (cfg.freeze_word_embeddings and "word_embeddings" in n) or \
                (cfg.freeze_layers and (".embeddings." in n or any(f in n for f in frozen))):
            p.requires_grad = False
    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    params = [
        {"params": [p for n, p in trainable if not any(x in n for x in no_decay)], "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in trainable if any(x in n for x in no_decay)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(params, lr=cfg.lr)
    win = cfg.group_batch * 16  # as in _bucketed_batches
    steps_per_epoch = sum(math.ceil(min(win, len(groups) - w) / cfg.group_batch) for w in range(0, len(groups), win))
    plan = {"total": steps_per_epoch * cfg.epochs}
    plan["warm"] = max(1, int(cfg.warmup * plan["total"]))
    # linear warm-up then linear decay to 0 at plan["total"] (shortened below if the budget needs it)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / plan["warm"],
                           max(0.0, (plan["total"] - s) / max(1, plan["total"] - plan["warm"]))))
    bce = torch.nn.BCEWithLogitsLoss()

    t1 = time.perf_counter()
    losses: list[float] = []
    step = 0
    running, n_running = 0.0, 0  # mean loss since the last log line
    stopped = False
    for epoch in range(cfg.epochs):
        if step >= plan["total"]:
            break
        batches = _bucketed_batches(groups, cfg.group_batch, tok, random.Random(cfg.seed + epoch))
        for batch in batches:
            size = 1 + cfg.negatives
            qs, ps, mask = [], [], []
            for g in batch:
                texts = [g.positive] + g.negatives + [g.negatives[-1] if g.negatives else g.positive] * (
                    size - 1 - len(g.negatives))
                qs += [g.question] * size
                ps += texts
                mask.append([1.0] * (1 + len(g.negatives)) + [0.0] * (size - 1 - len(g.negatives)))
            enc = tok(qs, ps, padding=True, truncation="longest_first", max_length=cfg.max_length,
                      return_tensors="pt")
            logits = model(**enc).logits.view(len(batch), size)
            m = torch.tensor(mask)
            masked = logits.masked_fill(m == 0, -1e4)
            target = torch.zeros(len(batch), dtype=torch.long)
            labels = torch.zeros_like(logits)
            labels[:, 0] = 1.0
            loss = torch.nn.functional.cross_entropy(masked, target)
            if cfg.bce_weight:
                loss = loss + cfg.bce_weight * bce(logits[m == 1], labels[m == 1])
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for _, p in trainable], 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            running += loss.item()
            n_running += 1
            elapsed = time.perf_counter() - t1
            if step >= cfg.probe_steps and (step == cfg.probe_steps or step % 10 == 0):
                # Budget: if the measured pace cannot finish in time, train on fewer groups with a
                # complete (shortened) schedule rather than stopping halfway up the learning rate.
                # Re-checked every 10 steps (the machine is shared; the pace changes); only shrinks.
                affordable = step + int(max(0.0, 0.95 * cfg.time_limit_s - elapsed) / (elapsed / step))
                if affordable < plan["total"]:
                    log(f"{elapsed / step:.2f}s/step: {plan['total']} steps do not fit in "
                        f"{cfg.time_limit_s:.0f}s; shortening the schedule to {affordable} steps")
                    plan["total"] = max(affordable, step + 1)
                    plan["warm"] = max(1, min(plan["warm"], int(cfg.warmup * plan["total"])))
            if step % 25 == 0:
                losses.append(round(running / n_running, 4))
                log(f"epoch {epoch + 1} step {step}/{plan['total']} loss {running / n_running:.4f} ({elapsed:.0f}s)")
                running, n_running = 0.0, 0
            if step >= plan["total"]:
                stopped = plan["total"] < steps_per_epoch * cfg.epochs
                break
            if elapsed > cfg.time_limit_s:
                log(f"time limit {cfg.time_limit_s:.0f}s reached at step {step}/{plan['total']}; stopping")
                stopped = True
                break
        if stopped:
            break
    t_train = time.perf_counter() - t1
    model.eval()

    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    ce.save(str(out))
    pairs_trained = min(step * cfg.group_batch, len(groups) * cfg.epochs) * (1 + cfg.negatives)
    report = TrainReport(str(out), len(groups), n_pairs, step, round(t_mine, 1), round(t_train, 1), stopped,
                         pairs_trained, losses, {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()})
    (out / "training_report.json").write_text(json.dumps(asdict(report), indent=2))
    from bench.provenance import write_training_manifest

    write_training_manifest(out, data.ids, splits="bench/splits.json", split=cfg.split,
                            base_model=Path(base).name, groups=len(groups), steps=step,
                            seconds_training=round(t_train, 1), notes=data.notes)
    log(f"trained {step} steps in {t_train:.0f}s; saved to {out}")
    return report


def trained_on(model_path: str | Path) -> set[str]:
    """Every conversation / question id a saved reranker was trained on, all data sets together
    (empty when its directory says nothing); `bench.provenance.training_manifest` has them per data set."""
    from bench.provenance import training_manifest

    doc = training_manifest(model_path) or {}
    return {i for ids in (doc.get("datasets") or {}).values() for i in ids}
