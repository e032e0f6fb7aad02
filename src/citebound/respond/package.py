"""R6 response packaging: internal results in, the stable `PublicResponse` out.

The public response: docs/validation.md#public-response.

Rules:

- FAILED: validation_status is not PASSED -> status FAILED, answer "", citations [], token
  usage from the LLM result, latency.
- NO_EVIDENCE: generation_status NO_EVIDENCE and validation PASSED -> the validated refusal text,
  citations [], token usage and latency.
- OK: the validated answer; citations map validated_citations (in that order) to the bundle's
  selected evidence; anchors missing from the bundle are left out.

Anchors are shown in the order the answer cites them (issue #15, `respond/renumber.py`): the
answer text and the citations carry `C0`, `C1`, ... in first-citation order, whatever labels
the prompt gave the evidence; the renamed text is validated again and packaged as FAILED
(INTERNAL_ERROR) if its verdict differs in anything.

A public citation carries anchor, knowledge_id, source_reference, document, heading path, page,
event_date and equipment_id. Never chunk text, scores, prompts or chunk ids.

    >>> from citebound.testing.bundles import make_answer_bundle, make_llm_result
    >>> from citebound.validate import validate_answer
    >>> from citebound.policy import load_policy
    >>> b = make_answer_bundle(["Torque the bolts to 40 Nm."])
    >>> llm = make_llm_result(b, "Torque the bolts to 40 Nm [C0].")
    >>> p = load_policy()
    >>> r = package_response(b, llm, validate_answer(b, llm, p), policy=p, latency_ms=5.0)
    >>> (r.status.value, [c.anchor for c in r.citations])
    ('OK', ['C0'])
"""

from __future__ import annotations

from dataclasses import dataclass

from citebound.contracts.assembly import AnswerBundle, SelectedEvidence
from citebound.contracts.enums import (
    AssemblyStatus,
    GenerationStatus,
    PublicStatus,
    ReasonCode,
    ValidationStatus,
)
from citebound.contracts.execution import LLMExecutionResult, ValidationResult
from citebound.contracts.public import PublicCitation, PublicResponse, TokenUsage
from citebound.policy import Policy
from citebound.respond.renumber import RenumberError, renumber
from citebound.validate.validator import view_mismatch
from citebound.validate.view import EvidenceView


def public_citation(evidence: SelectedEvidence, anchor: str | None = None) -> PublicCitation:
    """The public view of one selected chunk (its anchor, source and location), under
    the label shown to the reader (`anchor`, default the prompt's)."""
    source = evidence.source
    return PublicCitation(
        anchor=evidence.citation_anchor if anchor is None else anchor,
        knowledge_id=evidence.knowledge_id,
        source_reference=evidence.source_reference,
        document=source.document if source is not None else None,
        source_path=source.source_path if source is not None else None,
        heading_path=list(source.heading_path) if source is not None else [],
        page=source.page if source is not None else None,
        ocr=source.ocr if source is not None else False,
        event_date=evidence.event_date,
        equipment_id=evidence.equipment_id,
    )


def token_usage(llm: LLMExecutionResult | None) -> TokenUsage:
    """Token usage reported by the provider (all None when the LLM was not called)."""
    if llm is None:
        return TokenUsage()
    return TokenUsage(
        prompt=llm.prompt_tokens_actual,
        completion=llm.completion_tokens_actual,
        total=llm.total_tokens_actual,
    )


def _failed(
    request_id: str, reason: str | None, usage: TokenUsage, latency_ms: float
) -> PublicResponse:
    return PublicResponse(
        request_id=request_id,
        status=PublicStatus.FAILED,
        answer="",
        citations=[],
        token_usage=usage,
        latency_ms=latency_ms,
        failure_reason=reason or ReasonCode.INTERNAL_ERROR.value,
    )


@dataclass(frozen=True)
class Packaged:
    """A packaged answer and the anchors its reader saw: `display_anchors` maps each cited
    prompt anchor to its shown label, first-citation order (`Renumbered.shown`), for an OK
    response; None for any other. The audit record keeps exactly this mapping."""

    response: PublicResponse
    display_anchors: dict[str, str] | None = None


def package_answer(
    bundle: AnswerBundle,
    llm: LLMExecutionResult,
    validation: ValidationResult,
    *,
    policy: Policy,
    latency_ms: float | None = None,
    view: EvidenceView | None = None,
) -> Packaged:
    """Package a validated (or rejected) answer for the public, with its shown anchors.

    Args:
        bundle: the AnswerBundle the prompt was built from (citation metadata).
        llm: the execution result (token usage; latency when `latency_ms` is None).
        validation: the R5 result; only PASSED answers reach the public.
        policy: the policy `validation` was made with (the renumbered text is validated again).
        latency_ms: end-to-end latency to report; defaults to the LLM latency.
        view: `EvidenceView.from_bundle(bundle)` when the caller has it already (the one the
            answer was validated against); built here otherwise. A view of anything else
            packages as FAILED (INTERNAL_ERROR, `validate.validator.view_mismatch`).

    Returns:
        The response and its shown anchors; never raises for inconsistent inputs (they
        package as FAILED).
    """
    usage = token_usage(llm)
    latency = llm.llm_latency_ms if latency_ms is None else latency_ms

    def internal_error() -> Packaged:
        return Packaged(
            _failed(validation.request_id, ReasonCode.INTERNAL_ERROR.value, usage, latency)
        )

    ids = {bundle.request_id, llm.request_id, validation.request_id}
    if len(ids) != 1:
        return internal_error()
    if validation.validation_status is not ValidationStatus.PASSED:
        return Packaged(_failed(validation.request_id, validation.failure_reason, usage, latency))
    if validation.generation_status is GenerationStatus.NO_EVIDENCE:
        refusal = PublicResponse(
            request_id=validation.request_id,
            status=PublicStatus.NO_EVIDENCE,
            answer=validation.validated_answer_text,
            citations=[],
            token_usage=usage,
            latency_ms=latency,
        )
        return Packaged(refusal)
    if validation.generation_status is not GenerationStatus.OK:
        return internal_error()
    if view is None:
        view = EvidenceView.from_bundle(bundle)
    elif view_mismatch(view, bundle) is not None:  # a view of other evidence: fail closed
        return internal_error()
    try:
        shown = renumber(view, validation, policy)
    except RenumberError:
        return internal_error()
    by_anchor = {e.citation_anchor: e for e in bundle.selected_evidence}
    # renumber() raised unless every cited anchor is evidence of this bundle.
    citations = [
        public_citation(by_anchor[a], label)
        for a, label in zip(validation.validated_citations, shown.citations, strict=True)
    ]
    response = PublicResponse(
        request_id=validation.request_id,
        status=PublicStatus.OK,
        answer=shown.text,
        citations=citations,
        token_usage=usage,
        latency_ms=latency,
        low_confidence=validation.grounding_metrics.low_confidence,
        confidence=validation.grounding_metrics.confidence,
    )
    return Packaged(response, dict(shown.shown))


def package_response(
    bundle: AnswerBundle,
    llm: LLMExecutionResult,
    validation: ValidationResult,
    *,
    policy: Policy,
    latency_ms: float | None = None,
) -> PublicResponse:
    """Package a validated (or rejected) answer for the public: `package_answer`'s response
    (see there). Never raises for inconsistent inputs (they package as FAILED)."""
    return package_answer(bundle, llm, validation, policy=policy, latency_ms=latency_ms).response


def package_without_generation(
    bundle: AnswerBundle, policy: Policy, *, latency_ms: float
) -> PublicResponse:
    """Package a request that never reached the model (gate/assembly NO_EVIDENCE or FAILED).

    NO_EVIDENCE answers with `policy.refusal.no_evidence_text`; FAILED carries the assembly's
    reason code. An OK bundle is a caller error and packages as FAILED (INTERNAL_ERROR).
    """
    if bundle.assembly_status is AssemblyStatus.NO_EVIDENCE:
        return PublicResponse(
            request_id=bundle.request_id,
            status=PublicStatus.NO_EVIDENCE,
            answer=policy.refusal.no_evidence_text,
            citations=[],
            token_usage=TokenUsage(),
            latency_ms=latency_ms,
        )
    reason = bundle.failure_reason if bundle.assembly_status is AssemblyStatus.FAILED else None
    return _failed(bundle.request_id, reason, TokenUsage(), latency_ms)


def package_failure(request_id: str, reason: str, *, latency_ms: float) -> PublicResponse:
    """Package a request that failed before any AnswerBundle existed (e.g. retrieval error)."""
    return _failed(request_id, reason, TokenUsage(), latency_ms)
