"""The retrieval gate (docs/gate.md): refuse before any LLM call when evidence is insufficient.

Refuse (NO_EVIDENCE) when the top similarity is below `min_score` (GATE_BELOW_MIN_SCORE; also
when there are no rows), else when fewer than `min_chunks` rows reach `min_score`
(GATE_TOO_FEW_CHUNKS). "Reach" means `similarity >= min_score`: exactly at the threshold passes.

With the question, the gate also weighs the *coverage* of the top-similarity row (share of the
question's key terms it holds, `citebound.text.terms.coverage`): below `gate.min_coverage` the
question is refused whatever the similarity (GATE_LOW_COVERAGE: "Who painted the Mona Lisa?"
against a paint manual), and at `gate.covered_share` or more a top similarity from
`gate.covered_min_score` suffices (a question that reads well only next to its paragraph).
With every name and number of the question found in the ranked rows (`text.terms.names`:
"Who conquered the Canary Islands in the 14th century?" against articles that never say
"Canary" has one missing; every key term of a question in title case, capitals or lower case,
whose case marks no name) and `gate.found_min_terms` key terms in the best row, a top
similarity from `gate.found_min_score` suffices. With the best row holding `gate.rare_share`
of the question's key terms weighted by their idf in the collection (its rarest words:
"Nixon" in "When was he elected by Nixon?"; `text.terms.weighted_rarity`), a top similarity
from `gate.rare_min_score` suffices (measured only when the preset sets it).
The question's *framing* words ("In which *year*", "*typically*", "kicked ... *out*";
`text.terms.framing`) count only when the row holds them: a row need not repeat the kind of
answer asked for. The measurements are one `GateMeasures` (counts, not ratios), recorded in
the trace. `GatePolicy.refusal` holds the rule; assembly applies the same one
(assemble/selection.py, from `GateTrace.measures`).
"""

from __future__ import annotations

from collections.abc import Sequence

from citebound.contracts.enums import ReasonCode
from citebound.contracts.retrieval import GateMeasures, GateTrace
from citebound.policy import GatePolicy


def apply_gate(
    similarities: Sequence[float], gate: GatePolicy, measures: GateMeasures | None = None
) -> GateTrace:
    """Decide on the ranked rows' similarities (and the question's term `measures` over them,
    when measured); the trace records the numbers behind it."""
    top = max(similarities) if similarities else None
    reason = gate.refusal(top, measures, gate.min_score)
    # The rows that count toward min_chunks: those at or above the lowest passing similarity.
    bar = (
        gate.min_score
        if top is not None and top >= gate.min_score
        else gate.lowest_score(gate.min_score)
    )
    above = sum(1 for s in similarities if s >= gate.min_score)
    enough = sum(1 for s in similarities if s >= bar)
    if reason is None and enough < gate.min_chunks:
        reason = ReasonCode.GATE_TOO_FEW_CHUNKS.value
    m = measures
    return GateTrace(
        passed=reason is None,
        reason_code=reason,
        max_similarity=top,
        min_score=gate.min_score,
        min_chunks=gate.min_chunks,
        chunks_above_min_score=above,
        coverage=None if m is None else m.coverage,
        key_terms=None if m is None else m.key_terms,
        key_terms_held=None if m is None else m.key_terms_held,
        framing_terms=None if m is None else m.framing_terms,
        framing_held=None if m is None else m.framing_held,
        names_unfound=None if m is None else m.names_unfound,
        rarity_held=None if m is None else m.rarity_held,
    )
