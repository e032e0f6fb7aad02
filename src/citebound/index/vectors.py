"""Dense search: a float32 matrix of L2-normalized rows; exact results at every size.

Rows are kept in chunk_id order, so ties (equal cosine) break by chunk_id asc via the row number.
Queries are cast to float32 first: a float64 query would upcast (copy) the whole matrix.

Small matrices are scanned exactly with one float32 mat-vec. From `QUANTIZED_MIN_ROWS` rows on,
that mat-vec is bound by memory bandwidth (1.5 GB at 1M x 384), so an int8 copy
(`index.quantized.Int8Scan`, 4x fewer bytes) picks a shortlist and the float32 matrix rescores
only the shortlist. The result is still the exact one, proven per query rather than hoped for:
the int8 scores come with an error bound ε. With `a_L` the L-th best int8 score, candidates
`a_i ≥ a_L` and `t_k` the k-th best exact score among them, every other row scores below
`a_L + ε`; when `a_L + ε ≤ t_k` none of them can enter or tie into the top k. Otherwise the
candidates are widened to `a_i ≥ t_k − ε`, which is exact by the same argument (a full float scan
when that set is large). The shortlist size L only decides how often widening is needed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import numpy.typing as npt

from citebound.errors import StoreError
from citebound.index.embedder import Matrix
from citebound.index.quantized import Int8Scan, KernelMismatchError

log = logging.getLogger(__name__)

Rows = npt.NDArray[np.int64]

# From this many rows (in the index, or passing a filter) search goes through the int8 scan.
# Below it the exact float32 scan is already fast (about 1 ms per 10k rows here; docs/retrieval.md)
# and the int8 copy would cost memory (1 byte per value) for little gain.
QUANTIZED_MIN_ROWS = 200_000
# Shortlist before the certificate: max(SHORTLIST_MIN, SHORTLIST_PER_K · k) rows. Rescoring 2,000
# rows costs about a millisecond; a larger shortlist only makes widening rarer.
SHORTLIST_MIN = 1000
SHORTLIST_PER_K = 10
# When widening would rescore more than this share of the rows, one full float scan is cheaper
# than gathering them (and copies no rows).
WIDEN_FULL_SCAN_SHARE = 0.25


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


def _int8_scan(matrix: Matrix) -> Int8Scan | None:
    try:
        return Int8Scan(matrix)
    except ImportError:  # onnxruntime (extra `retrieval`) absent: the exact scan still works
        return None
    except KernelMismatchError as exc:  # the integer kernel is wrong on this CPU: stay exact
        log.warning("%s", exc)
        return None
    except ValueError:  # non-finite values: the int8 error bound would not hold
        return None


def rescore(matrix: Matrix, rows: Rows, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """float32 cosines of `rows`, accumulated in float64 on the calling thread.

    Not BLAS: right after the onnxruntime scan, waking BLAS's worker threads cost up to 20 ms on
    a busy machine, against ~1 ms for 2,000 rows here. float64 accumulation makes the result the
    correctly rounded float32 value, independent of summation order and thread count.
    """
    out: npt.NDArray[np.float32] = np.einsum(
        "ij,j->i", matrix[rows], query, dtype=np.float64, casting="safe"
    ).astype(np.float32)
    return out


class VectorIndex:
    """The vectors of one collection.

    Args:
        matrix: (n, dim) float32, L2-normalized rows in chunk_id order.
        quantized_min_rows: Searches over at least this many rows use the int8 scan (built here,
            at load, when the matrix is that large). Results are identical either way.
    """

    def __init__(self, matrix: Matrix, *, quantized_min_rows: int = QUANTIZED_MIN_ROWS) -> None:
        if matrix.dtype != np.float32 or matrix.ndim != 2:
            raise StoreError("vector matrix must be a 2-D float32 array")
        self.matrix = np.ascontiguousarray(matrix)
        self._all_rows: Rows = np.arange(len(self.matrix), dtype=np.int64)
        self.quantized_min_rows = max(1, quantized_min_rows)
        big = len(self.matrix) >= self.quantized_min_rows
        self.int8 = _int8_scan(self.matrix) if big else None
        # Counters for benchmarks and operators: searches through the int8 scan, and how many of
        # those needed a widened shortlist (a rate near 0 means the shortlist size is right).
        self.quantized_searches = 0
        self.widened_searches = 0

    @classmethod
    def load(cls, path: Path, *, quantized_min_rows: int = QUANTIZED_MIN_ROWS) -> VectorIndex:
        try:
            matrix = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise StoreError(f"cannot read vectors {path}: {err}") from None
        return cls(matrix, quantized_min_rows=quantized_min_rows)

    def __len__(self) -> int:
        return len(self.matrix)

    def search(self, query: Matrix, k: int, rows: Rows | None = None) -> list[tuple[int, float]]:
        """Top k (row, cosine) for one query vector, optionally only among `rows` (a filter).

        Exact cosines, ordered by cosine desc then row asc, whichever scan runs.
        """
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if rows is not None:
            rows = np.asarray(rows, dtype=np.int64)
        if self._use_int8(q, k, len(self) if rows is None else len(rows)):
            return self._certified(q, k, rows)
        return self.exact_search(q, k, rows)

    def exact_search(
        self, query: Matrix, k: int, rows: Rows | None = None
    ) -> list[tuple[int, float]]:
        """`search` by a full float32 scan (the reference the int8 path must reproduce)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if rows is None:
            return top_rows(self.matrix @ q, self._all_rows, k)
        rows = np.asarray(rows, dtype=np.int64)
        return top_rows(self.matrix[rows] @ q, rows, k)

    def cosines(self, query: Matrix, rows: Rows) -> npt.NDArray[np.float32]:
        """Cosine of the query with the given rows (for candidates found lexically)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        out: npt.NDArray[np.float32] = self.matrix[rows] @ q
        return out

    def _use_int8(self, q: npt.NDArray[np.float32], k: int, n: int) -> bool:
        if self.int8 is None or k <= 0 or n < self.quantized_min_rows:
            return False
        if max(SHORTLIST_MIN, SHORTLIST_PER_K * k) >= n or q.shape != (self.matrix.shape[1],):
            return False  # nothing to save, or a shape error the exact path reports
        norm = float(np.linalg.norm(q.astype(np.float64)))
        return bool(np.isfinite(norm)) and norm > 0  # a zero query has no int8 scale

    def _certified(
        self, q: npt.NDArray[np.float32], k: int, subset: Rows | None
    ) -> list[tuple[int, float]]:
        """The exact top k of `subset` (None: all rows): int8 shortlist, float32 rescoring and
        the certificate of the module docstring."""
        assert self.int8 is not None
        self.quantized_searches += 1
        approx, eps = self.int8.approx(q)
        rows = self._all_rows if subset is None else subset
        if subset is not None:
            approx = approx[subset]
        shortlist = max(SHORTLIST_MIN, SHORTLIST_PER_K * k)
        cut = len(approx) - shortlist
        a_l = float(np.partition(approx, cut)[cut])
        cand = rows[approx >= a_l]
        best = top_rows(rescore(self.matrix, cand, q), cand, k)
        t_k = best[-1][1]
        if a_l + eps <= t_k:
            return best
        self.widened_searches += 1
        wide = np.flatnonzero(approx >= t_k - eps)
        if len(wide) > WIDEN_FULL_SCAN_SHARE * len(rows):
            full = self.matrix @ q  # no copy of the rows, unlike gathering a large subset
            return top_rows(full if subset is None else full[subset], rows, k)
        cand = rows[wide]
        return top_rows(rescore(self.matrix, cand, q), cand, k)
