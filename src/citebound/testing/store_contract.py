"""A contract test suite every `Store` backend passes (SQLite now, PostgreSQL later).

Subclass `StoreContract` in a test module and provide a `store` fixture that yields an empty
store; pytest then runs every `test_*` method against it::

    class TestSqliteStore(StoreContract):
        @pytest.fixture
        def store(self, tmp_path):
            yield SqliteStore(tmp_path)
"""

from __future__ import annotations

import pytest

from citebound.contracts.documents import Chunk, Document
from citebound.contracts.ingest import SourceRecord
from citebound.errors import ContractError
from citebound.ingest.chunker import chunk_id
from citebound.store.base import IngestStore, Store


def make_doc(
    kid: str, n: int, *, collection: str = "default", title: str = "T"
) -> tuple[Document, list[Chunk]]:
    """A document of `n` one-sentence chunks `s0.`, `s1.`, ... with consistent offsets."""
    text = " ".join(f"s{i}." for i in range(n))
    doc = Document(
        knowledge_id=kid,
        source_path=f"docs/{kid}.md",
        title=title,
        text=text,
        content_sha256="0" * 64,
        collection=collection,
        page_offsets=[0],
    )
    chunks: list[Chunk] = []
    pos = 0
    for i in range(n):
        piece = f"s{i}."
        start = text.index(piece, pos)
        pos = start + len(piece)
        chunks.append(
            Chunk(
                chunk_id=chunk_id(kid, 0, piece),
                knowledge_id=kid,
                collection=collection,
                text=piece,
                chunk_index=i,
                heading_path=("H", f"sub {i}"),
                page=1,
                page_end=1,
                char_start=start,
                char_end=pos,
                token_count=2,
            )
        )
    return doc, chunks


class StoreContract:
    """Behaviour shared by every store backend. Needs a `store` fixture (an empty store)."""

    def test_protocols_are_satisfied(self, store: IngestStore) -> None:
        assert isinstance(store, Store) and isinstance(store, IngestStore)
        assert store.index_dir("default") == store.root / "index" / "default"

    def test_roundtrip_and_denormalised_chunk_fields(self, store: IngestStore) -> None:
        doc, chunks = make_doc("k1", 3, title="Manual")
        store.upsert_document(doc, chunks)
        assert store.get_document("k1") == doc
        got = store.get_chunks([c.chunk_id for c in chunks])
        assert [c.text for c in got] == ["s0.", "s1.", "s2."]
        assert got[0].title == "Manual" and got[0].source_path == "docs/k1.md"
        assert got[1].heading_path == ("H", "sub 1")
        assert store.document_hash("default", "docs/k1.md") == "0" * 64
        assert store.document_hash("default", "docs/none.md") is None

    def test_get_chunks_keeps_requested_order_and_skips_unknown(self, store: IngestStore) -> None:
        doc, chunks = make_doc("k1", 1500)
        store.upsert_document(doc, chunks)
        wanted = [chunks[1200].chunk_id, "nope", chunks[3].chunk_id, chunks[900].chunk_id]
        assert [c.chunk_index for c in store.get_chunks(wanted)] == [1200, 3, 900]
        assert len(store.get_chunks([c.chunk_id for c in chunks])) == 1500  # one query, any size
        assert store.get_chunks([]) == []

    def test_iter_chunks_order_and_collection_filter(self, store: IngestStore) -> None:
        for kid, coll in (("b", "x"), ("a", "x"), ("c", "y")):
            doc, chunks = make_doc(kid, 2, collection=coll)
            store.upsert_document(doc, chunks)
        assert [(c.knowledge_id, c.chunk_index) for c in store.iter_chunks("x")] == [
            ("a", 0),
            ("a", 1),
            ("b", 0),
            ("b", 1),
        ]
        assert len(list(store.iter_chunks())) == 6
        assert store.collections() == ["x", "y"]
        assert [d.knowledge_id for d in store.list_documents()] == ["a", "b", "c"]
        assert [d.knowledge_id for d in store.list_documents("y")] == ["c"]

    def test_neighbors(self, store: IngestStore) -> None:
        doc, chunks = make_doc("k", 6)
        store.upsert_document(doc, chunks)
        assert [c.chunk_index for c in store.neighbors(chunks[2].chunk_id, 1)] == [1, 3]
        assert [c.chunk_index for c in store.neighbors(chunks[0].chunk_id, 2)] == [1, 2]
        assert [c.chunk_index for c in store.neighbors(chunks[5].chunk_id, 9)] == [0, 1, 2, 3, 4]
        assert store.neighbors(chunks[2].chunk_id, 0) == []
        assert store.neighbors("unknown", 2) == []

    def test_delete_document_cascades(self, store: IngestStore) -> None:
        doc, chunks = make_doc("k", 3)
        store.upsert_document(doc, chunks)
        store.delete_document("k")
        assert store.get_document("k") is None and store.chunk_count() == 0
        store.delete_document("k")  # deleting twice is fine

    def test_upsert_replaces_all_chunks(self, store: IngestStore) -> None:
        doc, chunks = make_doc("k", 5)
        store.upsert_document(doc, chunks)
        doc2, chunks2 = make_doc("k", 2)
        store.upsert_document(doc2, chunks2)
        assert store.chunk_count("default") == 2
        assert store.get_chunks([chunks[4].chunk_id]) == []

    def test_foreign_chunks_are_rejected_atomically(self, store: IngestStore) -> None:
        doc, _ = make_doc("k", 1)
        _, other = make_doc("z", 1)
        with pytest.raises(ContractError):
            store.upsert_document(doc, other)
        assert store.get_document("k") is None  # rolled back

    def test_index_version_tracks_corpus_metadata_and_model(self, store: IngestStore) -> None:
        v_empty = store.index_version("default")
        doc, chunks = make_doc("k", 3)
        store.upsert_document(doc, chunks)
        v1 = store.index_version("default")
        assert v1 != v_empty and len(v1) == 24
        assert store.index_version("default") == v1  # cached, stable
        store.upsert_document(doc, chunks)
        assert store.index_version("default") == v1  # same content, same version
        store.upsert_document(doc.model_copy(update={"equipment_id": "P-9"}), chunks)
        v2 = store.index_version("default")
        assert v2 != v1
        store.set_embedding_model("all-MiniLM-L6-v2")
        assert store.embedding_model() == "all-MiniLM-L6-v2"
        v3 = store.index_version("default")
        assert v3 != v2
        other, other_chunks = make_doc("o", 1, collection="other")
        store.upsert_document(other, other_chunks)
        assert store.index_version("default") == v3  # another collection does not matter
        assert store.index_version(None) != v3

    def test_replace_source_and_delete_source(self, store: IngestStore) -> None:
        a, a_chunks = make_doc("a", 2)
        b, b_chunks = make_doc("b", 3)
        a = a.model_copy(update={"source_path": "docs/all.jsonl"})
        b = b.model_copy(update={"source_path": "docs/all.jsonl"})
        record = SourceRecord(
            collection="default", source_path="docs/all.jsonl", content_sha256="1" * 64
        )
        assert store.replace_source(record, [(a, a_chunks), (b, b_chunks)]) == 5
        (listed,) = store.list_sources("default")
        assert (listed.documents, listed.chunks, listed.content_sha256) == (2, 5, "1" * 64)
        assert store.document_sources(["a", "zz"]) == {"a": ("default", "docs/all.jsonl")}
        # b vanished from the file: replacing the source deletes it in the same transaction
        assert store.replace_source(record, [(a, a_chunks)]) == 2
        assert store.get_document("b") is None and store.chunk_count("default") == 2
        assert store.delete_source("default", "docs/all.jsonl") == 1
        assert store.list_sources("default") == [] and store.chunk_count() == 0
