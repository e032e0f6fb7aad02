"""The `Store` protocol: documents, chunks and index versions of one embedded store directory.

The SQLite implementation is the embedded default; a server backend (PostgreSQL) implements the
same protocol and passes the same contract suite.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from citebound.contracts.documents import Chunk, Document

if TYPE_CHECKING:  # the ingest contracts are not needed to answer (a cold `ask` skips them)
    from citebound.contracts.ingest import SourceRecord


@runtime_checkable
class Store(Protocol):
    """Persistent documents and chunks. Chunk lookups return chunks in the order asked."""

    root: Path

    def upsert_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Insert or replace a document and all of its chunks atomically."""
        ...

    def delete_document(self, knowledge_id: str) -> None: ...

    def get_document(self, knowledge_id: str) -> Document | None: ...

    def list_documents(self, collection: str | None = None) -> list[Document]:
        """Documents ordered by knowledge_id."""
        ...

    def document_hash(self, collection: str, source_path: str) -> str | None:
        """content_sha256 of the stored file, for incremental ingest; None when absent."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order given; unknown ids are skipped."""
        ...

    def iter_chunks(self, collection: str | None = None) -> Iterator[Chunk]:
        """All chunks ordered by (knowledge_id, chunk_index)."""
        ...

    def neighbors(self, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks before and n after `chunk_id` in the same document, in order."""
        ...

    def collections(self) -> list[str]: ...

    def index_version(self, collection: str | None = None) -> str:
        """Changes whenever the corpus or the embedding model changes."""
        ...


@runtime_checkable
class IngestStore(Store, Protocol):
    """A `Store` that `ingest_paths` can write: per-file records for incremental ingest.

    Added by the ingestion work; `Store` itself is unchanged so read-only backends and test
    fakes keep satisfying it.
    """

    def list_sources(self, collection: str) -> list[SourceRecord]:
        """Files stored in `collection`, ordered by source_path."""
        ...

    def replace_source(
        self, record: SourceRecord, documents: Sequence[tuple[Document, Sequence[Chunk]]]
    ) -> int:
        """Atomically replace everything stored from one file; return chunks written."""
        ...

    def delete_source(self, collection: str, source_path: str) -> int:
        """Delete a file's record and its documents; return documents deleted."""
        ...

    def document_sources(self, knowledge_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(collection, source_path) of each known id, so ingest never steals another
        file's document id."""
        ...

    def chunk_count(self, collection: str | None = None) -> int: ...

    def set_embedding_model(self, name: str) -> None:
        """Record the embedding model; changing it changes every index_version."""
        ...

    def embedding_model(self) -> str: ...

    def index_dir(self, collection: str) -> Path:
        """`root / "index" / collection`: where index files of a collection live."""
        ...
