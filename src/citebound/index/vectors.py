"""Exact dense search: a float32 matrix of L2-normalized rows, scored with one mat-vec product.

Rows are kept in chunk_id order, so ties (equal cosine) break by chunk_id asc via the row number.
Queries are cast to float32 first: a float64 query would upcast (copy) the whole matrix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from citebound.errors import StoreError
from citebound.index.embedder import Matrix

Rows = npt.NDArray[np.int64]


def top_rows(scores: npt.NDArray[np.float32], rows: Rows, k: int) -> list[tuple[int, float]]:
    """The k best (row, score) pairs by score desc, then row asc. Deterministic at the cut-off."""
    if k <= 0 or len(scores) == 0:
        return []
    if k < len(scores):
        # Keep everything tied with the k-th score so the row tie-break sees all candidates.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)
        scores, rows = scores[keep], rows[keep]
    order = np.lexsort((rows, -scores))[:k]
    return [(int(rows[i]), float(scores[i])) for i in order]


class VectorIndex:
    """The vectors of one collection.

    Args:
        matrix: (n, dim) float32, L2-normalized rows in chunk_id order.
    """

    def __init__(self, matrix: Matrix) -> None:
        if matrix.dtype != np.float32 or matrix.ndim != 2:
            raise StoreError("vector matrix must be a 2-D float32 array")
        self.matrix = np.ascontiguousarray(matrix)
        self._all_rows: Rows = np.arange(len(self.matrix), dtype=np.int64)

    @classmethod
    def load(cls, path: Path) -> VectorIndex:
        try:
            return cls(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as err:
            raise StoreError(f"cannot read vectors {path}: {err}") from None

    def __len__(self) -> int:
        return len(self.matrix)

    def search(self, query: Matrix, k: int, rows: Rows | None = None) -> list[tuple[int, float]]:
        """Top k (row, cosine) for one query vector, optionally only among `rows` (a filter)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if rows is None:
            return top_rows(self.matrix @ q, self._all_rows, k)
        return top_rows(self.matrix[rows] @ q, rows, k)

    def cosines(self, query: Matrix, rows: Rows) -> npt.NDArray[np.float32]:
        """Cosine of the query with the given rows (for candidates found lexically)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        out: npt.NDArray[np.float32] = self.matrix[rows] @ q
        return out
