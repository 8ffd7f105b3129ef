"""Export a trained model (the cross-encoder, or the bi-encoder of `training.embedder`) as a release
the package can ship: fp16 safetensors, its tokenizer, config and sentence-transformers modules
(`1_Pooling/`, `2_Normalize/`), and its training manifest and report (what it saw, how it was made).

    python -m training.export var/models/reranker-minilm OUT_DIR
    python -m training.export var/models/embedder-minilm app/adapters/embed_model

The weights are stored in half precision (about 45 MB for MiniLM-L6 instead of 90) and loaded back in
float32 (`torch_dtype` is kept float32 in the config), so the product computes exactly as it would with
the fp32 model up to fp16 rounding of the weights.
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

KEEP = ("config.json", "config_sentence_transformers.json", "modules.json", "sentence_bert_config.json",
        "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
        "training-manifest.json", "training_report.json")


def portable_report(path: Path) -> None:
    """Cut the absolute paths in a training report (output and data folders of the machine it was
    trained on) to their last part: a release says how it was made, not where."""
    def cut(v):  # noqa: ANN001, ANN202
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, list):
            return [cut(x) for x in v]
        return Path(v).name if isinstance(v, str) and Path(v).is_absolute() else v

    path.write_text(json.dumps(cut(json.loads(path.read_text())), indent=2) + "\n")


def export_fp16(src: str | Path, dst: str | Path) -> Path:
    """Copy `src` (a saved CrossEncoder or SentenceTransformer directory) to `dst` with fp16 weights;
    returns the weights file."""
    from safetensors.torch import load_file, save_file

    src, dst = Path(src), Path(dst)
    if not (src / "model.safetensors").is_file():
        raise FileNotFoundError(f"no model.safetensors in {src}")
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for name in KEEP:
        if (src / name).is_file():
            shutil.copy(src / name, dst / name)
    if (dst / "training_report.json").is_file():
        portable_report(dst / "training_report.json")
    for module in sorted(p for p in src.iterdir() if p.is_dir() and p.name[:1].isdigit()):  # 1_Pooling, ...
        shutil.copytree(module, dst / module.name)
    cfg = json.loads((dst / "config.json").read_text())
    for key in ("torch_dtype", "dtype"):  # load back as float32: CPU inference and int8 quantisation want it
        if key in cfg:
            cfg[key] = "float32"
    (dst / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    tensors = load_file(str(src / "model.safetensors"))
    half = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
    out = dst / "model.safetensors"
    save_file(half, str(out), metadata={"format": "pt"})
    out.chmod(0o644)
    kind = "the bi-encoder that embeds events and questions" if (dst / "1_Pooling").is_dir() else "the cross-encoder"
    (dst / "README.md").write_text(f"# {src.name}\n\n{kind[0].upper() + kind[1:]} of Palimpsest: its model card is "
                                   "docs/models.md; what it was trained on is training-manifest.json.\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Export a trained cross-encoder as fp16 safetensors.")
    ap.add_argument("src")
    ap.add_argument("dst")
    a = ap.parse_args(argv)
    out = export_fp16(a.src, a.dst)
    total = sum(f.stat().st_size for f in Path(a.dst).iterdir())
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB ({total / 1e6:.1f} MB in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
