"""Pure functions: LogAvgExp, query pieces, fusion calibration, ranking metrics, the gate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from citebound.contracts.enums import ReasonCode
from citebound.eval.metrics import mean_metric, ndcg_at_k, recall_at_k
from citebound.gate.rule import apply_gate
from citebound.index.fusion import dense_similarity, fuse, lexical_similarity
from citebound.policy import GatePolicy
from citebound.retrieve.aggregate import logavgexp
from citebound.retrieve.pieces import query_pieces

scores = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8)


def test_logavgexp_known_value() -> None:
    # (1/9)·ln((e^{9·0.8} + e^{9·0.2}) / 2), computed by hand
    expected = math.log((math.exp(7.2) + math.exp(1.8)) / 2) / 9
    assert logavgexp([0.8, 0.2], 9.0) == pytest.approx(expected, abs=1e-12)
    assert logavgexp([0.8, 0.2], 9.0) == pytest.approx(0.723484, abs=1e-6)


@given(scores, st.floats(0.1, 50.0))
def test_logavgexp_bounds(values: list[float], tau: float) -> None:
    agg = float(logavgexp(values, tau))
    assert np.mean(values) - 1e-9 <= agg <= max(values) + 1e-9
    assert agg >= max(values) - math.log(len(values)) / tau - 1e-9


@given(st.floats(0.0, 1.0), st.integers(1, 10))
def test_logavgexp_length_normalized(s: float, n: int) -> None:
    assert float(logavgexp([s] * n, 9.0)) == pytest.approx(s, abs=1e-12)


def test_logavgexp_tau_limits_and_rows() -> None:
    assert float(logavgexp([0.9, 0.1], 1e4)) == pytest.approx(0.9, abs=1e-3)
    assert float(logavgexp([0.9, 0.1], 1e-6)) == pytest.approx(0.5, abs=1e-3)
    rows = logavgexp(np.array([[0.5, 0.5], [1.0, 0.0]]), 9.0, axis=1)
    assert rows.shape == (2,) and rows[0] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        logavgexp([0.5], 0.0)


def test_query_pieces() -> None:
    assert query_pieces("  What torque?  ", 5) == ["What torque?"]
    assert query_pieces("", 5) == []
    text = "One. Two. Three. Four. Five. Six. Seven."
    assert query_pieces(text, 3) == ["One. Two. Three.", "Four. Five.", "Six. Seven."]
    assert query_pieces(text, 10) == [f"{w}." for w in text.replace(".", "").split()]
    assert len(query_pieces(text, 1)) == 1


def test_fusion_is_calibrated() -> None:
    assert dense_similarity([-0.3, 0.5, 1.2]).tolist() == [0.0, 0.5, 1.0]
    assert lexical_similarity([0.0, 2.0, 4.0, 400.0], 4.0).tolist() == pytest.approx(
        [0.0, math.tanh(0.5), math.tanh(1.0), 1.0]
    )
    assert lexical_similarity([3.0], 0.0).tolist() == [0.0]
    d, lx = np.array([0.8]), np.array([0.4])
    assert fuse(d, lx, 0.25, "hybrid")[0] == pytest.approx(0.7)
    assert fuse(d, lx, 0.25, "dense")[0] == 0.8
    assert fuse(d, lx, 0.25, "lexical")[0] == 0.4


def test_metrics() -> None:
    qrels = {"a": 1, "b": 1}
    assert ndcg_at_k(["a", "b", "c"], qrels, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["c", "a"], {"a": 1}, 10) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["c", "a", "a"], {"a": 1}, 1) == 0.0
    assert recall_at_k(["a", "c", "a"], qrels, 100) == 0.5
    assert recall_at_k(["x"], {}, 10) == 0.0
    assert ndcg_at_k(["b", "a"], {"a": 2, "b": 1}, 2) == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    )
    runs = {"q1": ["a"], "q2": ["z"]}
    assert mean_metric(runs, {"q1": {"a": 1}, "q2": {"b": 1}}, "ndcg", 10) == 0.5
    assert mean_metric({}, {"q1": {"a": 1}}, "recall", 10) == 0.0
    with pytest.raises(ValueError):
        mean_metric(runs, {"q1": {"a": 1}}, "map", 10)


@pytest.mark.parametrize(
    ("sims", "min_score", "min_chunks", "passed", "reason", "above"),
    [
        ([0.5, 0.4], 0.5, 1, True, None, 1),  # exactly at min_score passes
        ([np.nextafter(0.5, 0.0), 0.4], 0.5, 1, False, ReasonCode.GATE_BELOW_MIN_SCORE, 0),
        ([0.9, 0.5, 0.49], 0.5, 2, True, None, 2),
        ([0.9, 0.49], 0.5, 2, False, ReasonCode.GATE_TOO_FEW_CHUNKS, 1),
        ([], 0.2, 1, False, ReasonCode.GATE_BELOW_MIN_SCORE, 0),
        ([0.0], 0.0, 1, True, None, 1),
    ],
)
def test_gate_boundaries(
    sims: list[float],
    min_score: float,
    min_chunks: int,
    passed: bool,
    reason: ReasonCode | None,
    above: int,
) -> None:
    trace = apply_gate(sims, GatePolicy(min_score=min_score, min_chunks=min_chunks))
    assert trace.passed is passed
    assert trace.reason_code == (reason.value if reason else None)
    assert trace.chunks_above_min_score == above
    assert trace.max_similarity == (max(sims) if sims else None)
    assert (trace.min_score, trace.min_chunks) == (min_score, min_chunks)
