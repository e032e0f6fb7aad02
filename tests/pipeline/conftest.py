"""A real indexed store of the bundled sample corpus, built once per test session."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from citebound.cli.demo import build_demo_store
from citebound.config import load_config
from citebound.pipeline import Pipeline, PipelineContext
from citebound.store.sqlite import SqliteStore


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> SqliteStore:
    store, report = build_demo_store(tmp_path_factory.mktemp("demo"))
    assert report.chunks_written > 50 and not report.skipped
    return store


@pytest.fixture
def make_pipeline(demo_store: SqliteStore, tmp_path: Path) -> Iterator[Callable[..., Pipeline]]:
    """`make_pipeline(**overrides)` -> a Pipeline over the demo store, audit in tmp_path."""
    contexts: list[PipelineContext] = []

    def make(**overrides: Any) -> Pipeline:
        config = load_config(
            env={},
            overrides={
                "store": str(demo_store.root),
                "collection": "demo",
                "audit.sqlite_path": str(tmp_path / f"audit{len(contexts)}.sqlite"),
                **overrides,
            },
        )
        ctx = PipelineContext(config, store_override=demo_store)
        contexts.append(ctx)
        return Pipeline(ctx)

    yield make
    for ctx in contexts:
        ctx.close()
