"""Training data for the reranker: the benchmark data sets' TRAIN split, read by the benchmark's own loaders.

`load_training_data(data_dir, datasets, split)` reads a data folder laid out as the benchmark reads it
(`locomo/locomo_dev7.json` in LoCoMo's format, `beam100k/<n>/` in BEAM's, `longmemeval/
longmemeval_s_train.json.gz` in LongMemEval_S's; each is optional) and keeps the conversations of
`split` in the committed manifest (`bench/splits.json`: LoCoMo and BEAM conversation ids, LongMemEval
question ids). `split="all"` keeps every conversation, for data of one's own that no manifest lists.

What becomes a training example:

* LoCoMo and BEAM: each question's gold evidence turns are positives; other turns of the same
  conversation ranked high by the first-stage signals are hard negatives (see `mine_groups`).
* LongMemEval_S: each question's haystack (~500 turns) is its own conversation; its `has_answer`
  turns are positives, its other turns hard negatives. Abstention questions have no positive and are skipped.

Negatives are mined from BM25 alone for BEAM and LongMemEval (`DENSE_MINED`): embedding their long
turns or 150k haystack turns would cost more than the training.

Every turn becomes a `training.locomo.Turn` whose `session` is what the data calls a session
(LoCoMo's `D<n>`, BEAM's batch, LongMemEval's session id): a gold turn's neighbours in its session
are never negatives.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from training.locomo import QA, Conv, Turn

DATASETS = ("locomo", "beam", "longmemeval")
PERMISSIVE = ("beam", "longmemeval")  # what no non-commercial licence restricts (docs/models.md)
# Hard negatives from dense AND BM25 rankings where embedding every turn is cheap (LoCoMo's short turns);
# BM25 alone for BEAM (turns of ~2,700 characters: about a second each on a shared core) and LongMemEval
# (a 500-turn haystack per question).
DENSE_MINED = ("locomo",)


@dataclass
class TrainingData:
    conversations: list[Conv]
    ids: dict[str, list[str]] = field(default_factory=dict)  # dataset -> conversation / question ids used
    notes: list[str] = field(default_factory=list)


def _session(turn) -> str:  # noqa: ANN001 - app.locomo.Turn
    meta = turn.metadata or {}
    for key in ("session_id", "batch", "session"):
        if meta.get(key) is not None:
            return str(meta[key])
    eid = str(turn.event_id)
    return eid.rsplit(":", 1)[0] if ":" in eid else ""


def _present(data_dir: Path, name: str) -> bool:
    from bench.datasets import BEAM_DIR, LOCOMO_FILE
    from bench.longmemeval import LME_FILE

    return (data_dir / {"locomo": LOCOMO_FILE, "beam": BEAM_DIR, "longmemeval": LME_FILE}[name]).exists()


def _load(data_dir: Path, name: str):  # noqa: ANN202 - bench.datasets.Dataset
    if name == "locomo":
        from bench.datasets import load_locomo

        return load_locomo(data_dir)
    if name == "beam":
        from bench.datasets import load_beam

        return load_beam(data_dir)
    if name == "longmemeval":
        from bench.longmemeval import load_longmemeval

        return load_longmemeval(data_dir)
    raise ValueError(f"unknown data set {name!r} (one of {', '.join(DATASETS)})")


def load_training_data(data_dir: str | Path, datasets: Sequence[str] = DATASETS, split: str = "train",
                       log: Callable[[str], None] = print) -> TrainingData:
    """The `split` conversations of each data set present under `data_dir`, as training conversations
    (questions with gold evidence only). A data set that is not there is skipped with a note."""
    from bench.splits import select

    root = Path(data_dir)
    out = TrainingData([])
    for name in datasets:
        if name not in DATASETS:
            raise ValueError(f"unknown data set {name!r} (one of {', '.join(DATASETS)})")
        if not _present(root, name):
            out.notes.append(f"{name}: not under {root}; skipped")
            log(out.notes[-1])
            continue
        ds = select(_load(root, name), split)
        used: list[str] = []
        for conv in ds.conversations:
            qs = [q for q in ds.questions if q.conversation_id == conv.id and q.gold]
            if not qs:
                continue
            turns = [Turn(t.event_id, t.speaker, t.content, t.occurred_at, _session(t), i)
                     for i, t in enumerate(conv.turns)]
            c = Conv(f"{name}/{conv.id}", turns, [QA(conv.id, q.question, q.gold, q.category) for q in qs],
                     mine_dense=name in DENSE_MINED)
            out.conversations.append(c)
            used.append(conv.id)
        out.ids[name] = used
        log(f"{name}: {len(used)} {split} conversations, "
            f"{sum(len(c.questions) for c in out.conversations if c.id.startswith(name + '/'))} questions with gold")
    return out


def fold_of(dataset: str, conversation_id: str, folds: int) -> int:
    """The cross-fitting fold (0 … folds-1) of a TRAIN conversation (LongMemEval: question id): the
    data set's train ids, sorted, dealt round-robin. An embedder trained without fold k
    (`palimpsest train-embedder --leave-out-fold k`) scores fold k's conversations as it would unseen
    ones, so the fusion ranker's train rows can be collected with it (`training.fusion`)."""
    from bench.splits import train_ids

    ids = sorted(train_ids(dataset))
    if conversation_id not in ids:
        raise ValueError(f"{dataset}/{conversation_id} is not in the train split: it has no fold")
    return ids.index(conversation_id) % folds
