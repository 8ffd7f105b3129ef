"""What a benchmark run measured with, and the refusal to score a model on its own training data.

A trained model directory says what it was trained on in `training-manifest.json`:

    {"datasets": {"locomo": ["conv-26", ...], "beam": ["beam-1", ...], "longmemeval": ["<question_id>", ...]},
     "splits": "bench/splits.json", ...anything else the trainer wants to record}

(ids are the split manifest's: conversation ids, LongMemEval question ids). `write_training_manifest`
writes one. A directory from before that file existed is read from its `training_report.json`
(`config.train_conversations` are LoCoMo, `config.beam_conversations` BEAM). A directory with
neither has an unknown training set: nothing can be checked, and the result says so.

Every result records the embedder and the reranker (path, name, sha256 of the weights file, the
training manifest); `check_overlap` raises `TrainOverlapError` when a model was trained on any of
the conversations about to be scored, unless the run allows it (the report then says so).
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

TRAINING_MANIFEST = "training-manifest.json"
LEGACY_REPORT = "training_report.json"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.onnx", "onnx/model.onnx",
                "onnx/model_quantized.onnx")
HASH_LIMIT_BYTES = 512 * 1024 * 1024  # hashing 90 MB takes well under a second; beyond this, skip


class TrainOverlapError(RuntimeError):
    """A model would be scored on conversations it was trained on."""


def write_training_manifest(model_dir: Path | str, datasets: Mapping[str, Iterable[str]], **extra: Any) -> Path:
    """Record what a model was trained on, beside its weights (for trainers: call it after saving)."""
    path = Path(model_dir) / TRAINING_MANIFEST
    doc = {"datasets": {k: sorted(set(v)) for k, v in datasets.items()}, **extra}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def training_manifest(model_dir: Path | str | None) -> dict[str, Any] | None:
    """{"datasets": {dataset: [ids]}, "source": file name, ...}, or None when the directory says nothing."""
    if not model_dir:
        return None
    d = Path(model_dir)
    p = d / TRAINING_MANIFEST
    if p.is_file():
        doc = json.loads(p.read_text())
        return {**doc, "datasets": {k: list(v) for k, v in (doc.get("datasets") or {}).items()},
                "source": TRAINING_MANIFEST}
    p = d / LEGACY_REPORT
    if p.is_file():
        cfg = json.loads(p.read_text()).get("config") or {}
        return {"datasets": {"locomo": list(cfg.get("train_conversations") or []),
                             "beam": list(cfg.get("beam_conversations") or [])}, "source": LEGACY_REPORT}
    return None


def weights_hash(model_dir: Path | str | None) -> dict[str, Any] | None:
    """sha256 of the model's weights file (the first of `WEIGHT_FILES` present), when not too large."""
    if not model_dir or not Path(model_dir).is_dir():
        return None
    for name in WEIGHT_FILES:
        f = Path(model_dir) / name
        if f.is_file():
            size = f.stat().st_size
            if size > HASH_LIMIT_BYTES:
                return {"file": name, "bytes": size, "sha256": None}
            h = hashlib.sha256()
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            return {"file": name, "bytes": size, "sha256": h.hexdigest()}
    return None


def model_info(path: Path | str | None, name: str | None = None, **extra: Any) -> dict[str, Any]:
    """One model's record: path, name, weights hash and training manifest (None where unknown)."""
    return {"path": str(path) if path else None, "name": name or (Path(path).name if path else None),
            "weights": weights_hash(path), "training": training_manifest(path), **extra}


def embedder_info() -> dict[str, Any]:
    """The embedder the service uses (the settings of this process). The dense baseline's is the
    packaged all-MiniLM-L6-v2 (`bench.baselines.baseline_encoder`), trained on none of these data sets."""
    from app.settings import get_settings

    s = get_settings()
    return model_info(s.embedding_model_path, s.embedding_model_name, backend=s.embedding_backend)


def reranker_path(given: Path | None, embedded_var_dir: Path | None) -> tuple[str | None, str]:
    """Which reranker the measured service uses, and how that is known: the one given (`--reranker`),
    else PALIMPSEST_RERANKER_MODEL_PATH, else (a service the harness starts) the service's own default
    `<var-dir>/models/reranker-minilm` when it exists, else none; for a service given by URL it is unknown."""
    if given:
        return str(given), "--reranker"
    env = os.environ.get("PALIMPSEST_RERANKER_MODEL_PATH")
    if env:
        return env, "PALIMPSEST_RERANKER_MODEL_PATH"
    if embedded_var_dir is None:
        return None, "unknown (a service given by --url; pass --reranker to record and check it)"
    default = Path(embedded_var_dir) / "models" / "reranker-minilm"
    if (default / "config.json").is_file():
        return str(default), "the embedded service's default"
    return None, "none (no reranker installed)"


def overlap(models: Mapping[str, Mapping[str, Any] | None], dataset: str,
            evaluated: Iterable[str]) -> dict[str, list[str]]:
    """Per model role ("embedder", "reranker"): the evaluated conversation ids it was trained on."""
    ev = set(evaluated)
    out: dict[str, list[str]] = {}
    for role, info in models.items():
        training = (info or {}).get("training") or {}
        seen = set((training.get("datasets") or {}).get(dataset) or [])
        both = sorted(ev & seen)
        if both:
            out[role] = both
    return out


def check_overlap(models: Mapping[str, Mapping[str, Any] | None], dataset: str, evaluated: Iterable[str],
                  allow: bool = False) -> dict[str, list[str]]:
    """The overlap (see `overlap`); raises `TrainOverlapError` when there is one and `allow` is false."""
    found = overlap(models, dataset, evaluated)
    if found and not allow:
        parts = [f"the {role} ({(models[role] or {}).get('path')}) was trained on {len(ids)} of them: "
                 f"{', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}" for role, ids in found.items()]
        raise TrainOverlapError(f"refusing to score {dataset} on conversations a model was trained on: "
                                + "; ".join(parts) + ". Use --split validation, another model, or "
                                "--allow-train-overlap (the report is then marked as such).")
    return found
