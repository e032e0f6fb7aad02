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

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citebound.contracts.documents import Chunk, Document
from citebound.errors import StoreError
from citebound.store.migrations import migrate
from citebound.store.sql_base import SqlStoreBase
from citebound.store.sqlite_rows import (
    ALL_SCOPE,
    CHUNK_SELECT,
    DEFAULT_ROOT,
    check_collection_name,
    chunk_from_row,
    chunk_rows,
    document_row,
    index_version_of,
)

if TYPE_CHECKING:  # answering never needs the ingest contracts
    from citebound.contracts.ingest import SourceRecord

__all__ = ["DEFAULT_ROOT", "SqliteStore", "check_collection_name"]


class SqliteStore(SqlStoreBase):
    """`Store` on SQLite. Thread-safe (one connection behind a lock); WAL lets other
    processes read while one ingests. The reads both SQL stores share are in `SqlStoreBase`.

    Example:
        >>> store = SqliteStore(Path(".citebound"))
        >>> store.index_version("default")
    """

    _p = "?"

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

    def _id_list(self, column: str, ids: Sequence[str]) -> tuple[str, Any]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(ids))

    # -- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (the store object is unusable afterwards)."""
        with self._lock:
            self._conn.close()

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
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
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
                version, count = index_version_of(model, scope, cursor)
            except sqlite3.Error as err:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"store read failed: {err}") from err
            if count == 0 and collection is not None:
                # A collection with no chunks (a misspelled name, most often) is not cached:
                # asking about it must not write to the store, and its version costs nothing.
                self._conn.execute("ROLLBACK")
                return version
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO index_versions VALUES (?, ?, ?, ?)",
                    (scope, version, model, count),
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                self._conn.execute("ROLLBACK")  # read-only or raced: the cache is optional
        return version
