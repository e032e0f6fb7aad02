"""Dense search: the int8 scan with certified shortlist returns exactly the exact scan's top k.

The matrices are small; a test-only `quantized_min_rows` makes them take the int8 path.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

import citebound.index.quantized as quantized
import citebound.index.vectors as vectors
from citebound.errors import StoreError
from citebound.index.quantized import Int8Scan, scan_model
from citebound.index.vectors import VectorIndex, top_rows

DIM = 384
Pairs = list[tuple[int, float]]


def unit_rows(n: int, seed: int) -> npt.NDArray[np.float32]:
    m = np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def int_rows(n: int, seed: int) -> npt.NDArray[np.float32]:
    """Small integers: every dot product is exact in float32 whatever the summation order, so
    both paths must agree bit for bit, and equal scores (ties) are frequent."""
    return np.random.default_rng(seed).integers(-3, 4, (n, DIM)).astype(np.float32)


def rows_of(pairs: Pairs) -> list[int]:
    return [r for r, _ in pairs]


def assert_same_top(got: Pairs, want: Pairs) -> None:
    """Same rows in the same order; scores equal up to float32 rounding of the summation."""
    assert rows_of(got) == rows_of(want)
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-6)


@pytest.fixture(scope="module")
def unit_index() -> VectorIndex:
    return VectorIndex(unit_rows(20_000, 1), quantized_min_rows=1000)


def queries(matrix: npt.NDArray[np.float32], seed: int) -> list[npt.NDArray[np.float32]]:
    """Random directions, a stored row, and a stored row plus noise (a near-duplicate)."""
    rng = np.random.default_rng(seed)
    out = [q / np.linalg.norm(q) for q in rng.standard_normal((4, DIM), dtype=np.float32)]
    noisy = matrix[7] + 0.05 * rng.standard_normal(DIM, dtype=np.float32)
    return [*out, matrix[123].copy(), (noisy / np.linalg.norm(noisy)).astype(np.float32)]


@pytest.mark.parametrize("k", [1, 20, 200])
def test_int8_path_returns_the_exact_top_k(unit_index: VectorIndex, k: int) -> None:
    assert unit_index.int8 is not None
    before = unit_index.quantized_searches
    for q in queries(unit_index.matrix, k):
        assert_same_top(unit_index.search(q, k), unit_index.exact_search(q, k))
    assert unit_index.quantized_searches == before + 6


def test_int8_path_is_bit_identical_on_exact_arithmetic() -> None:
    index = VectorIndex(int_rows(15_000, 2), quantized_min_rows=1000)
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = rng.integers(-3, 4, DIM).astype(np.float32)
        for k in (5, 150):
            assert index.search(q, k) == index.exact_search(q, k)
    assert index.quantized_searches == 8


def test_ties_break_by_row_on_both_paths() -> None:
    m = unit_rows(12_000, 4)
    m[[9000, 17, 4242, 11_999, 600]] = m[300]  # six identical rows, stored out of order
    index = VectorIndex(m, quantized_min_rows=1000)
    got = index.search(m[300], 6)
    assert rows_of(got) == [17, 300, 600, 4242, 9000, 11_999]
    assert len({s for _, s in got}) == 1  # all tied: the order comes from the row numbers
    assert_same_top(got, index.exact_search(m[300], 6))
    assert index.search(m[300], 3) == got[:3]  # the cut-off falls inside the tie
    assert all(index.search(m[300], 6) == got for _ in range(3))


def test_top_rows_keeps_lowest_rows_among_ties() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.9, 0.5], dtype=np.float32)
    rows = np.array([40, 30, 20, 10, 0], dtype=np.int64)
    nine = float(np.float32(0.9))
    assert top_rows(scores, rows, 3) == [(10, nine), (30, nine), (0, 0.5)]


def test_widening_keeps_results_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    # A shortlist of exactly k is too small for the certificate: the candidates must widen.
    monkeypatch.setattr(vectors, "SHORTLIST_MIN", 1)
    monkeypatch.setattr(vectors, "SHORTLIST_PER_K", 1)
    index = VectorIndex(unit_rows(8000, 5), quantized_min_rows=1000)
    for q in queries(index.matrix, 6):
        assert_same_top(index.search(q, 50), index.exact_search(q, 50))
    assert index.widened_searches > 0
    monkeypatch.setattr(vectors, "WIDEN_FULL_SCAN_SHARE", 0.0)  # widening becomes a full scan
    q = queries(index.matrix, 7)[0]
    assert index.search(q, 50) == index.exact_search(q, 50)


def test_filtered_rows(unit_index: VectorIndex) -> None:
    rng = np.random.default_rng(8)
    big = np.flatnonzero(rng.random(len(unit_index)) < 0.5).astype(np.int64)
    small = big[:600]  # below quantized_min_rows: the exact scan over the subset
    q = queries(unit_index.matrix, 9)[0]
    before = unit_index.quantized_searches
    got = unit_index.search(q, 100, big)
    assert set(rows_of(got)) <= set(big.tolist())
    assert_same_top(got, unit_index.exact_search(q, 100, big))
    assert unit_index.quantized_searches == before + 1
    got_small = unit_index.search(q, 100, small)
    assert got_small == unit_index.exact_search(q, 100, small)
    assert unit_index.quantized_searches == before + 1
    assert unit_index.search(q, 10, np.array([], dtype=np.int64)) == []


def test_degenerate_inputs(unit_index: VectorIndex) -> None:
    before = unit_index.quantized_searches
    zero = np.zeros(DIM, dtype=np.float32)
    assert unit_index.search(zero, 3) == [(0, 0.0), (1, 0.0), (2, 0.0)]  # all tie at 0
    q = queries(unit_index.matrix, 10)[0]
    assert unit_index.search(q, 0) == [] and unit_index.search(q, -1) == []
    everything = unit_index.search(q, len(unit_index) + 5)
    assert sorted(rows_of(everything)) == list(range(len(unit_index)))
    assert unit_index.quantized_searches == before  # none of these used the int8 scan
    with pytest.raises(ValueError):
        unit_index.search(np.ones(DIM + 1, dtype=np.float32), 5)
    empty = VectorIndex(np.zeros((0, DIM), dtype=np.float32), quantized_min_rows=0)
    assert empty.int8 is None and empty.search(q, 5) == []


def test_query_dtypes_and_shapes(unit_index: VectorIndex) -> None:
    q = queries(unit_index.matrix, 11)[0]
    want = unit_index.search(q, 20)
    assert unit_index.search(q.astype(np.float64), 20) == want
    assert unit_index.search(q.reshape(1, DIM), 20) == want
    assert unit_index.search(q.tolist(), 20) == want  # type: ignore[arg-type]
    half = q.astype(np.float16)  # a different (rounded) query: compare with its exact result
    assert_same_top(unit_index.search(half, 20), unit_index.exact_search(half, 20))
    assert unit_index.matrix.dtype == np.float32 and unit_index.int8 is not None
    assert unit_index.int8.xt.dtype == np.int8
    with pytest.raises(StoreError):
        VectorIndex(unit_rows(10, 0).astype(np.float64))


def test_small_index_stays_exact_and_builds_no_copy() -> None:
    index = VectorIndex(unit_rows(5000, 12))
    assert index.quantized_min_rows == vectors.QUANTIZED_MIN_ROWS > 5000
    assert index.int8 is None
    index.search(unit_rows(1, 13)[0], 10)
    assert index.quantized_searches == 0


def test_without_onnxruntime_or_with_nan_rows_search_is_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = unit_rows(3000, 14)
    q = m[5]
    bad = m.copy()
    bad[10, 3] = np.nan
    assert VectorIndex(bad, quantized_min_rows=1000).int8 is None

    def missing(*args: object, **kwargs: object) -> None:
        raise ImportError("no onnxruntime")

    monkeypatch.setattr(vectors, "Int8Scan", missing)
    index = VectorIndex(m, quantized_min_rows=1000)
    assert index.int8 is None and rows_of(index.search(q, 3))[0] == 5


def test_int8_error_bound_holds_and_is_tight() -> None:
    m = unit_rows(6000, 15)
    scan = Int8Scan(m, threads=1)
    for q in queries(m, 16):
        approx, eps = scan.approx(q)
        err = np.abs(approx.astype(np.float64) - m.astype(np.float64) @ q.astype(np.float64))
        assert err.max() <= eps
        assert eps < 0.05  # loose bounds would make every search widen
    # Integer dot products: the scan gives the same numbers on one or two threads.
    two = Int8Scan(m, threads=2)
    q = queries(m, 17)[0]
    assert np.array_equal(scan.approx(q)[0], two.approx(q)[0])


def test_scan_model_is_a_valid_onnx_matmulinteger() -> None:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(scan_model(4), providers=["CPUExecutionProvider"])
    q = np.array([[0, 1, 128, 255]], dtype=np.uint8)
    xt = np.array([[1, -1], [2, 0], [3, 127], [-127, 5]], dtype=np.int8)
    want = q.astype(np.int32) @ xt.astype(np.int32)
    assert np.array_equal(session.run(None, {"q": q, "xt": xt})[0], want)


def saturating_u8s8_dots(
    q: npt.NDArray[np.int64], xt: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """What AVX2's VPMADDUBSW + VPMADDWD compute: adjacent u8·s8 pairs summed into a saturating
    int16, then summed exactly. Emulated in numpy so the argument is tested on every CPU."""
    prods = q[:, None] * xt  # (dim, n)
    pairs = np.clip(prods[0::2] + prods[1::2], -32768, 32767)
    return pairs.sum(axis=0)


def test_query_range_cannot_saturate_the_avx2_kernel() -> None:
    # Worst cases of the shipped ranges: the emulated AVX2 kernel equals exact arithmetic.
    top = quantized.QUERY_SHIFT + quantized.QUERY_LEVELS
    low = quantized.QUERY_SHIFT - quantized.QUERY_LEVELS
    assert 2 * top * quantized.ROW_LEVELS <= 32767 and low >= 0
    rng = np.random.default_rng(21)
    xt = np.concatenate(
        [
            np.full((DIM, 1), quantized.ROW_LEVELS),
            np.full((DIM, 1), -quantized.ROW_LEVELS),
            rng.integers(-quantized.ROW_LEVELS, quantized.ROW_LEVELS + 1, (DIM, 50)),
        ],
        axis=1,
    ).astype(np.int64)
    for q in (np.full(DIM, top), np.full(DIM, low), rng.integers(low, top + 1, DIM)):
        assert np.array_equal(saturating_u8s8_dots(q.astype(np.int64), xt), q @ xt)
    # The old range (query up to 255) is exactly what broke on AVX2-only CPUs.
    full = np.full(DIM, 255, dtype=np.int64)
    assert not np.array_equal(saturating_u8s8_dots(full, xt), full @ xt)


def test_real_kernel_is_exact_at_the_extremes_on_this_cpu() -> None:
    # Runs onnxruntime's kernel of *this* CPU (AVX2 without VNNI on the reference host) on the
    # most extreme inputs the scan can produce; any saturation shows up as a mismatch.
    scan = Int8Scan(unit_rows(1500, 22), threads=1)
    top = quantized.QUERY_SHIFT + quantized.QUERY_LEVELS
    xt = np.full((DIM, 2), quantized.ROW_LEVELS, dtype=np.int8)
    xt[:, 1] = -quantized.ROW_LEVELS
    q = np.full(DIM, top, dtype=np.uint8)
    assert scan.int_dots(q, xt).tolist() == [top * 127 * DIM, -top * 127 * DIM]
    scan.check_kernel()  # what every build runs; raises on a mismatch


def test_a_wrong_kernel_makes_the_index_fall_back_to_the_exact_scan(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def off_by_one(
        self: Int8Scan, q: npt.NDArray[np.uint8], xt: npt.NDArray[np.int8]
    ) -> npt.NDArray[np.int32]:
        return (q.astype(np.int32) @ xt.astype(np.int32)) + 1

    monkeypatch.setattr(Int8Scan, "int_dots", off_by_one)
    m = unit_rows(3000, 23)
    with pytest.raises(quantized.KernelMismatchError):
        Int8Scan(m)
    index = VectorIndex(m, quantized_min_rows=1000)
    assert index.int8 is None
    assert "not exact on this CPU" in caplog.text
    assert rows_of(index.search(m[42], 3))[0] == 42
