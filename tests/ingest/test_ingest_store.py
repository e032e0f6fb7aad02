"""SqliteStore passes the shared Store contract suite; plus SQLite-only behaviour."""

from __future__ import annotations

import enum
import importlib
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from citebound.store import SqliteStore
from citebound.testing.store_contract import StoreContract, make_doc


class TestSqliteStoreContract(StoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteStore]:
        s = SqliteStore(tmp_path / "contract")
        yield s
        s.close()


def test_index_version_seen_by_a_second_connection(tmp_path: Path) -> None:
    writer = SqliteStore(tmp_path)
    reader = SqliteStore(tmp_path)
    try:
        doc, chunks = make_doc("k", 2)
        writer.upsert_document(doc, chunks)
        before = reader.index_version("default")
        writer.upsert_document(*make_doc("k", 3))
        assert reader.index_version("default") != before
        assert reader.index_version("default") == writer.index_version("default")
    finally:
        writer.close()
        reader.close()


# Each public name of ingest and store: what it is, and the module that defines it.
_IS: dict[str, Callable[[Any], bool]] = {
    "model": lambda o: inspect.isclass(o) and issubclass(o, BaseModel),
    "enum": lambda o: inspect.isclass(o) and issubclass(o, enum.Enum),
    "protocol": lambda o: inspect.isclass(o) and getattr(o, "_is_protocol", False),
    "class": inspect.isclass,
    "function": inspect.isfunction,
    "loader table": lambda o: isinstance(o, dict) and o and all(map(callable, o.values())),
    "path": lambda o: isinstance(o, Path),
}
PUBLIC: dict[str, dict[str, tuple[str, str]]] = {
    "citebound.ingest": {
        "LOADERS": ("loader table", "citebound.ingest.loaders"),
        "Block": ("model", "citebound.contracts.ingest"),
        "ChunkerConfig": ("model", "citebound.contracts.ingest"),
        "IngestReport": ("model", "citebound.contracts.ingest"),
        "ParsedDocument": ("model", "citebound.contracts.ingest"),
        "SkipReason": ("enum", "citebound.contracts.ingest"),
        "SkippedFile": ("model", "citebound.contracts.ingest"),
        "SourceFile": ("class", "citebound.ingest.source"),
        "SourceRecord": ("model", "citebound.contracts.ingest"),
        "chunk_document": ("function", "citebound.ingest.chunker"),
        "chunk_id": ("function", "citebound.ingest.chunker"),
        "file_knowledge_id": ("function", "citebound.ingest.source"),
        "ingest_paths": ("function", "citebound.ingest.pipeline"),
        "is_supported": ("function", "citebound.ingest.loaders"),
        "load_file": ("function", "citebound.ingest.loaders"),
    },
    "citebound.store": {
        "DEFAULT_ROOT": ("path", "citebound.store.sqlite"),
        "IngestStore": ("protocol", "citebound.store.base"),
        "SqliteStore": ("class", "citebound.store.sqlite"),
        "Store": ("protocol", "citebound.store.base"),
        "check_collection_name": ("function", "citebound.store.sqlite_rows"),
    },
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    names = importlib.import_module(module).__all__
    assert sorted(names) == sorted(PUBLIC[module]) and len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("module", "name"), [(m, n) for m, names in sorted(PUBLIC.items()) for n in sorted(names)]
)
def test_public_names_resolve(module: str, name: str) -> None:
    kind, origin = PUBLIC[module][name]
    obj = getattr(importlib.import_module(module), name)
    assert _IS[kind](obj), f"{module}.{name} is not a {kind}: {obj!r}"
    if inspect.isclass(obj) or inspect.isfunction(obj):
        assert (obj.__module__, obj.__qualname__) == (origin, name)
    else:  # a value: the very object its defining module holds
        assert getattr(importlib.import_module(origin), name) is obj
