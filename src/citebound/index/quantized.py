"""Int8 pre-scan with a certified shortlist: the exact dense top k of a large matrix at int8 cost.

Why: at 1M rows the float32 matrix is 1.5 GB and an exact mat-vec is bound by memory bandwidth.
An int8 copy is 4x smaller and onnxruntime's u8 x s8 integer GEMV (AVX2/AVX512-VNNI kernels)
scans it several times faster. The int8 scores only *choose candidates*: every returned score is
the exact float32 cosine, recomputed from the float matrix, so the calibrated similarity and the
gate see the same numbers as with the exact scan.

Why the ranking is exact, not approximate: every int8 score `a_i` has a proven error bound
`|q·x_i − a_i| ≤ ε` (below). Let `a_L` be the L-th best int8 score, the candidates all rows with
`a_i ≥ a_L`, and `t_k` the k-th best exact score among them. A row outside has `q·x_i < a_L + ε`,
so if `a_L + ε ≤ t_k` it can neither enter nor tie into the top k. Otherwise the candidates are
widened to all rows with `a_i ≥ t_k − ε`, which is exact by the same argument (and becomes the
full float scan when that set is large). The shortlist size L therefore only trades speed against
how often widening happens; it never changes a result.

Quantization (built once per matrix): per-dimension ranges `c_j = max_i |x_ij|` first (embedding
models have a few dimensions with much larger values, which would otherwise eat the int8 range of
every row), then a per-row scale `s_i`, so `x_i ≈ s_i · c ∘ x̂_i` with `x̂_i` in [−127, 127]. The
query is folded with `c` and quantized per query: `q ∘ c = t·q̂ + δ`. Then

    q·x_i = t·s_i·(q̂·x̂_i) + δ·(s_i x̂_i) + q·(x_i − s_i c ∘ x̂_i)
    ε     = ‖δ‖·G + ‖q‖·R + float slack,   G = max_i ‖s_i x̂_i‖,   R = max_i ‖x_i − s_i c ∘ x̂_i‖

by Cauchy-Schwarz; G and R are measured when the copy is built. Integer dot products are exact,
so the scan gives the same numbers on any number of threads: the candidates are deterministic.

Why the query has 7 bits and the rows 8 (exact on every x86 CPU): without VNNI (AVX2, AVX-512F),
onnxruntime's u8 x s8 kernel multiplies with VPMADDUBSW, which adds two adjacent u8·s8 products
into a *saturating* int16. With a u8 query up to 255 and rows up to ±127 a pair reaches 64,770
and is clipped to 32,767, so integer dot products came out wrong by up to 11,505 on an AVX2 EPYC
(140 of 6,000 rows) and the bound above failed. The query is therefore quantized to
[−QUERY_LEVELS, QUERY_LEVELS] = [−63, 63] and shifted by +64 into [1, 127]: a pair is then at most
2·127·127 = 32,258 < 32,767 and cannot saturate, so every kernel (AVX2, AVX-512, VNNI, the
portable one) returns the exact integer dot product. The coarser query only enlarges ‖δ‖ in ε;
the rows keep 8 bits. `Int8Scan` also checks the kernel at load on adversarial probes (all
extreme values) and refuses to build (so the index uses the exact float32 scan) if any integer
differs from numpy's: a future kernel with another overflow cannot silently break the bound.

Why the copy is built at load and not stored next to `vectors.npy`: `vectors.npy` stays the only
source of truth, so the int8 copy can never be stale or disagree with it, and the on-disk format
and manifest do not change. Building it reads the float matrix once in blocks (about as long as
loading `vectors.npy` itself; see docs/retrieval.md for the measured time) and costs 1 byte per
value plus 8 bytes per row of memory, with no full-size float temporaries.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from citebound.index.embedder import Matrix
from citebound.models import session

Scores = npt.NDArray[np.float32]

# Rows quantized per step while building: the float temporaries (12 MB at dim 384) stay in cache,
# which made building 1M rows twice as fast as with 32k-row blocks (2.6 s vs 3.7-5.3 s here).
BUILD_BLOCK_ROWS = 8192
# onnxruntime threads for the scan. One: the scan is memory-bound, and two threads were no faster
# here (median 18-19 ms vs 20-22 ms at 1M rows), while one leaves the other core to tantivy, the
# query embedder and concurrent requests.
SCAN_THREADS = 1
# Query levels: q̂ in [−63, 63], sent as q̂ + 64 in [1, 127], so that two adjacent u8·s8 products
# sum to at most 2·127·127 = 32,258 and the int16 VPMADDUBSW of AVX2/AVX-512F cannot saturate.
QUERY_LEVELS = 63
QUERY_SHIFT = QUERY_LEVELS + 1
ROW_LEVELS = 127


class KernelMismatchError(ValueError):
    """onnxruntime's integer scan disagreed with exact integer arithmetic on this CPU."""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One protobuf field: varint for ints, length-delimited for bytes and strings."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor_info(name: str, elem_type: int, shape: tuple[int | str, ...]) -> bytes:
    dims = b"".join(_field(1, _field(1 if isinstance(d, int) else 2, d)) for d in shape)
    tensor_type = _field(1, elem_type) + _field(2, dims)
    return _field(1, name) + _field(2, _field(1, tensor_type))


def scan_model(dim: int) -> bytes:
    """ONNX model bytes: `y[1, n] = MatMulInteger(q[1, dim] uint8, xt[dim, n] int8)` (int32).

    Written by hand (ONNX is protobuf) so that the `onnx` package is not a dependency. The matrix
    is a graph input, not an initializer: onnxruntime copies initializers handed to it, while a
    contiguous numpy input is read in place.
    """
    uint8, int8, int32 = 2, 3, 6  # onnx.TensorProto.DataType
    node = _field(1, "q") + _field(1, "xt") + _field(2, "y") + _field(4, "MatMulInteger")
    graph = (
        _field(1, node)
        + _field(2, "int8_scan")
        + _field(11, _tensor_info("q", uint8, (1, dim)))
        + _field(11, _tensor_info("xt", int8, (dim, "n")))
        + _field(12, _tensor_info("y", int32, (1, "n")))
    )
    opset = _field(1, "") + _field(2, 17)
    return _field(1, 8) + _field(8, opset) + _field(7, graph)


class Int8Scan:
    """The int8 copy of one float32 matrix and its onnxruntime scan.

    Args:
        matrix: (n, dim) float32 rows (any norms; the bound uses the measured residuals).
        threads: onnxruntime intra-op threads for the scan.
    """

    def __init__(self, matrix: Matrix, *, threads: int = SCAN_THREADS) -> None:
        # Without onnxruntime (extra `retrieval`) fail at once, before quantizing the matrix.
        import onnxruntime  # noqa: F401

        n, dim = matrix.shape
        span = np.zeros(dim, dtype=np.float32)
        for start in range(0, n, BUILD_BLOCK_ROWS):  # no full-size |matrix| temporary
            block = matrix[start : start + BUILD_BLOCK_ROWS]
            np.maximum(span, block.max(axis=0), out=span)
            np.maximum(span, -block.min(axis=0), out=span)
        if not np.isfinite(span).all():  # max and min propagate NaN and inf
            raise ValueError("non-finite vectors: no error bound, use the exact scan")
        span[span == 0] = 1.0  # all-zero dimensions: any scale works
        self.col_scale = span
        self.row_scale = np.ones(n, dtype=np.float32)
        # Transposed (dim, n): the u8 query is onnxruntime's A operand, the rows are B's columns.
        self.xt = np.empty((dim, n), dtype=np.int8)
        # QUERY_SHIFT · Σ_j x̂_ij: the uint8 query carries +QUERY_SHIFT, removed per row after.
        self.offset = np.empty(n, dtype=np.int32)
        g = r = w = 0.0
        inv_span = (1 / span).astype(np.float32)
        for start in range(0, n, BUILD_BLOCK_ROWS):
            block = matrix[start : start + BUILD_BLOCK_ROWS]
            stop = start + len(block)
            y = block * inv_span
            s = np.abs(y).max(axis=1) / np.float32(ROW_LEVELS)
            s[~(s > 0)] = 1.0
            y /= s[:, None]
            q8 = np.rint(y, out=y).astype(np.int8)  # |y| ≤ ROW_LEVELS by construction of s
            self.row_scale[start:stop] = s
            self.xt[:, start:stop] = q8.T
            self.offset[start:stop] = q8.sum(axis=1, dtype=np.int32) * QUERY_SHIFT
            scaled = q8 * s[:, None]  # s_i x̂_i, the row in the c-scaled space
            g = max(g, float(np.einsum("ij,ij->i", scaled, scaled).max(initial=0.0)))
            resid = np.subtract(block, scaled * span, out=scaled)
            r = max(r, float(np.einsum("ij,ij->i", resid, resid).max(initial=0.0)))
            w = max(w, float(np.einsum("ij,ij->i", block, block).max(initial=0.0)))
        # Measured in float32: the relative margin and the absolute term cover its rounding.
        self.g_bound, self.r_bound, self.max_norm = (
            math.sqrt(v) * (1 + 1e-4) + 1e-6 for v in (g, r, w)
        )
        # No spinning threads (models/onnx_session.py): after a scan they would steal the cores
        # tantivy and the embedder need next. The model is generated bytes, not a user's file.
        self._session: Any = session(scan_model(dim), threads=threads, inter_op_threads=1)
        self.check_kernel()

    def __len__(self) -> int:
        return int(self.xt.shape[1])

    def int_dots(
        self, q_u8: npt.NDArray[np.uint8], xt: npt.NDArray[np.int8]
    ) -> npt.NDArray[np.int32]:
        """`q_u8 · xt` (int32) with this scan's onnxruntime kernel: (dim,) x (dim, n) -> (n,)."""
        raw = self._session.run(None, {"q": q_u8[None, :], "xt": xt})
        out: npt.NDArray[np.int32] = raw[0][0]
        return out

    def check_kernel(self) -> None:
        """Raise KernelMismatchError unless the kernel is exact on worst-case inputs here.

        Probes: every query value at its extreme (QUERY_SHIFT + QUERY_LEVELS) against rows of all
        +127, all −127, alternating signs and random values, plus random queries; the expected
        values are numpy int64 dot products. Cheap (a few hundred thousand multiply-adds).
        """
        dim = int(self.xt.shape[0])
        rng = np.random.default_rng(0)
        top = QUERY_SHIFT + QUERY_LEVELS
        cols = [
            np.full(dim, ROW_LEVELS),
            np.full(dim, -ROW_LEVELS),
            np.where(np.arange(dim) % 2 == 0, ROW_LEVELS, -ROW_LEVELS),
            *rng.integers(-ROW_LEVELS, ROW_LEVELS + 1, (61, dim)),
        ]
        xt = np.ascontiguousarray(np.stack(cols, axis=1).astype(np.int8))
        queries = [
            np.full(dim, top),
            np.full(dim, QUERY_SHIFT - QUERY_LEVELS),
            *rng.integers(QUERY_SHIFT - QUERY_LEVELS, top + 1, (6, dim)),
        ]
        for q in queries:
            q_u8 = q.astype(np.uint8)
            want = q_u8.astype(np.int64) @ xt.astype(np.int64)
            if not np.array_equal(self.int_dots(q_u8, xt).astype(np.int64), want):
                raise KernelMismatchError(
                    "onnxruntime's MatMulInteger is not exact on this CPU; using the exact scan"
                )

    def approx(self, query: Matrix) -> tuple[Scores, float]:
        """Int8 scores of every row and their error bound ε (vs the float32 dot products).

        `query` must be finite and nonzero (the caller checks: a zero query has no scale).
        """
        q = np.asarray(query, dtype=np.float64)
        folded = q * self.col_scale
        t = float(np.abs(folded).max()) / QUERY_LEVELS
        q_int = np.clip(np.rint(folded / t), -QUERY_LEVELS, QUERY_LEVELS)
        delta = folded - t * q_int
        dots = self.int_dots((q_int + QUERY_SHIFT).astype(np.uint8), self.xt)
        dots -= self.offset
        scores = np.multiply(dots, self.row_scale * np.float32(t), dtype=np.float32)
        q_norm = float(np.linalg.norm(q))
        # Float slack: the float32 "exact" dot of `dim` terms and the float32 products above are
        # each within (dim + 8)·2^-23 of the real value, relative to ‖q‖·max‖x_i‖; doubled.
        slack = q_norm * self.max_norm * (len(q) + 8) * 2.0**-22
        eps = float(np.linalg.norm(delta)) * self.g_bound + q_norm * self.r_bound + slack
        return scores, eps
