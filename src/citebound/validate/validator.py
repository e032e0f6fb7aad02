"""R5 post-generation validation: pass or fail the model's answer, never rewrite it.

The validator is a firewall (R5). It calls no model, reads the answer and the evidence
it was allowed to cite, and returns a `ValidationResult`:

- PASSED + generation_status OK: a cited answer; `validated_answer_text` is the raw text.
- PASSED + generation_status NO_EVIDENCE: the exact refusal string of the policy.
- FAILED + generation_status FAILED: `validated_answer_text` is empty; `failure_reason` is the
  highest-priority reason code found (order: `PRIORITY`), `reason_codes` lists all of them.

Example::

    >>> from citebound.policy import load_policy
    >>> r = validate_view(EvidenceView.single("C0", "Torque the bolts to 40 Nm."),
    ...                   "Torque the bolts to 40 Nm [C0].", load_policy("strict-v1"))
    >>> (r.validation_status.value, r.validated_citations)
    ('PASSED', ['C0'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.enums import (
    AssemblyStatus,
    GenerationStatus,
    ReasonCode,
    ValidationStatus,
)
from citebound.contracts.execution import GroundingMetrics, LLMExecutionResult, ValidationResult
from citebound.policy import Policy
from citebound.validate.analysis import Analysis, analyse
from citebound.validate.view import EvidenceView

VALIDATOR_VERSION = "r5-v6"

# failure_reason is the first code of this list that was found.
PRIORITY: tuple[ReasonCode, ...] = (
    ReasonCode.GENERATION_FAILED,
    ReasonCode.ASSEMBLY_NOT_OK,
    ReasonCode.INTERNAL_ERROR,
    ReasonCode.EMPTY_ANSWER,
    ReasonCode.INVALID_REFUSAL_FORMAT,
    ReasonCode.MALFORMED_CITATION,
    ReasonCode.INVALID_CITATION_REFERENCE,
    ReasonCode.CITATION_MISMATCH,
    ReasonCode.INTERNAL_ID_LEAK,
    ReasonCode.META_COMMENTARY,
    ReasonCode.INJECTION_ECHO,
    ReasonCode.UNCITED_FACTUAL_STATEMENT,
    ReasonCode.UNSUPPORTED_NEW_FACT,
    ReasonCode.LOW_SUPPORT,
)


def _confidence(a: Analysis, policy: Policy) -> Literal["high", "medium", "low"]:
    """Weakest sentence decides: below the floor (tolerated) low, at or above
    `high_confidence_support` high, otherwise medium."""
    if a.low_confidence:
        return "low"
    weakest = min(a.support) if a.support else 0.0
    return "high" if weakest + 1e-9 >= policy.validation.high_confidence_support else "medium"


def _metrics(a: Analysis | None, *, refusal: bool = False) -> GroundingMetrics:
    if a is None:
        return GroundingMetrics(
            citation_count=0,
            uncited_sentence_count=0,
            invalid_anchor_count=0,
            refusal_detected=refusal,
            length_ratio_flag=False,
        )
    return GroundingMetrics(
        citation_count=a.citation_count,
        uncited_sentence_count=a.uncited,
        invalid_anchor_count=len(a.invalid),
        malformed_citation_count=len(a.malformed),
        refusal_detected=a.refusal_like or refusal,
        length_ratio_flag=a.length_flag,
        suspicious_new_ids=list(a.suspicious),
        sentence_count=a.factual,
        attribution_coverage=a.coverage,
        min_support=min(a.support) if a.support else None,
        mean_support=sum(a.support) / len(a.support) if a.support else None,
        sentence_support=list(a.support),
        low_confidence=a.low_confidence,
        unsupported_sentences=list(a.unsupported),
    )


def _passed(
    view: EvidenceView,
    text: str,
    status: GenerationStatus,
    metrics: GroundingMetrics,
    cites: list[str],
) -> ValidationResult:
    return ValidationResult(
        request_id=view.request_id,
        generation_status=status,
        validation_status=ValidationStatus.PASSED,
        validated_answer_text=text,
        validated_citations=cites,
        grounding_metrics=metrics,
        validator_version=VALIDATOR_VERSION,
    )


def _failed(
    view: EvidenceView, problems: Mapping[ReasonCode, str], metrics: GroundingMetrics
) -> ValidationResult:
    codes = [c for c in PRIORITY if c in problems]
    return ValidationResult(
        request_id=view.request_id,
        generation_status=GenerationStatus.FAILED,
        validation_status=ValidationStatus.FAILED,
        failure_reason=codes[0].value,
        reason_codes=[c.value for c in codes],
        message="; ".join(f"{c.value}: {problems[c]}" for c in codes),
        validated_answer_text="",
        validated_citations=[],
        grounding_metrics=metrics,
        validator_version=VALIDATOR_VERSION,
    )


def validate_view(
    view: EvidenceView,
    raw_text: str,
    policy: Policy,
    *,
    generation_status: GenerationStatus = GenerationStatus.OK,
    llm_reason: str | None = None,
    llm_message: str = "",
) -> ValidationResult:
    """Validate `raw_text` against `view`. Never raises, never edits the text."""
    try:
        return _validate(view, raw_text, policy, generation_status, llm_reason, llm_message)
    except Exception as err:  # fail closed: a validator bug must not let an answer through
        problem = {ReasonCode.INTERNAL_ERROR: f"validator error {type(err).__name__}: {err}"}
        return _failed(view, problem, _metrics(None))


def _validate(
    view: EvidenceView,
    raw_text: str,
    policy: Policy,
    generation_status: GenerationStatus,
    llm_reason: str | None,
    llm_message: str,
) -> ValidationResult:
    if generation_status is GenerationStatus.FAILED:
        why = f"the model call failed ({llm_reason or 'no reason given'})"
        if llm_message:
            why += f": {llm_message}"
        return _failed(view, {ReasonCode.GENERATION_FAILED: why}, _metrics(None))
    if view.assembly_status is AssemblyStatus.FAILED:
        why = f"assembly FAILED ({view.assembly_reason or 'no reason given'}); nothing to validate"
        return _failed(view, {ReasonCode.ASSEMBLY_NOT_OK: why}, _metrics(None))

    refusals = (policy.refusal.model_text, policy.refusal.no_evidence_text)
    stripped = raw_text.strip()
    if stripped in refusals:
        # Exact refusal (surrounding whitespace allowed, text kept byte for byte).
        return _passed(
            view, raw_text, GenerationStatus.NO_EVIDENCE, _metrics(None, refusal=True), []
        )
    if view.assembly_status is AssemblyStatus.NO_EVIDENCE:
        if not stripped and generation_status is GenerationStatus.NO_EVIDENCE:
            # The LLM was skipped (then the refusal string is the only allowed response).
            text = policy.refusal.no_evidence_text
            return _passed(
                view, text, GenerationStatus.NO_EVIDENCE, _metrics(None, refusal=True), []
            )
        why = "assembly found no evidence; the only allowed answer is the exact refusal string"
        return _failed(view, {ReasonCode.INVALID_REFUSAL_FORMAT: why}, _metrics(None))
    if not stripped:
        return _failed(
            view, {ReasonCode.EMPTY_ANSWER: "the model returned no text"}, _metrics(None)
        )

    a = analyse(view, raw_text, policy, refusals)
    metrics = _metrics(a)
    if a.problems:
        return _failed(view, a.problems, metrics)
    metrics = metrics.model_copy(update={"confidence": _confidence(a, policy)})
    return _passed(view, raw_text, GenerationStatus.OK, metrics, list(a.citations))


def view_mismatch(view: EvidenceView, bundle: AnswerBundle) -> str | None:
    """Why `view` is not the view of `bundle` (`EvidenceView.from_bundle`), or None.

    `validate_answer` and `respond.package_answer` take a view the caller built once; one of
    another bundle (or of the same bundle before a change) would validate the answer against
    other evidence, so it fails closed instead. Compares what `from_bundle` derives from the
    evidence: request id, status, style, anchors, chunk ids and texts (no projection, cheap).
    """
    evidence = bundle.selected_evidence
    if view.request_id != bundle.request_id:
        return f"evidence view of request {view.request_id!r}, bundle of {bundle.request_id!r}"
    if (view.assembly_status, view.citation_style) != (
        bundle.assembly_status,
        bundle.citation_style,
    ):
        return "evidence view and bundle differ in assembly status or citation style"
    if view.anchors != tuple(e.citation_anchor for e in evidence) or view.chunk_ids != tuple(
        e.chunk_id for e in evidence
    ):
        return "evidence view and bundle cite different evidence"
    if len(view.texts) != len(evidence) or any(
        view.texts.get(e.citation_anchor) != e.sanitized_text for e in evidence
    ):
        return "evidence view and bundle hold different evidence texts"
    return None


def validate_answer(
    bundle: AnswerBundle,
    llm: LLMExecutionResult,
    policy: Policy,
    *,
    view: EvidenceView | None = None,
) -> ValidationResult:
    """Validate the model output of `llm` against the evidence of `bundle` (R5).

    Args:
        bundle: the AnswerBundle the prompt was built from (allowed anchors, evidence text).
        llm: the execution result; its `raw_model_text` is validated as is.
        policy: refusal strings and validation knobs (`policy.validation`).
        view: `EvidenceView.from_bundle(bundle)` when the caller has it (the pipeline builds
            it once per request); built here otherwise. A view of anything else fails the
            answer (INTERNAL_ERROR, `view_mismatch`).

    Returns:
        A ValidationResult; never raises.
    """
    if view is not None:
        wrong = view_mismatch(view, bundle)
        if wrong is not None:
            own = EvidenceView.from_bundle(bundle)
            return _failed(own, {ReasonCode.INTERNAL_ERROR: wrong}, _metrics(None))
    else:
        view = EvidenceView.from_bundle(bundle)
    if llm.request_id != bundle.request_id:
        why = f"llm result is for request {llm.request_id!r}, bundle for {bundle.request_id!r}"
        return _failed(view, {ReasonCode.INTERNAL_ERROR: why}, _metrics(None))
    return validate_view(
        view,
        llm.raw_model_text,
        policy,
        generation_status=llm.generation_status,
        llm_reason=llm.failure_reason,
        llm_message=llm.message,
    )


def validate_text(bundle: AnswerBundle, text: str, policy: Policy) -> ValidationResult:
    """Validate a raw answer text (as if the model returned it with status OK)."""
    return validate_view(EvidenceView.from_bundle(bundle), text, policy)
