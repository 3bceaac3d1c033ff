"""The one settings object, and the only module that reads or writes the environment.

Precedence: explicit arguments > ``MNEMOFLOW_*`` environment > TOML file > defaults.
The TOML file is ``$MNEMOFLOW_CONFIG`` if set, else ``<home>/config.toml`` when present.
A command that a running server answers reads only its home, tenant and user, through the light
half of this module, `mnemoflow.client_settings` (same sources, no pydantic).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from mnemoflow.client_settings import DEFAULT_HOME, DEFAULT_TENANT, DEFAULT_USER, ENV_PREFIX
from mnemoflow.client_settings import config_file as _config_file
from mnemoflow.errors import ConfigError
from mnemoflow.recall.config import PresetName

# Every dependency that could phone home or fetch weights is told not to. Applied by
# `configure_runtime` before any of them is imported (huggingface_hub reads
# HF_HUB_OFFLINE at import time).
OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "RUNTIME__DLTHUB_TELEMETRY": "false",
    "LANCEDB_TELEMETRY": "false",
}
# Prefect's temporary local server gets 20 s to start by default; a loaded 2-core
# machine (CI, a laptop mid-ingest) needs more.
RUNTIME_DEFAULTS = {"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120"}


class _Source(BaseModel):
    """Where a configured source's data lands, and when it syncs."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: str = Field(description="Tenant the source's data belongs to.")
    user_id: str = Field(description="User the source's data belongs to.")
    schedule: str | None = Field(None, description="Cron schedule of its Prefect deployment, e.g. '*/30 * * * *'.")


class FilesystemSource(_Source):
    kind: Literal["filesystem"] = "filesystem"
    location: str = Field(description="A local directory or any fsspec URL dlt supports (s3://, gs://, ...).")
    globs: list[str] = Field(["**/*"], description="Which files, relative to the location.")


class ConversationsSource(_Source):
    kind: Literal["conversations"] = "conversations"
    location: str = Field(description="A directory of transcripts (.jsonl or .json lists of turns).")
    globs: list[str] = Field(["**/*.jsonl", "**/*.json"], description="Which transcript files.")


class RestResource(BaseModel):
    """One endpoint of a REST API whose records become documents."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Resource (and raw table) name.")
    path: str = Field(description="Endpoint path relative to base_url.")
    data_selector: str | None = Field(None, description="JSONPath to the records in a response, e.g. 'data'.")
    primary_key: str = Field("id", description="Field that identifies a record.")
    cursor_path: str | None = Field(None, description="Field of the incremental cursor, e.g. 'updated_at'.")
    cursor_param: str = Field("since", description="Query parameter that carries the cursor's last value.")
    initial_value: str | None = Field(None, description="Cursor value of the first sync.")
    title_field: str | None = Field(None, description="Field used as the document title.")
    params: dict[str, Any] = Field(default_factory=dict, description="Extra query parameters.")


class RestApiSource(_Source):
    kind: Literal["rest_api"] = "rest_api"
    base_url: str = Field(description="API root, e.g. https://api.example.com/v1/.")
    resources: list[RestResource] = Field(description="Endpoints to sync.")
    paginator: dict[str, Any] | None = Field(
        None, description="dlt paginator config, e.g. {type = 'page_number', base_page = 1, total_path = 'pages'}; "
        "unset: dlt detects it.")
    auth_token: SecretStr | None = Field(None, description="Bearer token (prefer MNEMOFLOW_SOURCES__<NAME>__AUTH_TOKEN).")


Source = Annotated[FilesystemSource | ConversationsSource | RestApiSource, Field(discriminator="kind")]


class TenantPolicy(BaseModel):
    """One tenant's own protections ([tenants.NAME] tables); what is unset follows the settings."""

    model_config = ConfigDict(extra="forbid")

    rate_limit_per_s: float | None = Field(None, ge=0, description="The tenant's keys' requests per second (0: none).")
    rate_limit_burst: int | None = Field(None, ge=1, description="The tenant's keys' burst (bucket size).")
    redact_pii: bool | None = Field(None, description="Redact personal data in what the tenant stores.")


class Settings(BaseSettings):
    """Everything mnemoflow can be told; embedded, offline defaults."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore")

    home: Path = Field(DEFAULT_HOME, description="Holds the DuckDB file, LanceDB datasets and dlt state.")
    tenant_id: str = Field(DEFAULT_TENANT, description="Tenant used when a command names none.")
    user_id: str = Field(DEFAULT_USER, description="User used when a command names none.")

    embedding_provider: Literal["local", "openai"] = Field(
        "local", description="local: offline all-MiniLM-L6-v2; openai: any OpenAI-compatible endpoint."
    )
    embedding_model: str | None = Field(
        None, description="Model name; defaults to all-MiniLM-L6-v2 (local) or text-embedding-3-small (openai)."
    )
    embedding_dimensions: int | None = Field(
        None, description="Vector size for the openai provider when the model is not a known one."
    )
    embedding_batch_size: int = Field(64, ge=1, description="Texts per embedding call.")
    embedding_batch_tokens: int = Field(
        512, ge=1, description="Padded tokens per inference of the onnx runtime: on a CPU, small batches of similar "
        "length run fastest (bench/README.md, 'Embedding batches')."
    )
    embedding_runtime: Literal["onnx", "torch"] = Field(
        "onnx", description="How the local model runs: onnx (ONNX Runtime, exported once into model_cache_dir; a "
        "command starts ~4 s sooner) or torch (sentence-transformers). Both give the same vectors."
    )
    model_cache_dir: Path = Field(
        Path("~/.cache/mnemoflow"), description="Where models derived from the bundled ones (the ONNX export) are kept."
    )
    openai_base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.")
    openai_api_key: SecretStr | None = Field(None, description="API key for the OpenAI-compatible endpoint.")
    openai_timeout_s: float = Field(30.0, gt=0, description="Per-request timeout for the endpoint.")

    llm_provider: Literal["none", "openai"] = Field(
        "none", description="LLM for extraction steps; 'none' uses the rule-based engines."
    )
    llm_model: str | None = Field(None, description="Chat model name for the openai LLM provider.")
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible chat endpoint, e.g. http://localhost:8000/v1; unset: openai_base_url."
    )
    llm_api_key: SecretStr | None = Field(None, description="API key for the chat endpoint; unset: openai_api_key.")
    llm_timeout_s: float = Field(60.0, gt=0, description="Per-request timeout for the chat endpoint.")
    llm_max_retries: int = Field(
        2, ge=0, description="Retries of a chat request after a timeout, connection error, HTTP 429 or 5xx; "
        "then that turn falls back to the rule-based engine.",
    )
    llm_response_format: Literal["auto", "json_schema", "json_object"] = Field(
        "auto", description="How answers are held to their JSON schema: 'json_schema' (OpenAI, vLLM, Ollama), "
        "'json_object' with the schema beside it (llama.cpp's server), or 'auto': json_schema until a server "
        "refuses it, then json_object.",
    )
    llm_max_tokens: int | None = Field(
        None, ge=1, description="Longest answer a chat request may get (max_tokens); unset: the server's own "
        "limit. A small local model can need one to stop.",
    )

    store_lock_timeout_s: float = Field(
        30.0, ge=0, description="How long to wait for another process to release the DuckDB file."
    )
    store_url: str | None = Field(
        None, description="Where the system of record lives. Unset: the DuckDB file in the home (one machine). "
        "A postgresql:// URL: every table in that PostgreSQL database, shared by any number of servers and "
        "workers (DuckDB's postgres extension runs the store's SQL there; see docs/distributed.md).")
    vectors_url: str | None = Field(
        None, description="Where LanceDB keeps the vector and full-text tables. Unset: <home>/lancedb. An "
        "s3://bucket/prefix URL: an S3-compatible bucket shared by every server (s3_* settings reach it).")
    vectors_read_consistency_s: float = Field(
        0.0, ge=0, description="With a shared vectors_url: how stale another process's writes may be in this "
        "one's searches (LanceDB's read_consistency_interval; 0 checks for new versions on every search).")
    s3_endpoint: str | None = Field(None, description="S3-compatible endpoint, e.g. http://127.0.0.1:9000; unset: AWS.")
    s3_region: str = Field("us-east-1", description="Region of the bucket.")
    s3_access_key_id: SecretStr | None = Field(None, description="Access key of the bucket; unset: the AWS defaults.")
    s3_secret_access_key: SecretStr | None = Field(None, description="Secret key of the bucket.")
    store_connect_timeout_s: float = Field(
        10.0, gt=0, description="How long to wait for the store_url's or vectors_url's server to answer before "
        "saying it cannot be reached.")
    worker_heartbeat_s: float = Field(
        5.0, gt=0, description="On a shared store: how often a server or worker says it is alive; a job leased by "
        "a process silent for three beats is taken over by another.")
    dask_address: str | None = Field(
        None, description="A dask.distributed scheduler (tcp://host:8786) that bulk ingest and reembed fan their "
        "extraction, chunking and embedding out to; unset: a LocalCluster in the process.")
    server: str | None = Field(
        None, description="Send every command through this server (http://host:port) instead of the home's own; "
        "several, comma-separated, are tried in order and the first that answers is used. With server_token, "
        "the way a client reaches a cluster (`mnemoflow cluster up` prints both).")
    server_token: SecretStr | None = Field(
        None, description="The operator token servers of a shared store accept from local clients (every server "
        "of a cluster is given the same one); unset: each `serve` makes its own and writes it into its home.")
    outbox_batch_size: int = Field(
        1024, ge=1, description="Jobs claimed per outbox pass; large batches let the model sort texts by "
        "length and pad less (256 costs ~15% more embedding time than 1024).",
    )
    outbox_max_attempts: int = Field(
        5, ge=1, description="Attempts before a failing job becomes a dead letter (status 'dead', its last error "
        "kept; `mnemoflow replay` queues it again).")
    outbox_lease_s: float = Field(300.0, gt=0, description="How long a claimed job stays leased.")
    outbox_backoff_s: float = Field(
        30.0, gt=0, description="How long a job that failed waits before its next attempt; the wait doubles with "
        "each further failure, up to outbox_backoff_max_s.")
    outbox_backoff_max_s: float = Field(3600.0, gt=0, description="The longest wait between two attempts of a job.")
    outbox_stuck_after_s: float = Field(
        3600.0, gt=0, description="A pending job nobody has touched for this long (and that is not backing off) is "
        "reported stuck by `mnemoflow maintain check`.")

    max_file_bytes: int = Field(50_000_000, ge=1, description="Files larger than this go to ingest_errors.")
    chunk_max_tokens: int = Field(256, ge=16, description="Token cap per chunk (ceil(chars/4)).")
    max_chunks_per_document: int = Field(
        25_000, ge=1, description="An input that chunks into more than this goes to ingest_errors: writing a "
        "document costs ~25 KB of memory per chunk, so 25,000 (about 7,000 dense pages) stays near 1 GB.",
    )
    html_main_content_max_bytes: int = Field(
        5_000_000, ge=0, description="Larger HTML pages are read whole once navigation and page furniture are "
        "removed, without trafilatura's main-content choice (it holds ~30 bytes per page byte: 1.5 GB for 47 MB).",
    )
    pdf_max_page_content_bytes: int = Field(
        8_000_000, ge=1, description="A PDF page whose content streams inflate past this is not read (text "
        "extraction costs ~60 bytes of memory per content byte: a 1 MB file can inflate to gigabytes); the rest "
        "of the document is, and the page is listed in its metadata.",
    )
    code_max_bytes: int = Field(
        1_000_000, ge=1, description="Source files larger than this are not parsed (recorded in ingest_errors)."
    )
    audio_engine: Literal["faster-whisper", "openai-whisper"] = Field(
        "faster-whisper", description="Speech-to-text engine; faster-whisper runs the offline tiny.en model."
    )
    audio_max_seconds: float = Field(
        4 * 3600, gt=0, description="Recordings longer than this go to ingest_errors (refused before decoding "
        "when the header says so; transcription runs at ~20-50x real time on two cores).",
    )
    whisper_model_path: Path | None = Field(
        None, description="faster-whisper: a CTranslate2 model directory (default: the bundled tiny.en); "
        "openai-whisper: a checkpoint file (required for that engine)."
    )
    audio_compute_type: str = Field("int8", description="faster-whisper compute type on the CPU.")
    ocr_engine: Literal["rapidocr", "tesseract"] = Field(
        "rapidocr", description="OCR of pictures, scanned pages and video frames: rapidocr (PP-OCRv6 models inside "
        "the rapidocr wheel; Chinese, English, Japanese, Latin scripts) or tesseract (Debian's tesseract-ocr, "
        "installed apart: apt-get install tesseract-ocr tesseract-ocr-eng ...; it also reads Korean).")
    ocr_tesseract_languages: str = Field(
        "eng+chi_sim+jpn+kor", description="Tesseract's languages (its -l argument), each needing its "
        "tesseract-ocr-<lang> package.")
    ocr_max_pixels: int = Field(
        60_000_000, ge=1, description="A picture (an image file, a TIFF page, a scanned PDF page as rendered, a video "
        "frame) with more pixels than this is not decoded: a few kilobytes of PNG can declare a gigapixel canvas, "
        "a decompression bomb. An image over it goes to ingest_errors.")
    ocr_max_side: int = Field(
        4000, ge=64, description="Pictures are scaled down to this many pixels on their long side before OCR "
        "(text is large enough by then, and OCR time grows with the pixels).")
    ocr_max_pages: int = Field(
        200, ge=1, description="Most pages read with OCR per document (TIFF pages, scanned PDF pages, about 3-10 s "
        "each on two cores); the pages after are listed in the document's metadata, not read.")
    ocr_pdf_dpi: int = Field(200, ge=50, le=600, description="Resolution at which a scanned PDF page is rendered for OCR.")
    video_frame_interval_s: float = Field(
        1.0, gt=0, description="How often a video's picture is looked at for a change (a new slide); a picture that "
        "changed and then held still for one interval is read with OCR.")
    video_max_ocr_frames: int = Field(
        120, ge=0, description="Most video frames read with OCR per video (a slide deck of 120 slides); later "
        "changes of the picture are counted in the document's metadata, not read.")
    chat_context: Literal["neighbours", "previous", "none"] = Field(
        "neighbours", description="What BM25 indexes with a conversation turn besides the turn itself: the session "
        "date and the neighbouring turns (default), the previous turn only, or nothing.",
    )
    chat_captions: bool = Field(True, description="Show and index the captions of images shared in a turn.")
    generate_memories: bool = Field(
        True, description="Turn new conversation turns into atomic, linked memories (an outbox job per session, "
        "drained before embeddings by ingest and by the worker); off keeps conversations as chunks only.",
    )

    seal_min_children: int = Field(
        3, ge=1, description="Memories a subject (source, topic, day) needs, not yet covered by one of its summaries, "
        "before `seal` writes an L1 summary of them; fewer wait for more (a summary of one or two memories would "
        "only repeat them).",
    )
    seal_l1_tokens: int = Field(96, ge=16, description="Token budget (ceil(chars/4)) of an L1 summary, title included.")
    seal_l2_tokens: int = Field(192, ge=16, description="Token budget of an L2 summary, title included.")
    cluster_min_size: int = Field(
        5, ge=2, description="Fewest memories a topic holds (HDBSCAN's min_cluster_size); memories in no dense "
        "enough group belong to no topic.",
    )
    profile_static_lines: int = Field(12, ge=0, description="Most lines in a profile's static section.")
    profile_dynamic_lines: int = Field(8, ge=0, description="Most lines in a profile's dynamic section.")
    profile_dynamic_days: float = Field(
        30.0, gt=0, description="What counts as going on now for the dynamic profile: memories observed within "
        "this many days of the user's newest one, and plans whose event has not passed by then.",
    )

    bm25_engine: Literal["lancedb", "duckdb"] = Field(
        "lancedb",
        description="Online BM25: LanceDB's native index (fast at 100k+ chunks) or DuckDB FTS (always kept "
        "current for analysts). See bench/README.md for the measurements behind the default.",
    )
    recall_k: int | None = Field(
        None, ge=1, description="Default cap on items recall returns; unset: as many as fit the token budget."
    )
    recall_token_budget: int = Field(2048, ge=16, description="Default context budget in tokens.")
    recall_preset: PresetName = Field(
        "default", description="Named recall configuration: default, summaries, bm25 or rrf (mnemoflow.recall.config).")
    recall_track_access: bool = Field(
        True, description="Count every memory recall returns (access_count, last_accessed_at): decay keeps "
        "memories that are used longer.")
    recall_access_flush_s: float = Field(
        5.0, ge=0, description="Counted accesses wait in memory at most this long before one transaction writes "
        "them (also before decay and when the store closes); 0 writes them with every recall, which costs "
        "recall a commit (~8 ms).")

    graph_max_depth: int = Field(
        3, ge=1, le=10, description="Entity graph queries: the most hops a subgraph may span; a deeper request is "
        "refused naming this cap.")
    graph_max_nodes: int = Field(
        300, ge=1, le=5000, description="Entity graph queries: the most entities one subgraph returns; a graph that "
        "reaches it stops there and says so.")
    graph_max_edges: int = Field(
        1500, ge=1, le=20000, description="Entity graph queries: the most edges (relations and co-mentions) one "
        "subgraph returns; a graph that reaches it stops there and says so.")

    decay_half_life_days: float = Field(
        30.0, gt=0, description="Decay: the days an unused memory takes to lose half its retention, before the "
        "boosts for accesses and hot entities lengthen it.")
    decay_access_weight: float = Field(
        0.5, ge=0, description="Decay: how much recall accesses and restatements lengthen the half-life "
        "(x (1 + w * ln(1 + uses))).")
    decay_hotness_weight: float = Field(
        0.5, ge=0, description="Decay: how much the hottest entity a memory names lengthens its half-life "
        "(x (1 + w * ln(1 + heat))).")
    decay_archive_threshold: float = Field(
        0.05, ge=0, le=1, description="Decay archives a memory whose retention falls under this (out of default "
        "recall, still in history).")
    decay_immune_salience: float = Field(
        0.9, ge=0, le=1, description="Memories at least this salient are never archived by decay (nor pinned ones).")
    retention_days: float = Field(
        30.0, ge=0, description="Hard deletion: what was deleted (memories, documents, chunks) or archived longer ago "
        "than this is removed for good by the decay job, from DuckDB, LanceDB and both BM25 indexes.")
    purge_rewrites_file: bool = Field(
        True, description="After a purge removed anything, copy the DuckDB file afresh in place of itself: DuckDB "
        "keeps a deleted row's bytes in its file's free blocks until they are reused, so without this the text of "
        "a purged row can linger in the file. Costs a copy of the file (seconds per GB) once per purge.")

    eval_scenarios_dir: Path | None = Field(
        None, description="Scenario files the evaluate job runs; unset: the repository's eval/scenarios when present.")
    eval_locomo_dir: Path | None = Field(
        None, description="A LoCoMo data directory (conversations.jsonl, questions.jsonl); set, the evaluate job "
        "also runs LoCoMo at 512 and 2048 tokens.")

    server_host: str = Field("127.0.0.1", description="Interface `mnemoflow serve` listens on.")
    server_port: int = Field(8765, ge=0, le=65535, description="Port of `mnemoflow serve` (0: any free port).")
    server_outbox_poll_s: float = Field(
        2.0, gt=0, description="How often the server's outbox worker looks for derived work (memories, vectors).")
    quack_enabled: bool = Field(
        True, description="Serve the live store read-only to SQL clients over DuckDB's Quack protocol (beta: when "
        "it cannot start, the server goes on without it).")
    quack_port: int = Field(0, ge=0, le=65535, description="Port of the Quack endpoint (0: any free port).")
    schedules_enabled: bool = Field(
        True, description="Run the maintenance jobs and scheduled syncs on their cron schedules while serving "
        "(served Prefect deployments).")
    prefect_api_url: str | None = Field(
        None, description="Prefect server the schedules use; unset: `mnemoflow serve` starts a local one "
        "(its database under <home>/prefect).")

    sources: dict[str, Source] = Field(
        default_factory=dict, description="Configured sources for `mnemoflow sync NAME`, usually from the TOML file "
        "([sources.NAME] tables).")

    rate_limit_per_s: float = Field(
        0.0, ge=0, description="Requests per second each API key may make to the HTTP API and MCP, reads and writes "
        "each in a token bucket of their own; over it a request is refused (HTTP 429 with Retry-After). 0: no limit.")
    rate_limit_burst: int = Field(
        10, ge=1, description="Requests a key may make at once before rate_limit_per_s applies (the bucket's size).")
    redact_pii: bool = Field(
        False, description="Replace card numbers, email addresses, phone numbers, IBANs and national id numbers by "
        "[CARD], [EMAIL], [PHONE], [IBAN], [NATIONAL_ID] in everything written, before it is stored or embedded.")
    pii_phone_region: str = Field(
        "US", min_length=2, max_length=2, description="Country (ISO 3166 code) a phone number written without a "
        "country code is read as from, when redacting; numbers with +CC are found whatever it is.")
    tenants: dict[str, TenantPolicy] = Field(
        default_factory=dict, description="Per-tenant overrides of rate_limit_per_s, rate_limit_burst and "
        "redact_pii ([tenants.NAME] tables in the TOML file).")
    promote_min_evaluations: int = Field(
        20, ge=1, description="The `promote` job suggests a SHADOW rule once it has matched at least this often ...")
    promote_min_ratings: int = Field(
        5, ge=1, description="... has been rated at least this often (through the tool selections it matched) ...")
    promote_min_positive_rate: float = Field(
        0.8, ge=0, le=1, description="... and at least this share of those ratings were positive.")
    debug_max_items: int = Field(
        10, ge=1, le=100, description="Most items a debug answer (raw vectors, internal scores; admin keys only) holds.")

    @field_validator("home", mode="after")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    def scratch(self, home: Path, **changes: Any) -> Settings:
        """These settings for a throwaway store in `home` (an evaluation's, a probe's): always the
        one-machine store, never the shared one these settings may name, no sources, no server."""
        return self.model_copy(update={"home": home, "sources": {}, "store_url": None, "vectors_url": None,
                                       "server": None, **changes})

    @property
    def duckdb_path(self) -> Path:
        return self.home / "mnemoflow.duckdb"

    @property
    def lancedb_path(self) -> Path:
        return self.home / "lancedb"

    @property
    def dlt_dir(self) -> Path:
        return self.home / "dlt"

    def redacts(self, tenant_id: str) -> bool:
        """Whether what `tenant_id` writes is redacted: its own setting, else redact_pii."""
        own = self.tenants.get(tenant_id)
        return self.redact_pii if own is None or own.redact_pii is None else own.redact_pii

    def rate_limit(self, tenant_id: str) -> tuple[float, int]:
        """(requests per second, burst) of each key of `tenant_id`: its own settings, else the defaults."""
        own = self.tenants.get(tenant_id) or TenantPolicy()
        return (self.rate_limit_per_s if own.rate_limit_per_s is None else own.rate_limit_per_s,
                self.rate_limit_burst if own.rate_limit_burst is None else own.rate_limit_burst)

    @property
    def resolved_embedding_model(self) -> str:
        if self.embedding_model:
            return self.embedding_model
        return "all-MiniLM-L6-v2" if self.embedding_provider == "local" else "text-embedding-3-small"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        init_kwargs: dict[str, Any] = getattr(init_settings, "init_kwargs", {})
        toml_file = _config_file(init_kwargs.get("home"))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=toml_file))


def load_settings(home: Path | str | None = None, **overrides: Any) -> Settings:
    """Build settings; `home` (e.g. from `--home`) wins over the environment."""
    if home is not None:
        overrides["home"] = Path(home)
    try:
        return Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        where = _config_file(overrides.get("home"))
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "settings"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        source = _config_file(overrides.get("home"))
        origin = f" in {source} or the MNEMOFLOW_* environment" if source else " in the MNEMOFLOW_* environment"
        raise ConfigError(f"setting {field}{origin}: {first['msg']}{more}") from None


def configure_runtime() -> None:
    """Switch off telemetry and hub downloads of every dependency before they are imported.

    Values a user has set explicitly are left alone.
    """
    for key, value in {**OFFLINE_ENVIRONMENT, **RUNTIME_DEFAULTS}.items():
        os.environ.setdefault(key, value)


def prefect_server_environment(prefect_home: Path) -> dict[str, str]:
    """The environment of a Prefect server started for a home: this process's, offline, with its own
    PREFECT_HOME (its database) and no PREFECT_API_URL (it is the API, not a client of one)."""
    env = {**os.environ, **OFFLINE_ENVIRONMENT, "PREFECT_HOME": str(prefect_home), "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    return env

