"""The committed train / validation split of every benchmark data set, read from `bench/splits.json`.

Training and fitting read `train_ids(dataset)` only; choices are made, and results reported, on
`validation_ids(dataset)`. The unit of a split is the conversation: LoCoMo's `sample_id`, BEAM's
`beam-<n>`, and for LongMemEval_S the question id, because each question's haystack is ingested as
one conversation of its own.

LoCoMo and BEAM are split by hand (the lists in the manifest). LongMemEval_S is split 80/20 by a
stable hash of the question id (`lme_is_validation`); the resulting id lists are written into the
manifest, so the split never drifts with the data file or the code. `python -m bench.splits` checks
that the manifest still agrees with the rule (and, given the data, that it covers every question).
"""
from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from bench.datasets import Dataset

MANIFEST = Path(__file__).with_name("splits.json")
SPLITS = ("train", "validation", "all")
DATASETS = ("locomo", "beam", "longmemeval")
LME_VALIDATION_PERCENT = 20


def lme_is_validation(question_id: str, percent: int = LME_VALIDATION_PERCENT) -> bool:
    """The LongMemEval rule: the first 8 hex digits of sha256(question id), as an integer, mod 100,
    below `percent` -> validation; otherwise train."""
    return int(hashlib.sha256(question_id.encode("utf-8")).hexdigest()[:8], 16) % 100 < percent


def lme_split(question_ids: Iterable[str], percent: int = LME_VALIDATION_PERCENT) -> dict[str, list[str]]:
    """{"train": [...], "validation": [...]}, each sorted, by `lme_is_validation`."""
    ids = sorted(set(question_ids))
    return {"train": [q for q in ids if not lme_is_validation(q, percent)],
            "validation": [q for q in ids if lme_is_validation(q, percent)]}


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def load_manifest(path: Path | str = MANIFEST) -> dict[str, Any]:
    """The parsed manifest (cached per path). Raises KeyError when a data set lacks a list."""
    doc = _load(str(path))
    for name in DATASETS:
        entry = doc.get(name) or {}
        if not isinstance(entry.get("train"), list) or not isinstance(entry.get("validation"), list):
            raise KeyError(f"{path}: {name} needs a train and a validation list")
    return doc


def ids(dataset: str, split: str, manifest: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The conversation ids of one split of one data set ("all" = train then validation)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    doc = manifest or load_manifest()
    if dataset not in doc:
        raise KeyError(f"no split for data set {dataset!r} in the manifest")
    entry = doc[dataset]
    if split == "all":
        return tuple(entry["train"]) + tuple(entry["validation"])
    return tuple(entry[split])


def train_ids(dataset: str) -> tuple[str, ...]:
    """What training and fitting may read: the train conversations (LongMemEval: question ids)."""
    return ids(dataset, "train")


def validation_ids(dataset: str) -> tuple[str, ...]:
    """What choices are made and results reported on."""
    return ids(dataset, "validation")


def split_of(dataset: str, conversation_id: str, manifest: dict[str, Any] | None = None) -> str | None:
    """"train", "validation", or None when the manifest does not list the conversation."""
    doc = manifest or load_manifest()
    for split in ("train", "validation"):
        if conversation_id in doc[dataset][split]:
            return split
    return None


def select(ds: Dataset, split: str, manifest: dict[str, Any] | None = None) -> Dataset:
    """The conversations of `split` (with their questions), in the data set's order. "all" keeps
    everything, including conversations the manifest does not list (noted); train / validation drop
    those. A split the data lacks entirely gives an empty data set."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    doc = manifest or load_manifest()
    listed = set(ids(ds.name, "all", doc))
    unlisted = [c.id for c in ds.conversations if c.id not in listed]
    notes = list(ds.notes)
    if unlisted:
        notes.append(f"{len(unlisted)} conversations not in the split manifest"
                     f"{' (kept: --split all)' if split == 'all' else ' (left out)'}: {', '.join(unlisted[:10])}")
    if split == "all":
        return replace(ds, notes=notes)
    keep = set(ids(ds.name, split, doc))
    convs = [c for c in ds.conversations if c.id in keep]
    return replace(ds, conversations=convs, questions=[q for q in ds.questions if q.conversation_id in keep],
                   notes=notes)


def check(manifest: dict[str, Any], lme_question_ids: Iterable[str] | None = None) -> list[str]:
    """Problems with a manifest: lists that overlap or repeat, LongMemEval lists that disagree with
    the hash rule, and (given the data's question ids) LongMemEval ids missing or unknown."""
    problems: list[str] = []
    for name in DATASETS:
        train, val = manifest[name]["train"], manifest[name]["validation"]
        if len(set(train)) != len(train) or len(set(val)) != len(val):
            problems.append(f"{name}: an id is listed twice")
        both = set(train) & set(val)
        if both:
            problems.append(f"{name}: in train and validation: {sorted(both)[:5]}")
    lme = manifest["longmemeval"]
    percent = int(lme.get("validation_percent", LME_VALIDATION_PERCENT))
    wrong = [q for q in lme["train"] if lme_is_validation(q, percent)] + \
            [q for q in lme["validation"] if not lme_is_validation(q, percent)]
    if wrong:
        problems.append(f"longmemeval: {len(wrong)} ids on the wrong side of the hash rule: {wrong[:5]}")
    if lme_question_ids is not None:
        data = set(lme_question_ids)
        listed = set(lme["train"]) | set(lme["validation"])
        if data - listed:
            problems.append(f"longmemeval: {len(data - listed)} questions of the data are not in the manifest")
        if listed - data:
            problems.append(f"longmemeval: {len(listed - data)} listed ids are not in the data")
    return problems


def main(argv: list[str] | None = None) -> int:
    from bench.longmemeval import read_raw

    ap = argparse.ArgumentParser(description="Check the split manifest; --write-longmemeval rewrites its "
                                 "LongMemEval lists from the data by the hash rule (a one-time step).")
    ap.add_argument("--data-dir", type=Path, default=None, help="the folder holding longmemeval/")
    ap.add_argument("--write-longmemeval", action="store_true")
    a = ap.parse_args(argv)
    from bench.datasets import default_data_dir

    qids = [q["question_id"] for q in read_raw(a.data_dir or default_data_dir())["questions"]]
    doc = json.loads(MANIFEST.read_text())
    if a.write_longmemeval:
        doc["longmemeval"].update(lme_split(qids, int(doc["longmemeval"].get("validation_percent", 20))))
        MANIFEST.write_text(json.dumps(doc, indent=1) + "\n")
        _load.cache_clear()
    problems = check(doc, qids)
    for name in DATASETS:
        print(f"{name}: train {len(doc[name]['train'])}, validation {len(doc[name]['validation'])}")
    for p in problems:
        print("problem:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())


def load_split(split: str, data_dir: Path | None = None, names: Iterable[str] = ("locomo", "beam")
               ) -> dict[str, Dataset]:
    """The named data sets (default LoCoMo and BEAM), each reduced to the conversations of `split`
    (fitting reads "train")."""
    from bench.datasets import default_data_dir
    from bench.loaders import LOADERS

    data = data_dir or default_data_dir()
    return {name: select(LOADERS[name](data), split) for name in names}
