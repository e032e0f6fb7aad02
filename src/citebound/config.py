"""`citebound.toml`: one configuration file, overridable by `CITEBOUND_*` environment variables.

Precedence: built-in defaults < the TOML file < environment variables < explicit CLI options.
Relative paths in the file resolve against the file's directory; relative paths from variables
and options resolve against the working directory.

Example file::

    policy = "strict-v1"            # preset name or a policy TOML path
    store = ".citebound"            # or a table: [store] path = ".citebound", url = "postgresql://…"
    collection = "default"

    [provider]
    name = "extractive"             # extractive | openai | ollama
    model = ""
    base_url = ""
    api_key_env = "OPENAI_API_KEY"
    api = "chat"                    # chat | responses (openai only)

    [limits]                        # N0-N4 (docs/design.md); override the policy's retrieval values
    n0_query_pieces = 5
    n1_retr_max_candidates = 200
    n2_rerank_top_k = 50
    n3_final_selection_max = 24
    n4_recent_conv_max_pairs = 8

    [rerank]                        # cross-encoder over the first N2 candidates; docs/retrieval.md
    model_path = ""                 # "" = passthrough; an ONNX export dir (model.onnx +
                                    # tokenizer.json), a .onnx file, or a sentence-transformers dir
    batch_size = 32
    max_length = 0                  # tokens per (query, text) pair; 0 = the model's own

    [stages]                        # LLM-backed stages; off = deterministic defaults
    llm_shape = false
    llm_gate = false
    llm_format = false
    llm_condense = false
    llm_header_mapping = false
    llm_rewrite = false             # follow-up retrieval rewrite by the LLM (docs/conversations.md)

    [audit]
    sinks = ["sqlite"]              # sqlite | delta
    sqlite_path = ""                # default: <store>/audit.sqlite
    delta_path = ""                 # default: <store>/audit_delta; or s3://, abfss://, gs://
    delta_storage_options = {}      # delta-rs options, e.g. { AWS_REGION = "eu-west-1" };
                                    # no secrets here: $CITEBOUND_DELTA_STORAGE_OPTIONS (JSON)
    store_prompt_text = false

    [ingest]                        # per-file bounds; over one: OVER_LIMIT, docs/ingest.md
    max_file_bytes = 268435456      # 256 MiB, checked before reading
    max_pdf_pages = 10000
    max_pdf_decompressed_bytes = 268435456    # content streams of all pages, 256 MiB
    max_record_chars = 1000000      # one JSONL line
    max_document_chars = 50000000
    max_chunks_per_document = 100000
    max_seconds_per_file = 300      # parsing in the worker process, then it is killed
    max_worker_memory_mb = 4096     # RLIMIT_AS of the worker; 0 = none
    worker = "auto"                 # auto | always | never

    [api]                           # `citebound serve`; see docs/api.md
    max_body_bytes = 1048576
    concurrency = 0                 # pipelines at once; 0 = CPU cores
    max_input_chars = 8000          # caller text per request (question or all chat messages)
    allowed_hosts = ["localhost", "127.0.0.1", "[::1]", "::1"]   # Host header allow-list
    cors_origins = []               # browser origins allowed to call the API
    [[api.keys]]                    # none: anonymous, loopback only
    name = "ops-reader"
    sha256 = "<hex sha256 of the key>"   # `citebound apikey` makes one
    role = "reader"                 # reader | admin
    collections = ["plant"]         # ["*"] = every collection
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from citebound.contracts.base import Contract, content_hash
from citebound.contracts.ingest import IngestLimits
from citebound.errors import ConfigError
from citebound.policy import DEFAULT_PRESET, PRESETS, Policy, load_policy


class ProviderConfig(Contract):
    name: Literal["extractive", "openai", "ollama"] = Field(
        default="extractive", description="LLM provider."
    )
    model: str = Field(default="", description="Model name; provider default when empty.")
    base_url: str = Field(default="", description="Server URL; provider default when empty.")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Env var holding the API key.")
    api: Literal["chat", "responses"] = Field(default="chat", description="OpenAI-compatible API.")


class Limits(Contract):
    """N-constants N0-N4 (soft caps; docs/design.md glossary)."""

    n0_query_pieces: int = Field(default=5, ge=1, description="Query pieces (N0).")
    n1_retr_max_candidates: int = Field(default=200, ge=1, description="Retrieval candidates (N1).")
    n2_rerank_top_k: int = Field(default=50, ge=1, description="Reranker input (N2).")
    n3_final_selection_max: int = Field(default=24, ge=1, description="Final selection cap (N3).")
    n4_recent_conv_max_pairs: int = Field(default=8, ge=0, description="Conversation pairs (N4).")


class RerankConfig(Contract):
    """The reranker of the first N2 candidates (N2 itself is `[limits] n2_rerank_top_k`)."""

    model_path: str = Field(
        default="",
        description="Local cross-encoder: an ONNX export directory (model.onnx or "
        "onnx/model.onnx, tokenizer.json), one .onnx file, or a sentence-transformers "
        "directory; empty = passthrough (no reranking). Never downloaded.",
    )
    batch_size: int = Field(default=32, ge=1, description="(query, text) pairs per forward pass.")
    max_length: int = Field(
        default=0,
        ge=0,
        description="Token cap per (query, text) pair; 0 = the model's own (512 when unknown).",
    )


class StageSwitches(Contract):
    llm_shape: bool = Field(default=False, description="A2 uses the LLM provider.")
    llm_gate: bool = Field(default=False, description="A3 semantic keep/drop uses the provider.")
    llm_format: bool = Field(default=False, description="A5 uses the provider.")
    llm_condense: bool = Field(
        default=False, description="A4 condenses S_CTX_MD with the provider (superprompt-v1)."
    )
    llm_header_mapping: bool = Field(
        default=False,
        description="A0 asks the provider to map question headers it does not know to known keys.",
    )
    llm_rewrite: bool = Field(
        default=False,
        description="Follow-up questions are rewritten for retrieval by the provider (frozen "
        "prompt, recorded) instead of the deterministic entity carry-over.",
    )


SinkName = Literal["sqlite", "delta"]


def _default_sinks() -> list[SinkName]:
    return ["sqlite"]


class AuditConfig(Contract):
    sinks: list[SinkName] = Field(default_factory=_default_sinks, description="Sinks.")
    sqlite_path: str = Field(
        default="", description="SQLite audit file; default <store>/audit.sqlite."
    )
    delta_path: str = Field(
        default="",
        description="Delta table dir or URI (file://, s3://, abfss://, gs://); "
        "default <store>/audit_delta.",
    )
    delta_storage_options: dict[str, str] = Field(
        default_factory=dict,
        description="delta-rs storage options for Delta tables (endpoint, region, ...). Shown "
        "by `config show`: put secrets in $CITEBOUND_DELTA_STORAGE_OPTIONS or the provider's "
        "own variables instead.",
    )
    store_prompt_text: bool = Field(
        default=False, description="Keep prompt text, not only its hash."
    )


class ApiKey(Contract):
    """One API key: only its sha256 is stored; the key itself never is."""

    name: str = Field(min_length=1, description="Who holds the key (shown in logs).")
    sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="Lowercase hex sha256 of the key bytes (UTF-8)."
    )
    role: Literal["reader", "admin"] = Field(default="reader", description="reader or admin.")
    collections: list[str] = Field(
        min_length=1, description='Collections the key may read; ["*"] means every collection.'
    )


class ApiConfig(Contract):
    keys: list[ApiKey] = Field(
        default_factory=list, description="API keys; none = anonymous readers, loopback only."
    )
    max_body_bytes: int = Field(
        default=1_048_576, ge=1024, description="Largest request body accepted (413 above)."
    )
    concurrency: int = Field(
        default=0, ge=0, description="Requests run through the pipeline at once; 0 = CPU cores."
    )
    max_input_chars: int = Field(
        default=8000,
        ge=1,
        le=1_000_000,
        description="Most characters of caller text one request may carry (a question, or all "
        "chat messages together); more is a 413 before any work, so the audit never stores more.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["localhost", "127.0.0.1", "[::1]", "::1"],
        description="Host header values served (port ignored); '*' = any. Loopback names by "
        "default, against DNS rebinding: add the names your clients use when binding elsewhere.",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host[:port]) whose pages may call the API from a "
        "browser; none by default (the web page is same-origin and needs none).",
    )


class Config(Contract):
    """Effective configuration of one citebound process."""

    policy: str = Field(
        default=DEFAULT_PRESET,
        description="Policy preset name (citebound.presets; default strict-v1, fitted; seed-v1: "
        "the seeds' literal values) or a policy TOML file.",
    )
    store: str = Field(default=".citebound", description="Store directory.")
    database: str = Field(
        default="",
        description="PostgreSQL URL (postgresql://…) of a served store and audit shared by "
        "several processes ([store] url, $CITEBOUND_DATABASE_URL, --database); empty = the "
        "embedded store directory. docs/postgres.md.",
    )
    collection: str = Field(default="default", description="Default collection.")
    provider: ProviderConfig = Field(default_factory=ProviderConfig, description="LLM provider.")
    limits: Limits = Field(default_factory=Limits, description="N-constants.")
    rerank: RerankConfig = Field(default_factory=RerankConfig, description="Reranker.")
    stages: StageSwitches = Field(default_factory=StageSwitches, description="LLM stages.")
    audit: AuditConfig = Field(default_factory=AuditConfig, description="Audit sinks.")
    api: ApiConfig = Field(default_factory=ApiConfig, description="HTTP server.")
    ingest: IngestLimits = Field(
        default_factory=IngestLimits, description="Per-file ingest limits (docs/ingest.md)."
    )

    @property
    def fingerprint(self) -> str:
        return content_hash(self)

    @property
    def store_path(self) -> Path:
        return Path(self.store)

    @property
    def audit_sqlite_path(self) -> Path:
        return (
            Path(self.audit.sqlite_path)
            if self.audit.sqlite_path
            else self.store_path / "audit.sqlite"
        )

    @property
    def audit_delta_path(self) -> Path | str:
        """A Path for a local table, the URI text for an object-store one."""
        # Lazy: the citebound.audit package costs ~240 ms to import (its sinks), and every command
        # imports this module.
        from citebound.audit.location import is_uri

        value = self.audit.delta_path
        if value and is_uri(value) and not value.startswith("file://"):
            return value
        if value.startswith("file://"):
            from citebound.audit.location import table_location

            return table_location(value).local_path
        return Path(value) if value else self.store_path / "audit_delta"

    def load_policy(self) -> Policy:
        """The policy with the N-constants of `[limits]` applied (so they are fingerprinted)."""
        base = load_policy(self.policy)
        retrieval = base.retrieval.model_dump() | {
            k: getattr(self.limits, k)
            for k in (
                "n0_query_pieces",
                "n1_retr_max_candidates",
                "n2_rerank_top_k",
                "n3_final_selection_max",
            )
        }
        superprompt = base.superprompt.model_dump() | {
            "n4_recent_conv_max_pairs": self.limits.n4_recent_conv_max_pairs
        }
        return base.evolve(retrieval=retrieval, superprompt=superprompt)


# Environment variables: CITEBOUND_<KEY> for top-level keys, CITEBOUND_<SECTION>_<KEY> for sections.
_ENV: dict[str, tuple[str, ...]] = {
    "CITEBOUND_POLICY": ("policy",),
    "CITEBOUND_STORE": ("store",),
    "CITEBOUND_DATABASE_URL": ("database",),
    "CITEBOUND_COLLECTION": ("collection",),
    "CITEBOUND_PROVIDER": ("provider", "name"),
    "CITEBOUND_MODEL": ("provider", "model"),
    "CITEBOUND_BASE_URL": ("provider", "base_url"),
    "CITEBOUND_API_KEY_ENV": ("provider", "api_key_env"),
    "CITEBOUND_API": ("provider", "api"),
    **{f"CITEBOUND_{k.upper()}": ("limits", k) for k in Limits.model_fields},
    **{f"CITEBOUND_{k.upper()}": ("stages", k) for k in StageSwitches.model_fields},
    **{f"CITEBOUND_RERANK_{k.upper()}": ("rerank", k) for k in RerankConfig.model_fields},
    "CITEBOUND_AUDIT_SINKS": ("audit", "sinks"),
    "CITEBOUND_AUDIT_SQLITE_PATH": ("audit", "sqlite_path"),
    "CITEBOUND_AUDIT_DELTA_PATH": ("audit", "delta_path"),
    "CITEBOUND_STORE_PROMPT_TEXT": ("audit", "store_prompt_text"),
    "CITEBOUND_API_KEYS": ("api", "keys"),  # a JSON list of [[api.keys]] tables
    "CITEBOUND_API_MAX_BODY_BYTES": ("api", "max_body_bytes"),
    "CITEBOUND_API_CONCURRENCY": ("api", "concurrency"),
    "CITEBOUND_API_MAX_INPUT_CHARS": ("api", "max_input_chars"),
    "CITEBOUND_API_ALLOWED_HOSTS": ("api", "allowed_hosts"),  # comma-separated
    "CITEBOUND_API_CORS_ORIGINS": ("api", "cors_origins"),  # comma-separated
    **{f"CITEBOUND_INGEST_{k.upper()}": ("ingest", k) for k in IngestLimits.model_fields},
}
ENV_VARS = tuple(sorted(_ENV))


def _env_value(path: tuple[str, ...], raw: str) -> Any:
    if path in (("audit", "sinks"), ("api", "allowed_hosts"), ("api", "cors_origins")):
        return [s.strip() for s in raw.split(",") if s.strip()]
    if path == ("api", "keys"):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as err:
            raise ConfigError(
                f"$CITEBOUND_API_KEYS is not a JSON list of keys: {err.msg}", field="api.keys"
            ) from None
    return raw


# Path-valued keys of the file: relative values mean "next to citebound.toml", as in pyproject
# or docker-compose, so `--config deploy/citebound.toml` works from any working directory.
# Environment variables and CLI options stay relative to the working directory.
_FILE_PATHS: tuple[tuple[str, ...], ...] = (
    ("store",),
    ("policy",),
    ("rerank", "model_path"),
    ("audit", "sqlite_path"),
    ("audit", "delta_path"),
)


def _store_table(data: dict[str, Any], source: str) -> None:
    """`[store] path = …, url = …` is the table form of `store = "…"` plus `database`."""
    table = data.get("store")
    if not isinstance(table, dict):
        return
    unknown = sorted(set(table) - {"path", "url"})
    if unknown:
        raise ConfigError(
            f"invalid config ({source}): [store] has unknown key(s) {unknown}: use path, url",
            field="store",
            source=source,
        )
    if "url" in table:
        data["database"] = table["url"]
    if "path" in table:
        data["store"] = table["path"]
    else:
        del data["store"]


def _anchor_paths(data: dict[str, Any], base: Path) -> None:
    """Rewrite the file's relative path values to be relative to `base` (in place)."""
    for keys in _FILE_PATHS:
        parent: Any = data
        for k in keys[:-1]:
            parent = parent.get(k) if isinstance(parent, dict) else None
        value = parent.get(keys[-1]) if isinstance(parent, dict) else None
        if not isinstance(value, str) or not value or Path(value).is_absolute() or "://" in value:
            continue  # unset, "" (= default), a URI or a wrong type that validation will name
        if keys == ("policy",) and value in PRESETS:
            continue
        parent[keys[-1]] = str(base / value)


def load_config(
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Load `path` (or `./citebound.toml` when present), then env, then `overrides`.

    Raises ConfigError naming the file and field on any invalid value.
    """
    env = os.environ if env is None else env
    data: dict[str, Any] = {}
    source = "defaults"
    candidate = Path(path) if path is not None else Path("citebound.toml")
    if path is not None or candidate.is_file():
        if not candidate.is_file():
            raise ConfigError(f"config file {candidate} does not exist", source=str(candidate))
        try:
            data = tomllib.loads(candidate.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(
                f"config file {candidate} is not valid TOML: {err}", source=str(candidate)
            ) from None
        source = str(candidate)
        _store_table(data, source)
        _anchor_paths(data, candidate.parent)
    for var, keys in _ENV.items():
        if var in env:
            target = data
            for k in keys[:-1]:
                target = target.setdefault(k, {})
            target[keys[-1]] = _env_value(keys, env[var])
            source += f" + ${var}"
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        target = data
        *parents, last = dotted.split(".")
        for k in parents:
            target = target.setdefault(k, {})
        target[last] = value
    try:
        config = Config.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"invalid config ({source}): field '{field}': {first['msg']}",
            field=field,
            source=source,
        ) from None
    config.load_policy()  # fail now, not on the first request, when the policy is bad
    return config
