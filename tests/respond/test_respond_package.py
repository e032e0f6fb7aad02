"""Seed 001 R6 packaging rules, status by status."""

from __future__ import annotations

from respond_samples import OK_TEXT, POLICY, SHOWN_TEXT, bundle, every_status

from citebound.contracts.enums import GenerationStatus, PublicStatus, ValidationStatus
from citebound.contracts.execution import GroundingMetrics, ValidationResult
from citebound.respond import package_failure, package_response
from citebound.testing.bundles import make_llm_result


def test_ok_maps_validated_citations_in_their_order() -> None:
    _, r = every_status()["ok"]
    assert r.status is PublicStatus.OK
    # The model cited C2 then C0; the reader sees C0 then C1, sources in that order.
    assert OK_TEXT.index("[C2]") < OK_TEXT.index("[C0]")
    assert r.answer == SHOWN_TEXT
    assert [c.anchor for c in r.citations] == ["C0", "C1"]
    assert r.citations[0].knowledge_id == "kb-2"
    c0 = r.citations[1]
    assert (c0.knowledge_id, c0.document, c0.heading_path, c0.page) == (
        "kb-0",
        "manual-0.pdf",
        ["Pump", "Section 1"],
        2,
    )
    assert c0.source_reference == "manual-0.pdf > Pump > Section 1, p. 2"
    assert (c0.event_date, c0.equipment_id) == ("2024-05-01", "PUMP-7")
    assert (r.token_usage.prompt, r.token_usage.completion, r.token_usage.total) == (300, 40, 340)
    assert r.latency_ms == 42.0 and r.failure_reason is None


def test_a_validation_that_does_not_match_its_text_fails_closed() -> None:
    """Citations the text does not carry (C1, C9): the renumbered text validates differently
    from the result it came from, so nothing is shown."""
    b = bundle()
    llm = make_llm_result(b, OK_TEXT)
    v = ValidationResult(
        request_id=b.request_id,
        generation_status=GenerationStatus.OK,
        validation_status=ValidationStatus.PASSED,
        validated_answer_text=OK_TEXT,
        validated_citations=["C1", "C9", "C0"],
        grounding_metrics=GroundingMetrics(
            citation_count=3,
            uncited_sentence_count=0,
            invalid_anchor_count=0,
            refusal_detected=False,
            length_ratio_flag=False,
        ),
        validator_version="test",
    )
    r = package_response(b, llm, v, policy=POLICY, latency_ms=1.0)
    assert (r.status, r.answer, r.citations) == (PublicStatus.FAILED, "", [])
    assert r.failure_reason == "INTERNAL_ERROR"


def test_failed_validation_packages_empty() -> None:
    for name in ("rejected", "llm_failed"):
        _, r = every_status()[name]
        assert r.status is PublicStatus.FAILED
        assert (r.answer, r.citations) == ("", [])
        assert r.token_usage.total == 340
        assert r.latency_ms == 42.0
    assert every_status()["rejected"][1].failure_reason == "INVALID_CITATION_REFERENCE"
    assert every_status()["llm_failed"][1].failure_reason == "GENERATION_FAILED"


def test_latency_defaults_to_llm_latency() -> None:
    b = bundle()
    llm = make_llm_result(b, OK_TEXT + " [C9]")
    from citebound.validate import validate_answer

    r = package_response(b, llm, validate_answer(b, llm, POLICY), policy=POLICY)
    assert r.latency_ms == llm.llm_latency_ms


def test_model_refusal_is_no_evidence_with_exact_text() -> None:
    _, r = every_status()["model_refusal"]
    assert r.status is PublicStatus.NO_EVIDENCE
    assert r.answer == POLICY.refusal.model_text and r.citations == []
    assert r.token_usage.total == 340


def test_gate_refusal_uses_policy_text_without_tokens() -> None:
    _, r = every_status()["gate"]
    assert r.status is PublicStatus.NO_EVIDENCE
    assert r.answer == POLICY.refusal.no_evidence_text
    assert (r.token_usage.prompt, r.token_usage.total, r.latency_ms) == (None, None, 3.0)


def test_assembly_failure_and_early_failure() -> None:
    _, r = every_status()["assembly"]
    assert (r.status, r.answer, r.failure_reason) == (
        PublicStatus.FAILED,
        "",
        "RETRIEVAL_NO_EVIDENCE",
    )
    early = package_failure("req-9", "RETRIEVAL_FAILED", latency_ms=1.5)
    assert (early.status, early.failure_reason) == (PublicStatus.FAILED, "RETRIEVAL_FAILED")


def test_mismatched_request_ids_fail_closed() -> None:
    b = bundle()
    llm = make_llm_result(b, OK_TEXT)
    from citebound.validate import validate_answer

    v = validate_answer(b, llm, POLICY).model_copy(update={"request_id": "other"})
    r = package_response(b, llm, v, policy=POLICY, latency_ms=1.0)
    assert (r.status, r.answer, r.failure_reason) == (PublicStatus.FAILED, "", "INTERNAL_ERROR")


def test_low_confidence_flows_from_validation_to_text() -> None:
    from citebound.contracts.enums import CitationStyle
    from citebound.policy import load_policy
    from citebound.respond import render_text
    from citebound.testing.bundles import make_answer_bundle
    from citebound.validate import validate_answer

    hybrid = load_policy("hybridrag")
    b = make_answer_bundle(["Torque the M8 bolts to 25 Nm."], style=CitationStyle.S, policy=hybrid)
    llm = make_llm_result(b, "Engines are marvellous machines built by people [S1].")
    r = package_response(b, llm, validate_answer(b, llm, hybrid), policy=hybrid, latency_ms=1.0)
    assert r.status is PublicStatus.OK and r.low_confidence is True
    assert render_text(r).startswith("Answer (LOW CONFIDENCE")
