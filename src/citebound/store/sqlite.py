"""The embedded store: one directory with `store.sqlite` (WAL) and room for index files.

Layout::

    <root>/store.sqlite            documents, chunks, sources, collections, index_versions
    <root>/index/<collection>/     index files written by `citebound.index`

index_version (a contract, recorded in every retrieval bundle)::

    sha256("citebound-index-v1\\n" + embedding_model + "\\n" + scope + "\\n"
           + "".join(f"{chunk_id} {row_sha256}\\n" for chunks ordered by chunk_id))[:24]

where scope is the collection name (or `*` for the whole store) and row_sha256 is the sha256 of
the canonical JSON of the stored Chunk (text, offsets, headings, pages and document metadata).
So it changes when any chunk, its metadata or the embedding model (`set_embedding_model`)
changes. It is computed lazily, cached in `index_versions`, and the cache is cleared in the same
transaction as every write.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from citebound.contracts.documents import Chunk, Document
from citebound.errors import StoreError
from citebound.store.migrations import migrate
from citebound.store.sqlite_rows import (
    ALL_SCOPE,
    CHUNK_SELECT,
    DEFAULT_ROOT,
    DOC_SELECT,
    check_collection_name,
    chunk_from_row,
    chunk_rows,
    document_from_row,
    document_row,
)

if TYPE_CHECKING:  # imported by list_sources: answering never needs the ingest contracts
    from citebound.contracts.ingest import SourceRecord

__all__ = ["DEFAULT_ROOT", "SqliteStore", "check_collection_name"]


class SqliteStore:
    """`Store` on SQLite. Thread-safe (one connection behind a lock); WAL lets other
    processes read while one ingests.

    Example:
        >>> store = SqliteStore(Path(".citebound"))
        >>> store.index_version("default")
    """

    def __init__(self, root: Path = DEFAULT_ROOT) -> None:
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.root / "store.sqlite", isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA busy_timeout=10000")
            migrate(self._conn)
        except (OSError, sqlite3.Error) as err:
            raise StoreError(f"cannot open store at {self.root}: {err}") from err
        self._lock = threading.RLock()

    # -- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (the store object is unusable afterwards)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
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

    # -- writes -------------------------------------------------------------------------
    def _write(self, fn: Any, *args: Any) -> Any:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(*args)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
                return result
            except sqlite3.Error as err:
                raise StoreError(f"store write failed: {err}") from err

    def _invalidate(self, collection: str) -> None:
        self._conn.execute(
            "DELETE FROM index_versions WHERE scope IN (?, ?)", (collection, ALL_SCOPE)
        )

    def _insert(self, document: Document, chunks: Sequence[Chunk]) -> int:
        d = document
        self._conn.execute("INSERT OR IGNORE INTO collections (name) VALUES (?)", (d.collection,))
        self._conn.execute("DELETE FROM documents WHERE knowledge_id = ?", (d.knowledge_id,))
        self._conn.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", document_row(d)
        )
        rows = chunk_rows(d, chunks)
        self._conn.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )
        self._invalidate(d.collection)
        return len(rows)

    def _set_source(self, collection: str, source_path: str, sha: str, meta_sha: str) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)",
            (collection, source_path, sha, meta_sha),
        )

    def upsert_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Insert or replace a document and all of its chunks atomically."""

        def run() -> None:
            self._insert(document, chunks)
            self._set_source(document.collection, document.source_path, document.content_sha256, "")

        self._write(run)

    def replace_source(
        self,
        record: SourceRecord,
        documents: Sequence[tuple[Document, Sequence[Chunk]]],
    ) -> int:
        """Atomically replace everything stored from one file; return chunks written.

        Documents previously stored from `record.source_path` and absent from `documents`
        (e.g. a JSONL line that was removed) are deleted in the same transaction.
        """

        def run() -> int:
            keep = {d.knowledge_id for d, _ in documents}
            old = self._conn.execute(
                "SELECT knowledge_id FROM documents WHERE collection = ? AND source_path = ?",
                (record.collection, record.source_path),
            ).fetchall()
            for (kid,) in old:
                if kid not in keep:
                    self._conn.execute("DELETE FROM documents WHERE knowledge_id = ?", (kid,))
            written = sum(self._insert(d, cs) for d, cs in documents)
            self._conn.execute(
                "INSERT OR IGNORE INTO collections (name) VALUES (?)", (record.collection,)
            )
            self._set_source(
                record.collection, record.source_path, record.content_sha256, record.meta_sha256
            )
            self._invalidate(record.collection)
            return written

        return int(self._write(run))

    def delete_document(self, knowledge_id: str) -> None:
        """Delete one document and its chunks; its file is marked stale for the next ingest."""

        def run() -> None:
            row = self._conn.execute(
                "SELECT collection, source_path FROM documents WHERE knowledge_id = ?",
                (knowledge_id,),
            ).fetchone()
            if row is not None:
                self._conn.execute("DELETE FROM documents WHERE knowledge_id = ?", (knowledge_id,))
                # Mark the file stale so the next ingest restores what is still on disk.
                self._conn.execute(
                    "UPDATE sources SET content_sha256 = '' WHERE collection = ? AND "
                    "source_path = ?",
                    (row[0], row[1]),
                )
                self._invalidate(row[0])

        self._write(run)

    def delete_source(self, collection: str, source_path: str) -> int:
        """Delete a file's record and every document from it; return documents deleted."""

        def run() -> int:
            cur = self._conn.execute(
                "DELETE FROM documents WHERE collection = ? AND source_path = ?",
                (collection, source_path),
            )
            self._conn.execute(
                "DELETE FROM sources WHERE collection = ? AND source_path = ?",
                (collection, source_path),
            )
            self._invalidate(collection)
            return cur.rowcount

        return int(self._write(run))

    def set_embedding_model(self, name: str) -> None:
        """Record the embedding model of the store's vectors; changing it changes every
        index_version. The dense indexer calls this before it embeds."""

        def run() -> None:
            if self.embedding_model() != name:
                self._conn.execute(
                    "INSERT OR REPLACE INTO settings VALUES ('embedding_model', ?)", (name,)
                )
                self._conn.execute("DELETE FROM index_versions")

        self._write(run)

    # -- reads --------------------------------------------------------------------------
    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as err:
                raise StoreError(f"store read failed: {err}") from err

    def embedding_model(self) -> str:
        """The name set by `set_embedding_model`, or '' when none was set."""
        rows = self._read("SELECT value FROM settings WHERE key = 'embedding_model'")
        return str(rows[0][0]) if rows else ""

    def get_document(self, knowledge_id: str) -> Document | None:
        rows = self._read(f"{DOC_SELECT} WHERE knowledge_id = ?", (knowledge_id,))
        return document_from_row(rows[0]) if rows else None

    def list_documents(self, collection: str | None = None) -> list[Document]:
        """Documents ordered by knowledge_id."""
        if collection is None:
            rows = self._read(f"{DOC_SELECT} ORDER BY knowledge_id")
        else:
            rows = self._read(
                f"{DOC_SELECT} WHERE collection = ? ORDER BY knowledge_id", (collection,)
            )
        return [document_from_row(r) for r in rows]

    def document_hash(self, collection: str, source_path: str) -> str | None:
        """content_sha256 of the stored file, for incremental ingest; None when absent."""
        rows = self._read(
            "SELECT content_sha256 FROM sources WHERE collection = ? AND source_path = ?",
            (collection, source_path),
        )
        return str(rows[0][0]) if rows else None

    def list_sources(self, collection: str) -> list[SourceRecord]:
        """Files stored in `collection`, ordered by source_path, with document/chunk counts."""
        from citebound.contracts.ingest import SourceRecord

        rows = self._read(
            "SELECT s.source_path, s.content_sha256, s.meta_sha256, "
            " (SELECT COUNT(*) FROM documents d WHERE d.collection = s.collection"
            "   AND d.source_path = s.source_path),"
            " (SELECT COUNT(*) FROM chunks c JOIN documents d USING (knowledge_id)"
            "   WHERE d.collection = s.collection AND d.source_path = s.source_path)"
            " FROM sources s WHERE s.collection = ? ORDER BY s.source_path",
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
        rows = self._read(
            "SELECT knowledge_id, collection, source_path FROM documents "
            "WHERE knowledge_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(knowledge_ids)),),
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def chunk_count(self, collection: str | None = None) -> int:
        """Number of chunks in `collection` (or the whole store)."""
        if collection is None:
            return int(self._read("SELECT COUNT(*) FROM chunks")[0][0])
        sql = "SELECT COUNT(*) FROM chunks WHERE collection = ?"
        return int(self._read(sql, (collection,))[0][0])

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order given; unknown ids are skipped. One query."""
        if not chunk_ids:
            return []
        rows = self._read(
            f"{CHUNK_SELECT} WHERE c.chunk_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        by_id = {r[0]: r for r in rows}
        return [chunk_from_row(by_id[cid]) for cid in chunk_ids if cid in by_id]

    def iter_chunks(self, collection: str | None = None) -> Iterator[Chunk]:
        """All chunks ordered by (knowledge_id, chunk_index), fetched in pages."""
        where, params = (
            ("", ()) if collection is None else (" WHERE c.collection = ?", (collection,))
        )
        sql = f"{CHUNK_SELECT}{where} ORDER BY c.knowledge_id, c.chunk_index"
        with self._lock:
            cursor = self._conn.execute(sql, params)
        while True:
            with self._lock:
                page = cursor.fetchmany(2000)
            if not page:
                return
            yield from (chunk_from_row(r) for r in page)

    def neighbors(self, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks before and n after `chunk_id` in its document, in order, without
        the chunk itself. Unknown ids or n <= 0 give []."""
        if n <= 0:
            return []
        rows = self._read(
            f"{CHUNK_SELECT} JOIN chunks me ON me.knowledge_id = c.knowledge_id "
            "WHERE me.chunk_id = ? AND c.chunk_index BETWEEN me.chunk_index - ? AND "
            "me.chunk_index + ? AND c.chunk_id != me.chunk_id ORDER BY c.chunk_index",
            (chunk_id, n, n),
        )
        return [chunk_from_row(r) for r in rows]

    def collections(self) -> list[str]:
        """Collection names, sorted."""
        return [r[0] for r in self._read("SELECT name FROM collections ORDER BY name")]

    def index_version(self, collection: str | None = None) -> str:
        """See the module docstring. Cached; recomputed after any write to the collection."""
        scope = ALL_SCOPE if collection is None else collection
        model = self.embedding_model()
        rows = self._read(
            "SELECT version FROM index_versions WHERE scope = ? AND embedding_model = ?",
            (scope, model),
        )
        if rows:
            return str(rows[0][0])
        where, params = ("", ()) if collection is None else (" WHERE collection = ?", (collection,))
        with self._lock:
            # One deferred transaction: the hash is computed from a single snapshot, and the
            # cache insert fails (busy snapshot) if another process wrote in between.
            self._conn.execute("BEGIN")
            try:
                cursor = self._conn.execute(
                    f"SELECT chunk_id, row_sha256 FROM chunks{where} ORDER BY chunk_id", params
                )
                h = hashlib.sha256(f"citebound-index-v1\n{model}\n{scope}\n".encode())
                count = 0
                for cid, row_sha in cursor:
                    h.update(f"{cid} {row_sha}\n".encode())
                    count += 1
                version = h.hexdigest()[:24]
            except sqlite3.Error as err:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"store read failed: {err}") from err
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO index_versions VALUES (?, ?, ?, ?)",
                    (scope, version, model, count),
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                self._conn.execute("ROLLBACK")  # read-only or raced: the cache is optional
        return version
