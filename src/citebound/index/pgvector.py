"""Dense search in PostgreSQL (pgvector) for a collection stored in a `PostgresStore`.

`PgVectorIndex` is a `VectorIndex` whose unfiltered searches run in the database:

* fewer than `store.hnsw_min_rows` vectors (default 100,000), or no HNSW index yet: an exact
  scan in PostgreSQL (`<=>` cosine distance, index scans off), ties by chunk_id;
* at least that many, with the model's HNSW index: approximate HNSW search with iterative
  scans (ef_search = max(40, 2k)).

Filtered searches (equipment, type, dates) use the exact local scan of the inherited
`VectorIndex`: the filter is already a set of local rows, and an exact result must not depend
on how many rows HNSW happened to visit.

Whatever found a candidate, its score is the float32 cosine from the local matrix (the same
vectors, read back from the database), so the calibrated similarity and the gate are identical
to the embedded mode. What can differ is only *which* rows become candidates: near-ties at
the N1 cut-off (pgvector computes distances in its own order) and, under HNSW, rows the graph
search missed. docs/postgres.md gives the measured ranking difference on SciFact.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

import numpy as np

from citebound.index.embedder import Matrix
from citebound.index.vectors import Rows, VectorIndex

if TYPE_CHECKING:
    from citebound.store.postgres import PostgresStore


class PgVectorIndex(VectorIndex):
    """The vectors of one collection, searched in PostgreSQL (see the module docstring)."""

    def __init__(
        self,
        matrix: Matrix,
        *,
        store: PostgresStore,
        collection: str,
        model: str,
        chunk_ids: list[str],
    ) -> None:
        super().__init__(matrix)
        self.store = store
        self.collection = collection
        self.model = model
        self.chunk_ids = chunk_ids  # sorted: row i is chunk_ids[i]
        self.approximate = len(chunk_ids) >= store.hnsw_min_rows and store.has_hnsw(model)
        self.database_searches = 0

    def _row(self, chunk_id: str) -> int | None:
        pos = bisect.bisect_left(self.chunk_ids, chunk_id)
        return pos if pos < len(self.chunk_ids) and self.chunk_ids[pos] == chunk_id else None

    def search(self, query: Matrix, k: int, rows: Rows | None = None) -> list[tuple[int, float]]:
        """Top k (row, cosine): in PostgreSQL without a filter, locally with one."""
        if rows is not None:
            return super().search(query, k, rows)
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        self.database_searches += 1
        hits = self.store.dense_search(
            self.model, self.collection, q, k, approximate=self.approximate
        )
        found = [r for r in (self._row(cid) for cid, _ in hits) if r is not None]
        if not found:
            return []
        picked = np.asarray(found, dtype=np.int64)
        scores = self.matrix[picked] @ q
        order = np.lexsort((picked, -scores))
        return [(int(picked[i]), float(scores[i])) for i in order]
