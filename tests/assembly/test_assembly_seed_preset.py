"""seed-v1's gate is seed 001's: a bundle whose top similarity is 0.55 is refused even when the
best row holds every key term of the question, which strict-v1's fitted gate lets pass."""

from __future__ import annotations

from assembly_factories import covered_gate, make_bundle, make_row

from citebound.assemble import assemble, assemble_and_build
from citebound.contracts import AssemblyStatus, BuildStatus, GateMeasures, ReasonCode
from citebound.gate.rule import apply_gate
from citebound.policy import load_policy

SEED = load_policy("seed-v1")
STRICT = load_policy("strict-v1")
# Three key terms (valve, described, manual), all in the row: a covered question.
QUESTION = "Which valve is described in the manual?"
COVERED = "Valve V0 is described in the manual."


def test_seed_v1_refuses_a_covered_bundle_at_055_that_strict_v1_answers() -> None:
    bundle = make_bundle([make_row(0, COVERED, similarity=0.55)], user_question=QUESTION)
    assert assemble(bundle, STRICT).assembly_status is AssemblyStatus.OK
    refused = assemble(bundle, SEED)
    assert refused.assembly_status is AssemblyStatus.NO_EVIDENCE
    assert refused.failure_reason == ReasonCode.DROP_BELOW_TOP_SIMILARITY
    assert refused.selected_evidence == []
    built = assemble_and_build(bundle, SEED)
    assert built.prompt.build_status is BuildStatus.NO_EVIDENCE and built.prompt.prompt_text == ""


def test_seed_v1_refuses_it_even_when_the_retrieval_gate_measured_full_coverage() -> None:
    gate = covered_gate(0.55, names_unfound=0, rarity_held=1.0)
    row = make_row(0, COVERED, similarity=0.55)
    bundle = make_bundle([row], user_question=QUESTION, gate=gate)
    assert assemble(bundle, STRICT).assembly_status is AssemblyStatus.OK
    assert assemble(bundle, SEED).failure_reason == ReasonCode.DROP_BELOW_TOP_SIMILARITY


def test_seed_v1_retrieval_gate_passes_from_076_only() -> None:
    measures = GateMeasures(key_terms=3, key_terms_held=3, names_unfound=0, rarity_held=1.0)
    for top in (0.55, 0.60, 0.70, 0.7599):
        assert apply_gate([top], SEED.gate, measures).reason_code == (
            ReasonCode.GATE_BELOW_MIN_SCORE.value
        )
        assert apply_gate([top], STRICT.gate, measures).passed
    assert apply_gate([0.76], SEED.gate, measures).passed
    # No coverage floor above 0.76 either: similarity alone decides, as seed 001 states.
    few = GateMeasures(key_terms=5, key_terms_held=1, names_unfound=0)
    assert apply_gate([0.8], SEED.gate, few).passed
    assert not apply_gate([0.8], STRICT.gate, few).passed


def test_seed_v1_passes_the_same_bundle_at_076() -> None:
    bundle = make_bundle([make_row(0, COVERED, similarity=0.76)], user_question=QUESTION)
    out = assemble(bundle, SEED)
    assert out.assembly_status is AssemblyStatus.OK
    assert [e.chunk_id for e in out.selected_evidence] == ["chunk-000"]
