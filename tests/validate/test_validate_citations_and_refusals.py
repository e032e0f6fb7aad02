"""The five R5 tests of seed 001, verbatim, plus the status rules around them."""

from __future__ import annotations

from validate_samples import VALID

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.enums import AssemblyStatus, GenerationStatus, ReasonCode
from citebound.policy import Policy
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import VALIDATOR_VERSION, validate_answer


def test_1_valid_answer_passes(bundle: AnswerBundle, strict: Policy) -> None:
    r = validate_answer(bundle, make_llm_result(bundle, VALID), strict)
    assert r.validation_status == "PASSED"
    assert r.generation_status == "OK"
    assert set(r.validated_citations) <= set(bundle.allowed_anchors)
    assert r.validated_citations == ["C0", "C1"]
    assert r.validated_answer_text == VALID
    assert r.failure_reason is None
    assert r.validator_version == VALIDATOR_VERSION
    m = r.grounding_metrics
    assert (m.citation_count, m.uncited_sentence_count, m.invalid_anchor_count) == (2, 0, 0)
    assert m.attribution_coverage == 1.0 and m.suspicious_new_ids == []


def test_2_invented_citation_fails(bundle: AnswerBundle, strict: Policy) -> None:
    r = validate_answer(bundle, make_llm_result(bundle, VALID + " [C99]"), strict)
    assert r.validation_status == "FAILED"
    assert r.failure_reason == ReasonCode.INVALID_CITATION_REFERENCE
    assert r.grounding_metrics.invalid_anchor_count == 1
    assert r.generation_status == "FAILED" and r.validated_answer_text == ""


def test_3_uncited_factual_sentence_fails(bundle: AnswerBundle, strict: Policy) -> None:
    text = VALID + " Check the coolant level only when the engine is cold."
    r = validate_answer(bundle, make_llm_result(bundle, text), strict)
    assert r.validation_status == "FAILED"
    assert r.failure_reason == ReasonCode.UNCITED_FACTUAL_STATEMENT
    assert r.grounding_metrics.uncited_sentence_count == 1
    assert r.validated_answer_text == ""


def test_4_bad_refusal_fails(bundle: AnswerBundle, strict: Policy) -> None:
    text = "NO_EVIDENCE: the provided evidence does not contain sufficient information."
    r = validate_answer(bundle, make_llm_result(bundle, text), strict)
    assert r.validation_status == "FAILED"
    assert r.failure_reason == ReasonCode.INVALID_REFUSAL_FORMAT
    assert r.grounding_metrics.refusal_detected is True


def test_5_exact_refusal_passes(bundle: AnswerBundle, strict: Policy) -> None:
    text = strict.refusal.model_text
    r = validate_answer(bundle, make_llm_result(bundle, text), strict)
    assert r.validation_status == "PASSED"
    assert r.generation_status == "NO_EVIDENCE"
    assert r.validated_answer_text == text
    assert r.validated_citations == []
    assert r.grounding_metrics.refusal_detected is True


def test_exact_refusal_with_surrounding_whitespace_passes_unchanged(
    bundle: AnswerBundle, strict: Policy
) -> None:
    text = strict.refusal.model_text + "\n"
    r = validate_answer(bundle, make_llm_result(bundle, text), strict)
    assert (r.validation_status, r.validated_answer_text) == ("PASSED", text)


def test_generation_failed_keeps_llm_reason(bundle: AnswerBundle, strict: Policy) -> None:
    llm = make_llm_result(
        bundle, "", status=GenerationStatus.FAILED, failure_reason="LLM_RETRIES_EXHAUSTED"
    )
    r = validate_answer(bundle, llm, strict)
    assert r.failure_reason == ReasonCode.GENERATION_FAILED
    assert "LLM_RETRIES_EXHAUSTED" in r.message and "provider kept failing" in r.message


def test_no_evidence_assembly_with_skipped_llm_passes_with_policy_refusal(strict: Policy) -> None:
    b = make_answer_bundle([], status=AssemblyStatus.NO_EVIDENCE)
    llm = make_llm_result(b, "", status=GenerationStatus.NO_EVIDENCE, attempts=0)
    r = validate_answer(b, llm, strict)
    assert r.validation_status == "PASSED" and r.generation_status == "NO_EVIDENCE"
    assert r.validated_answer_text == strict.refusal.no_evidence_text


def test_no_evidence_assembly_rejects_any_other_answer(strict: Policy) -> None:
    b = make_answer_bundle([], status=AssemblyStatus.NO_EVIDENCE)
    r = validate_answer(b, make_llm_result(b, "Torque to 25 Nm."), strict)
    assert r.failure_reason == ReasonCode.INVALID_REFUSAL_FORMAT


def test_failed_assembly_fails_validation(strict: Policy) -> None:
    b = make_answer_bundle([], status=AssemblyStatus.FAILED)
    r = validate_answer(b, make_llm_result(b, VALID), strict)
    assert r.failure_reason == ReasonCode.ASSEMBLY_NOT_OK


def test_request_id_mismatch_fails_closed(bundle: AnswerBundle, strict: Policy) -> None:
    llm = make_llm_result(bundle, VALID).model_copy(update={"request_id": "other"})
    r = validate_answer(bundle, llm, strict)
    assert r.failure_reason == ReasonCode.INTERNAL_ERROR


def test_all_reason_codes_are_reported_in_priority_order(
    bundle: AnswerBundle, strict: Policy
) -> None:
    text = "Based on the provided context the pump runs at 3000 rpm [C99] [c0]. Coolant is blue."
    r = validate_answer(bundle, make_llm_result(bundle, text), strict)
    assert r.reason_codes == [
        "MALFORMED_CITATION",
        "INVALID_CITATION_REFERENCE",
        "META_COMMENTARY",
        "UNCITED_FACTUAL_STATEMENT",
        "UNSUPPORTED_NEW_FACT",
        "LOW_SUPPORT",
    ]
    assert r.failure_reason == "MALFORMED_CITATION"
    assert r.message.startswith("MALFORMED_CITATION: ")
