"""`PipelineContext`: the resources stages use (policy, store, retriever, reranker, provider,
sinks).

Stages are memoryless: the context holds loaded models and open files, never per-request state.
Heavy parts load lazily on first use so `citebound config show` or a refused request stays fast;
only cheap checks run at construction (a missing `[rerank] model_path` fails there, not on the
first request).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from citebound.config import Config
from citebound.llm import Provider, make_provider
from citebound.policy import Policy
from citebound.rerank import Reranker, load_reranker, reranker_backend
from citebound.retrieve import Retriever
from citebound.store.base import Store
from citebound.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from citebound.audit import AuditSink


@dataclass
class PipelineContext:
    """Everything a stage may use besides the state. Build one per process and reuse it."""

    config: Config
    policy: Policy = field(init=False)
    provider_override: Provider | None = None
    # Wraps the provider this context makes (the batch call journal): the wrapper is then
    # this context's to close, and closing it closes the client inside.
    provider_wrapper: Callable[[Provider], Provider] | None = None
    sinks_override: list[AuditSink] | None = None
    store_override: Store | None = None
    reranker_override: Reranker | None = None

    def __post_init__(self) -> None:
        self.policy = self.config.load_policy()
        if self.reranker_override is None and self.config.rerank.model_path:
            reranker_backend(self.config.rerank.model_path)  # ConfigError now, not per request

    @cached_property
    def store(self) -> Store:
        if self.store_override is not None:
            return self.store_override
        if self.config.database:
            # Lazy: store.open adds ~2 ms to importing citebound.pipeline (python -X
            # importtime) and is used only with a database.
            from citebound.store.open import open_store

            return open_store(self.config.store_path, database=self.config.database)
        return SqliteStore(self.config.store_path)

    @cached_property
    def retriever(self) -> Retriever:
        return Retriever(self.store, policy=self.policy, reranker=self.reranker)

    @cached_property
    def reranker(self) -> Reranker:
        """`[rerank] model_path` loaded once (passthrough when empty); its name is traced."""
        if self.reranker_override is not None:
            return self.reranker_override
        r = self.config.rerank
        return load_reranker(r.model_path, batch_size=r.batch_size, max_length=r.max_length)

    @cached_property
    def provider(self) -> Provider:
        if self.provider_override is not None:
            return self.provider_override
        p = self.config.provider
        # The default variable name is passed as None: a local server needs no key, and only
        # api.openai.com or an explicitly configured variable makes a missing key an error.
        key_env = None if p.api_key_env == "OPENAI_API_KEY" else p.api_key_env
        made = make_provider(
            p.name,
            model=p.model or None,
            base_url=p.base_url or None,
            api_key_env=key_env,
            api=p.api,
            answerer=self.policy.answerer,
        )
        return made if self.provider_wrapper is None else self.provider_wrapper(made)

    @cached_property
    def sinks(self) -> list[AuditSink]:
        if self.sinks_override is not None:
            return self.sinks_override
        # Lazy: citebound.audit adds ~13 ms to importing citebound.pipeline, its Postgres and
        # Delta sinks ~6 and ~90 ms more (python -X importtime).
        from citebound.audit import SQLiteAuditSink

        sinks: list[AuditSink] = []
        for name in self.config.audit.sinks:
            if name == "sqlite" and self.config.database:
                # A served deployment: the audit trail every replica shares lives in the
                # same database (docs/postgres.md); a per-host file would split it.
                from citebound.audit.postgres import PostgresAuditSink

                sinks.append(PostgresAuditSink(self.config.database))
            elif name == "sqlite":
                os.makedirs(self.config.audit_sqlite_path.parent, exist_ok=True)
                sinks.append(SQLiteAuditSink(self.config.audit_sqlite_path))
            else:
                from citebound.audit.delta import DeltaAuditSink
                from citebound.audit.location import table_location

                where = table_location(
                    self.config.audit_delta_path,
                    config_options=self.config.audit.delta_storage_options,
                )
                sinks.append(DeltaAuditSink(where))
        return sinks

    def close(self) -> None:
        """Close sinks, the store and the provider's HTTP client (only those this context
        opened: overrides belong to the caller)."""
        for sink in self.__dict__.get("sinks", []):
            sink.close()
        store = self.__dict__.get("store")
        close_store = getattr(store, "close", None)
        if close_store is not None and self.store_override is None:
            close_store()
        provider = self.__dict__.get("provider")
        close = getattr(provider, "close", None)
        if close is not None and self.provider_override is None:
            close()
