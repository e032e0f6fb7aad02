"""The store contract suite against PostgreSQL (the same suite SqliteStore passes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citebound.store.postgres import PostgresStore
from citebound.testing.store_contract import StoreContract, make_doc


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def store(self, pg_url: str, tmp_path: Path) -> Iterator[PostgresStore]:
        s = PostgresStore(pg_url, root=tmp_path)
        yield s
        s.close()


def test_index_version_equals_the_sqlite_store(pg_url: str, tmp_path: Path) -> None:
    from citebound.store.sqlite import SqliteStore

    pg = PostgresStore(pg_url, root=tmp_path / "pg")
    lite = SqliteStore(tmp_path / "lite")
    for s in (pg, lite):
        for kid, coll in (("B", "x"), ("a", "x"), ("c", "y")):
            doc, chunks = make_doc(kid, 3, collection=coll)
            s.upsert_document(doc, chunks)
        s.set_embedding_model("m")
    assert pg.index_version("x") == lite.index_version("x")
    assert pg.index_version(None) == lite.index_version(None)
    # byte order like SQLite: "B" < "a"
    assert [d.knowledge_id for d in pg.list_documents()] == ["B", "a", "c"]
    assert [c.knowledge_id for c in pg.iter_chunks("x")] == ["B"] * 3 + ["a"] * 3
    pg.close()
    lite.close()


def test_a_second_process_sees_writes_at_once(pg_url: str, tmp_path: Path) -> None:
    a = PostgresStore(pg_url, root=tmp_path / "a")
    b = PostgresStore(pg_url, root=tmp_path / "b")
    v0 = b.index_version("default")
    doc, chunks = make_doc("k", 2)
    a.upsert_document(doc, chunks)
    v1 = b.index_version("default")
    assert v1 != v0 and v1 == a.index_version("default")
    a.delete_document("k")
    assert b.index_version("default") == v0 and b.get_document("k") is None
    a.close()
    b.close()


def test_iter_chunks_pages_through_large_collections(pg_url: str, tmp_path: Path) -> None:
    s = PostgresStore(pg_url, root=tmp_path)
    doc, chunks = make_doc("k", 4500)
    s.upsert_document(doc, chunks)
    got = [c.chunk_index for c in s.iter_chunks("default")]
    assert got == list(range(4500))
    s.close()


def test_replace_source_with_no_documents_empties_the_file(pg_url: str, tmp_path: Path) -> None:
    from citebound.contracts.ingest import SourceRecord

    s = PostgresStore(pg_url, root=tmp_path)
    doc, chunks = make_doc("a", 2)
    record = SourceRecord(collection="default", source_path="docs/a.md", content_sha256="1" * 64)
    assert s.replace_source(record, [(doc, chunks)]) == 2
    assert s.replace_source(record, []) == 0
    assert s.get_document("a") is None and s.chunk_count() == 0
    s.close()


def test_a_failed_write_leaves_nothing_half_written(pg_url: str, tmp_path: Path) -> None:
    s = PostgresStore(pg_url, root=tmp_path)
    doc, chunks = make_doc("a", 3)
    v0 = s.index_version("default")
    dup = [*chunks, chunks[0].model_copy(update={"chunk_index": 7})]  # duplicate chunk_id
    with pytest.raises(Exception, match="store write failed"):
        s.upsert_document(doc, dup)
    assert s.get_document("a") is None and s.chunk_count() == 0
    assert s.index_version("default") == v0 and s.collections() == []
    s.close()
