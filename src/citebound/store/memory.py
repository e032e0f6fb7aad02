"""`MemoryStore`: a dict-backed `Store` for tests, notebooks and benchmarks.

Nothing is persisted except the index files, which live under `root / "index"` like every store.
Orderings follow the protocol: documents by knowledge_id, chunks by (knowledge_id, chunk_index).

    >>> from pathlib import Path
    >>> store = MemoryStore(Path("/tmp/cb-doc-example"))
    >>> store.collections()
    []
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from citebound.contracts.documents import Chunk, Document


class MemoryStore:
    """In-memory implementation of `citebound.store.base.Store`.

    Args:
        root: Directory for the index files (created on demand by the indexer).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._docs: dict[str, Document] = {}
        self._chunks: dict[str, list[Chunk]] = {}  # knowledge_id -> chunks by chunk_index
        self._by_id: dict[str, Chunk] = {}

    def upsert_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Insert or replace a document and all of its chunks."""
        self.delete_document(document.knowledge_id)
        ordered = sorted(chunks, key=lambda c: (c.chunk_index, c.chunk_id))
        self._docs[document.knowledge_id] = document
        self._chunks[document.knowledge_id] = ordered
        for chunk in ordered:
            self._by_id[chunk.chunk_id] = chunk

    def delete_document(self, knowledge_id: str) -> None:
        self._docs.pop(knowledge_id, None)
        for chunk in self._chunks.pop(knowledge_id, []):
            self._by_id.pop(chunk.chunk_id, None)

    def get_document(self, knowledge_id: str) -> Document | None:
        return self._docs.get(knowledge_id)

    def list_documents(self, collection: str | None = None) -> list[Document]:
        """Documents ordered by knowledge_id."""
        return [
            self._docs[k]
            for k in sorted(self._docs)
            if collection is None or self._docs[k].collection == collection
        ]

    def document_hash(self, collection: str, source_path: str) -> str | None:
        for doc in self._docs.values():
            if doc.collection == collection and doc.source_path == source_path:
                return doc.content_sha256
        return None

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order given; unknown ids are skipped."""
        return [self._by_id[c] for c in chunk_ids if c in self._by_id]

    def iter_chunks(self, collection: str | None = None) -> Iterator[Chunk]:
        """All chunks ordered by (knowledge_id, chunk_index)."""
        for knowledge_id in sorted(self._chunks):
            doc = self._docs[knowledge_id]
            if collection is not None and doc.collection != collection:
                continue
            yield from self._chunks[knowledge_id]

    def neighbors(self, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks before and n after `chunk_id` in the same document, in order."""
        chunk = self._by_id.get(chunk_id)
        if chunk is None or n <= 0:
            return []
        siblings = self._chunks[chunk.knowledge_id]
        pos = next(i for i, c in enumerate(siblings) if c.chunk_id == chunk_id)
        return siblings[max(0, pos - n) : pos] + siblings[pos + 1 : pos + 1 + n]

    def collections(self) -> list[str]:
        return sorted({d.collection for d in self._docs.values()})

    def index_version(self, collection: str | None = None) -> str:
        """sha256 over the sorted chunk ids of the collection (all collections when None)."""
        ids = sorted(
            c.chunk_id
            for c in self._by_id.values()
            if collection is None or c.collection == collection
        )
        return "mem-" + hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()[:16]
