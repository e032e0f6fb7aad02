"""Fixtures for retrieval tests: small real corpora in a MemoryStore, the real MiniLM embedder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from retrieve_helpers import CORPUS, Doc, make_docs

from citebound.index.embedder import OnnxEmbedder, default_embedder
from citebound.store.memory import MemoryStore


@pytest.fixture(scope="session")
def embedder() -> OnnxEmbedder:
    return default_embedder()


@pytest.fixture
def build_store(tmp_path: Path) -> Callable[..., MemoryStore]:
    """`build_store(specs, root=None)`: a MemoryStore holding `specs` (default: CORPUS)."""

    def _build(specs: Sequence[Doc] = CORPUS, root: Path | None = None) -> MemoryStore:
        store = MemoryStore(root or tmp_path / "store")
        for spec in specs:
            store.upsert_document(*make_docs(spec))
        return store

    return _build
