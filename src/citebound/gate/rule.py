"""The gate's rule (docs/gate.md): refuse before any LLM call when evidence is insufficient.

Refuse (NO_EVIDENCE) when the top similarity is below `min_score` (GATE_BELOW_MIN_SCORE; also
when there are no rows), else when fewer than `min_chunks` rows reach `min_score`
(GATE_TOO_FEW_CHUNKS). "Reach" means `similarity >= min_score`: exactly at the threshold passes.

With the question, the gate also weighs the *coverage* of the top-similarity row (share of the
question's key terms it holds, `gate.measures.coverage`): below `gate.min_coverage` the
question is refused whatever the similarity (GATE_LOW_COVERAGE: "Who painted the Mona Lisa?"
against a paint manual), and at `gate.covered_share` or more a top similarity from
`gate.covered_min_score` suffices (a question that reads well only next to its paragraph).
With every name and number of the question found in the ranked rows (`gate.measures.names`:
"Who conquered the Canary Islands in the 14th century?" against articles that never say
"Canary" has one missing; every key term of a question in title case, capitals or lower case,
whose case marks no name) and `gate.found_min_terms` key terms in the best row, a top
similarity from `gate.found_min_score` suffices. With the best row holding `gate.rare_share`
of the question's key terms weighted by their idf in the collection (its rarest words:
"Nixon" in "When was he elected by Nixon?"; `gate.measures.weighted_rarity`), a top similarity
from `gate.rare_min_score` suffices (measured only when the preset sets it).
The question's *framing* words ("In which *year*", "*typically*", "kicked ... *out*";
`text.terms.framing`) count only when the row holds them: a row need not repeat the kind of
answer asked for. The measurements are one `GateMeasures` (counts, not ratios), recorded in
the trace. `refusal` holds the rule over the `[gate]` fields (`GatePolicy`); the retrieval
gate applies it through `apply_gate` and assembly's top-similarity check through
`similarity_suffices` (assemble/selection.py), so both read one implementation.
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
    reason = refusal(gate, top, measures, gate.min_score)
    # The rows that count toward min_chunks: those at or above the lowest passing similarity.
    bar = (
        gate.min_score
        if top is not None and top >= gate.min_score
        else lowest_score(gate, gate.min_score)
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


def similarity_suffices(
    gate: GatePolicy, top: float, measures: GateMeasures | None, min_score: float
) -> bool:
    """`top` reaches `min_score` (the similarity that suffices alone: the gate's
    `min_score`, or the assembly's `min_top_similarity`), or `covered_min_score` when the
    best row holds `covered_share` of a question of at least `covered_min_terms` terms, or
    `found_min_score` when it holds `found_min_terms` terms and no name of the question is
    missing from the rows, or `rare_min_score` when it holds `rare_share` of the
    question's idf-weighted key terms (`measures`, None: not measured; a framing term
    counts toward a share or a count only when held, toward the question's size always).
    Both stages apply this rule."""
    if top >= min_score:
        return True
    if measures is None:
        return False
    # Covered: the row holds `covered_share` of the terms counted (a framing word only when
    # held) and those are at least `covered_min_terms`, or, as before framing words were
    # known, of all the question's terms. Framing words never make a short question long
    # enough: "How long is the runway typically?" is one key term, as "How long is the
    # runway?" is (review of #15: two framing words let one key term pass from 0.55).
    share, full = measures.coverage, measures.full_coverage
    covered = (
        share is not None
        and share >= gate.covered_share
        and measures.counted >= gate.covered_min_terms
    ) or (
        full is not None and full >= gate.covered_share and measures.asked >= gate.covered_min_terms
    )
    low = gate.covered_min_score
    if covered and low is not None and top >= low:
        return True
    found = gate.found_min_score
    named = not measures.names_unfound and measures.held >= gate.found_min_terms
    if found is not None and top >= found and named:
        return True
    # Rare words held: the best row holds the words that say what the question is about
    # in this collection (idf-weighted), not only common ones ("develop", "system").
    if gate.rare_min_score is None or top < gate.rare_min_score:
        return False
    held = measures.rarity_held
    return held is not None and held >= gate.rare_share


def refusal(
    gate: GatePolicy, top: float | None, measures: GateMeasures | None, min_score: float
) -> str | None:
    """Why a top similarity `top` with the question's term `measures` (best-row coverage,
    names in no ranked row) is insufficient, or None (`similarity_suffices`, then the
    `min_coverage` floor).

    >>> g = GatePolicy(min_score=0.76, min_chunks=1, min_coverage=0.25,
    ...                covered_min_score=0.55, covered_share=0.6)
    >>> m = lambda held: GateMeasures(key_terms=5, key_terms_held=held, names_unfound=0)
    >>> [refusal(g, t, m(h), 0.76) for t, h in [(0.8, 2), (0.8, 1), (0.6, 3), (0.6, 2)]]
    [None, 'GATE_LOW_COVERAGE', None, 'GATE_BELOW_MIN_SCORE']
    """
    if top is None or not similarity_suffices(gate, top, measures, min_score):
        return "GATE_BELOW_MIN_SCORE"
    share = None if measures is None else measures.coverage
    if share is not None and share < gate.min_coverage:
        return "GATE_LOW_COVERAGE"
    return None


def lowest_score(gate: GatePolicy, min_score: float) -> float:
    """The lowest top similarity that can pass (with enough coverage)."""
    passes = (gate.covered_min_score, gate.found_min_score, gate.rare_min_score)
    return min([min_score, *(s for s in passes if s is not None)])
