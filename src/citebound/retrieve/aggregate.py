"""LogAvgExp: the per-chunk aggregate of its similarities over the query pieces (docs/retrieval.md).

    LAE_τ(s_1..s_n) = m + (1/τ) · ln( (1/n) · Σ_i exp(τ · (s_i - m)) ),   m = max_i s_i

The `1/n` is the length normalization: the aggregate does not grow with the number of pieces
(LAE of n equal scores s is s for every n), and it lies between the mean and the max:
    mean(s) ≤ LAE_τ(s) ≤ max(s),  and  LAE_τ(s) ≥ max(s) - ln(n)/τ.
Large τ approaches max (one strongly matching piece is enough), small τ approaches the mean.
Subtracting m first keeps exp() from overflowing; the formula is otherwise the textbook one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def logavgexp(scores: npt.ArrayLike, tau: float, axis: int = -1) -> npt.NDArray[np.float64]:
    """LogAvgExp over `axis` with temperature `tau` (> 0)."""
    if tau <= 0:
        raise ValueError("tau must be > 0")
    s = np.asarray(scores, dtype=np.float64)
    m = np.max(s, axis=axis, keepdims=True)
    out = m + np.log(np.mean(np.exp(tau * (s - m)), axis=axis, keepdims=True)) / tau
    result: npt.NDArray[np.float64] = np.squeeze(out, axis=axis)
    return result
