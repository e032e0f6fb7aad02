"""What the SQLite and PostgreSQL stores share: lifecycle, the index directory and the reads
that run the same SQL on both.

The two stores have the same tables (`store.migrations`, `store.pg_migrations`), so these
queries are written once. Only the driver's parameter marker (`?` for sqlite3, `%s` for
psycopg) and the way a list of ids is passed differ; each store says which (`_p`,
`_id_list`). Reads that differ in substance stay in the stores: iter_chunks (one cursor vs
keyset pages), collections and index_version (PostgreSQL reads them per request snapshot).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from citebound.contracts.documents import Chunk, Document
from citebound.contracts.ingest import SourceRecord
from citebound.store.sqlite_rows import (
    CHUNK_SELECT,
    DOC_SELECT,
    check_collection_name,
    chunk_from_row,
    document_from_row,
)

if TYPE_CHECKING:  # imported by list_sources: answering never needs the ingest contracts
    from citebound.contracts.ingest import SourceRecord

__all__ = ["SqlStoreBase"]


class SqlStoreBase:
    """Base of `SqliteStore` and `PostgresStore`; they provide `root`, `close`, `_read`,
    `_p` and `_id_list`."""

    root: Path
    _p: str  # the driver's parameter marker

    def close(self) -> None:
        raise NotImplementedError

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _id_list(self, column: str, ids: Sequence[str]) -> tuple[str, Any]:
        """(condition that `column` is one of the ids, its one parameter)."""
        raise NotImplementedError

    # -- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc: type[BaseException] | None, val: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def index_dir(self, collection: str) -> Path:
        """Directory for the index files of `collection` (not created here).

        Raises:
            ConfigError: the name is not a valid collection name (it becomes a path).
        """
        return self.root / "index" / check_collection_name(collection)

    # -- reads --------------------------------------------------------------------------
    def embedding_model(self) -> str:
        """The name set by `set_embedding_model`, or '' when none was set."""
        rows = self._read("SELECT value FROM settings WHERE key = 'embedding_model'")
        return str(rows[0][0]) if rows else ""

    def get_document(self, knowledge_id: str) -> Document | None:
        rows = self._read(f"{DOC_SELECT} WHERE knowledge_id = {self._p}", (knowledge_id,))
        return document_from_row(rows[0]) if rows else None

    def list_documents(self, collection: str | None = None) -> list[Document]:
        """Documents ordered by knowledge_id."""
        if collection is None:
            rows = self._read(f"{DOC_SELECT} ORDER BY knowledge_id")
        else:
            rows = self._read(
                f"{DOC_SELECT} WHERE collection = {self._p} ORDER BY knowledge_id", (collection,)
            )
        return [document_from_row(r) for r in rows]

    def document_hash(self, collection: str, source_path: str) -> str | None:
        """content_sha256 of the stored file, for incremental ingest; None when absent."""
        p = self._p
        rows = self._read(
            f"SELECT content_sha256 FROM sources WHERE collection = {p} AND source_path = {p}",
            (collection, source_path),
        )
        return str(rows[0][0]) if rows else None

    def list_sources(self, collection: str) -> list[SourceRecord]:
        """Files stored in `collection`, ordered by source_path, with document/chunk counts."""
        rows = self._read(
            "SELECT s.source_path, s.content_sha256, s.meta_sha256, "
            " (SELECT COUNT(*) FROM documents d WHERE d.collection = s.collection"
            "   AND d.source_path = s.source_path),"
            " (SELECT COUNT(*) FROM chunks c JOIN documents d USING (knowledge_id)"
            "   WHERE d.collection = s.collection AND d.source_path = s.source_path)"
            f" FROM sources s WHERE s.collection = {self._p} ORDER BY s.source_path",
            (collection,),
        )
        return [
            SourceRecord(
                collection=collection,
                source_path=r[0],
                content_sha256=r[1],
                meta_sha256=r[2],
                documents=r[3],
                chunks=r[4],
            )
            for r in rows
        ]

    def document_sources(self, knowledge_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(collection, source_path) of each known id (one query)."""
        if not knowledge_ids:
            return {}
        where, ids = self._id_list("knowledge_id", knowledge_ids)
        rows = self._read(
            f"SELECT knowledge_id, collection, source_path FROM documents WHERE {where}", (ids,)
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def chunk_count(self, collection: str | None = None) -> int:
        """Number of chunks in `collection` (or the whole store)."""
        if collection is None:
            return int(self._read("SELECT COUNT(*) FROM chunks")[0][0])
        sql = f"SELECT COUNT(*) FROM chunks WHERE collection = {self._p}"
        return int(self._read(sql, (collection,))[0][0])

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order given; unknown ids are skipped. One query."""
        if not chunk_ids:
            return []
        where, ids = self._id_list("c.chunk_id", chunk_ids)
        rows = self._read(f"{CHUNK_SELECT} WHERE {where}", (ids,))
        by_id = {r[0]: r for r in rows}
        return [chunk_from_row(by_id[cid]) for cid in chunk_ids if cid in by_id]

    def neighbors(self, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks before and n after `chunk_id` in its document, in order, without
        the chunk itself. Unknown ids or n <= 0 give []."""
        if n <= 0:
            return []
        p = self._p
        rows = self._read(
            f"{CHUNK_SELECT} JOIN chunks me ON me.knowledge_id = c.knowledge_id "
            f"WHERE me.chunk_id = {p} AND c.chunk_index BETWEEN me.chunk_index - {p} AND "
            f"me.chunk_index + {p} AND c.chunk_id <> me.chunk_id ORDER BY c.chunk_index",
            (chunk_id, n, n),
        )
        return [chunk_from_row(r) for r in rows]
