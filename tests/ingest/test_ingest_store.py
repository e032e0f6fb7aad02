"""SqliteStore passes the shared Store contract suite; plus SQLite-only behaviour."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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


def test_public_names_resolve() -> None:
    import citebound.ingest
    import citebound.store

    for module in (citebound.ingest, citebound.store):
        for name in module.__all__:
            assert getattr(module, name) is not None, name
