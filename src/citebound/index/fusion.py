"""Calibrated similarity in [0, 1] from a dense cosine and a BM25 score (docs/retrieval.md).

    dense_sim   = clip(cosine, 0, 1)
    lexical_sim = tanh(bm25 / Σ_t idf(t))                (see `citebound.index.lexical`)
    hybrid      = (1 - w) · dense_sim + w · lexical_sim    (w = policy.retrieval.lexical_weight)
    similarity  = calibrate(LogAvgExp over query pieces of hybrid)   (per embedding model)

Both parts are query-independent in scale (no per-query max-normalization), so a threshold such
as `policy.gate.min_score` means the same thing for every question: the top result is not 1.0
just because it is the best of a weak lot.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Mode = Literal["hybrid", "lexical", "dense"]


def dense_similarity(cosine: npt.ArrayLike) -> FloatArray:
    """Cosine of L2-normalized vectors, negative values mapped to 0."""
    return np.clip(np.asarray(cosine, dtype=np.float64), 0.0, 1.0)


def lexical_similarity(bm25: npt.ArrayLike, reference: float) -> FloatArray:
    """tanh(BM25 / the query's reference score Σ idf), in [0, 1).

    tanh saturates instead of clipping, so chunks matching the query better than the reference
    still differ (clipping at 1 measured 0.007 nDCG@10 lower on SciFact train); the reference
    chunk itself scores tanh(1) = 0.76.
    """
    scores = np.asarray(bm25, dtype=np.float64)
    if reference <= 0:
        return np.zeros_like(scores)
    return np.tanh(np.clip(scores / reference, 0.0, None))


def fuse(dense: FloatArray, lexical: FloatArray, lexical_weight: float, mode: Mode) -> FloatArray:
    """The calibrated similarity for `mode`; hybrid is a convex blend, so it stays in [0, 1]."""
    if mode == "dense":
        return dense
    if mode == "lexical":
        return lexical
    return (1.0 - lexical_weight) * dense + lexical_weight * lexical


# Per-embedding-model calibration of the hybrid score: a monotone piecewise-linear map
# (raw, calibrated) knots. Monotone, so rankings never change; it only moves the scale so that a
# policy threshold means the same operating point for every model (DESIGN: "scores are
# calibrated to [0,1] per embedding model"). For MiniLM int8 + tanh-BM25 at lexical_weight 0.4,
# the gate operating point tuned on SQuAD 2.0 dev (raw 0.41: best mean of out-of-corpus refusal
# and in-corpus evidence hit, docs/evaluation.md) is mapped to the frozen gate value 0.76.
CALIBRATION_KNOTS: dict[str, tuple[tuple[float, float], ...]] = {
    "all-MiniLM-L6-v2-onnx-int8": ((0.0, 0.0), (0.41, 0.76), (1.0, 1.0)),
}


def calibrate(raw: npt.ArrayLike, embedding_model: str, mode: Mode) -> FloatArray:
    """Map raw fused scores to the calibrated [0, 1] scale of `embedding_model` (hybrid mode).

    Models without knots, and the single-index modes, are returned unchanged (clipped).
    """
    scores = np.clip(np.asarray(raw, dtype=np.float64), 0.0, 1.0)
    knots = CALIBRATION_KNOTS.get(embedding_model)
    if knots is None or mode != "hybrid":
        return scores
    xs, ys = zip(*knots, strict=True)
    return np.asarray(np.interp(scores, xs, ys), dtype=np.float64)
