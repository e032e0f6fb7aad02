"""Pipelines over the shared demo store (`demo_store`, tests/conftest.py), audit per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from citebound.config import load_config
from citebound.pipeline import Pipeline, PipelineContext
from citebound.store.sqlite import SqliteStore


@pytest.fixture
def make_pipeline(demo_store: SqliteStore, tmp_path: Path) -> Iterator[Callable[..., Pipeline]]:
    """`make_pipeline(**overrides)` -> a Pipeline over the demo store (or `store=`, for a test
    that writes to its store), audit in tmp_path."""
    contexts: list[PipelineContext] = []

    def make(*, store: SqliteStore | None = None, **overrides: Any) -> Pipeline:
        store = store or demo_store
        config = load_config(
            env={},
            overrides={
                "store": str(store.root),
                "collection": "demo",
                "audit.sqlite_path": str(tmp_path / f"audit{len(contexts)}.sqlite"),
                **overrides,
            },
        )
        ctx = PipelineContext(config, store_override=store)
        contexts.append(ctx)
        return Pipeline(ctx)

    yield make
    for ctx in contexts:
        ctx.close()
