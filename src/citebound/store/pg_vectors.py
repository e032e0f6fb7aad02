"""Vectors, published index manifests and pgvector search of `PostgresStore` (a mixin, kept
apart so postgres.py stays about documents and chunks). docs/postgres.md explains the rules."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from citebound.contracts.index import IndexManifest
from citebound.errors import StoreError
from citebound.store.pg_connect import redact

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

Matrix = npt.NDArray[np.float32]
# HNSW build parameters (pgvector defaults) and the search breadth per query: ef_search is at
# least HNSW_EF_PER_K x k, so recall at N1 = 200 candidates stays high.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_PER_K = 2


def vector_literal(vec: npt.ArrayLike) -> str:
    """pgvector text of a float32 vector. Each float32 printed as its exact float64 decimal,
    so the server's strtof gives back the very same float32."""
    return "[" + ",".join(map(repr, np.asarray(vec, dtype=np.float32).tolist())) + "]"


def parse_vector(text: str) -> Matrix:
    """A float32 vector from pgvector's text output (shortest round-trip decimals)."""
    return np.array(text.strip("[]").split(","), dtype=np.float32)


class PgVectors:
    """Methods `index.build` and `index.pgvector` use; needs `_pool`, `_read`, `_write`, `url`
    and `hnsw_min_rows` from `PostgresStore`."""

    url: str
    root: Path
    hnsw_min_rows: int
    _pool: ConnectionPool

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _write(self, fn: Any, *args: Any) -> Any:
        raise NotImplementedError

    # -- vectors and published index manifests (used by index.build and index.pgvector) -----
    def get_vectors(self, model: str, chunk_ids: Sequence[str]) -> dict[str, Matrix]:
        """Stored embeddings of `chunk_ids` under `model` (absent ids are left out)."""
        out: dict[str, Matrix] = {}
        ids = list(chunk_ids)
        for start in range(0, len(ids), 10_000):
            rows = self._read(
                "SELECT chunk_id, embedding::text FROM chunk_vectors "
                "WHERE model = %s AND chunk_id = ANY(%s)",
                (model, ids[start : start + 10_000]),
            )
            out.update((r[0], parse_vector(r[1])) for r in rows)
        return out

    def put_vectors(self, model: str, chunk_ids: Sequence[str], matrix: Matrix) -> None:
        """Store embeddings (one transaction; an existing (model, chunk_id) is kept)."""
        if len(chunk_ids) != len(matrix):
            raise StoreError("put_vectors: one vector per chunk id")

        def run(conn: Connection[Any]) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO chunk_vectors VALUES (%s, %s, %s::vector) ON CONFLICT DO NOTHING",
                    [
                        (model, cid, vector_literal(v))
                        for cid, v in zip(chunk_ids, matrix, strict=True)
                    ],
                )

        self._write(run)

    def publish_manifest(self, manifest: IndexManifest) -> None:
        """Record the manifest `collection` was built with, for other replicas; builds the
        HNSW index of the model once its vectors reach `hnsw_min_rows`."""

        def run(conn: Connection[Any]) -> None:
            conn.execute(
                "INSERT INTO index_manifests VALUES (%s, %s) ON CONFLICT (collection) "
                "DO UPDATE SET manifest = EXCLUDED.manifest",
                (manifest.collection, manifest.model_dump_json()),
            )

        self._write(run)
        if manifest.num_chunks >= self.hnsw_min_rows:
            self.ensure_hnsw(manifest.embedding_model, manifest.embedding_dim)

    def published_manifest(self, collection: str) -> IndexManifest | None:
        rows = self._read(
            "SELECT manifest FROM index_manifests WHERE collection = %s", (collection,)
        )
        if not rows:
            return None
        try:
            return IndexManifest.model_validate_json(rows[0][0])
        except ValueError as err:
            raise StoreError(
                f"corrupt index manifest of '{collection}' in the database: {err}"
            ) from None

    @staticmethod
    def hnsw_name(model: str) -> str:
        return "chunk_vectors_hnsw_" + hashlib.sha256(model.encode()).hexdigest()[:12]

    def ensure_hnsw(self, model: str, dim: int) -> None:
        """Create the HNSW index of `model`'s vectors (partial, cosine) if it is missing."""
        literal = model.replace("'", "''")

        def run(conn: Connection[Any]) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('citebound-hnsw'))")
            # Building HNSW over 100k+ vectors takes minutes: no per-statement timeout here.
            conn.execute("SET LOCAL statement_timeout = 0")
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS {self.hnsw_name(model)} ON chunk_vectors USING hnsw "
                f"((embedding::vector({int(dim)})) vector_cosine_ops) "
                f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
                f"WHERE model = '{literal}'"
            )

        self._write(run)

    def has_hnsw(self, model: str) -> bool:
        return bool(
            self._read("SELECT 1 FROM pg_class WHERE relname = %s", (self.hnsw_name(model),))
        )

    @staticmethod
    def dense_search_sql(dim: int, k: int, *, approximate: bool) -> tuple[list[str], str]:
        """(SET LOCAL statements, query) of `dense_search`; the query takes (vector literal,
        model, collection). Public so a test can EXPLAIN exactly what runs."""
        if approximate:
            settings = [
                f"SET LOCAL hnsw.ef_search = {max(40, min(1000, HNSW_EF_PER_K * int(k)))}",
                # pgvector >= 0.8: keep scanning the graph until k rows pass the collection
                # filter (the HNSW index covers every collection of the model).
                "SET LOCAL hnsw.iterative_scan = relaxed_order",
                # The index is partial (WHERE model = '...'): a generic plan of a prepared
                # statement (psycopg prepares after 5 runs) cannot prove `model = $2` matches
                # it. And at the threshold the rule is the rule, not the planner's cost guess:
                # with table statistics it prefers the primary key + a sort of every row of
                # the model (seen on a 109-row table); no seq scan and no sort leaves the HNSW
                # index, whose scan yields rows in distance order.
                "SET LOCAL plan_cache_mode = force_custom_plan",
                "SET LOCAL enable_seqscan = off",
                "SET LOCAL enable_sort = off",
            ]
            query = (
                f"SELECT v.chunk_id, (v.embedding::vector({int(dim)})) <=> "
                f"%s::vector({int(dim)}) AS d "
                "FROM chunk_vectors v JOIN chunks c ON c.chunk_id = v.chunk_id "
                f"WHERE v.model = %s AND c.collection = %s ORDER BY d LIMIT {int(k)}"
            )
        else:
            settings = ["SET LOCAL enable_indexscan = off", "SET LOCAL enable_bitmapscan = off"]
            query = (
                "SELECT v.chunk_id, v.embedding <=> %s::vector AS d "
                "FROM chunk_vectors v JOIN chunks c ON c.chunk_id = v.chunk_id "
                "WHERE v.model = %s AND c.collection = %s "
                f"ORDER BY d, v.chunk_id LIMIT {int(k)}"
            )
        return settings, query

    def dense_search(
        self, model: str, collection: str, query: Matrix, k: int, *, approximate: bool
    ) -> list[tuple[str, float]]:
        """Top k (chunk_id, cosine) of `collection` by pgvector cosine distance.

        approximate=False: exact scan (index scans off), ordered by distance then chunk_id.
        approximate=True: the model's HNSW index with iterative scans (pgvector >= 0.8), so
        the collection filter still yields k rows; ordered by distance, ties by chunk_id here.
        """
        if k <= 0:
            return []
        settings, sql = self.dense_search_sql(
            int(np.asarray(query).size), k, approximate=approximate
        )
        try:
            with self._pool.connection() as conn, conn.transaction():
                for setting in settings:
                    conn.execute(setting)
                rows = conn.execute(sql, (vector_literal(query), model, collection)).fetchall()
        except Exception as err:
            raise StoreError(f"dense search failed ({redact(self.url)}): {err}") from err
        hits = sorted(((str(r[0]), 1.0 - float(r[1])) for r in rows), key=lambda h: (-h[1], h[0]))
        return hits
