"""The retrieval gate (seed 003 §2): refuse before any LLM call when evidence is insufficient.

Refuse (NO_EVIDENCE) when the top similarity is below `min_score` (GATE_BELOW_MIN_SCORE; also
when there are no rows), else when fewer than `min_chunks` rows reach `min_score`
(GATE_TOO_FEW_CHUNKS). "Reach" means `similarity >= min_score`: exactly at the threshold passes.
"""

from __future__ import annotations

from collections.abc import Sequence

from citebound.contracts.enums import ReasonCode
from citebound.contracts.retrieval import GateTrace
from citebound.policy import GatePolicy


def apply_gate(similarities: Sequence[float], gate: GatePolicy) -> GateTrace:
    """Decide on the ranked rows' similarities; the trace records the numbers behind it."""
    top = max(similarities) if similarities else None
    above = sum(1 for s in similarities if s >= gate.min_score)
    reason: ReasonCode | None = None
    if top is None or top < gate.min_score:
        reason = ReasonCode.GATE_BELOW_MIN_SCORE
    elif above < gate.min_chunks:
        reason = ReasonCode.GATE_TOO_FEW_CHUNKS
    return GateTrace(
        passed=reason is None,
        reason_code=None if reason is None else reason.value,
        max_similarity=top,
        min_score=gate.min_score,
        min_chunks=gate.min_chunks,
        chunks_above_min_score=above,
    )
