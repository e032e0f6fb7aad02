"""Build the one AuditRecord of a request, whatever path it took.

Paths: OK (bundle, prompt, llm, validation), model refusal, NO_EVIDENCE before any LLM call
(bundle only), FAILED assembly (bundle only, no prompt, no llm), exhausted retries (llm FAILED,
validation GENERATION_FAILED), and failures before any bundle (nothing but the response).

    >>> from citebound.policy import load_policy
    >>> from citebound.respond import package_failure
    >>> r = build_audit_record(policy=load_policy(), question="q?",
    ...     response=package_failure("req-1", "RETRIEVAL_FAILED", latency_ms=2.0))
    >>> (r.status.value, r.generation_status.value, r.failure_reason, r.hash_ok())
    ('FAILED', 'FAILED', 'RETRIEVAL_FAILED', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from citebound.contracts.assembly import AnswerBundle, PromptBuildResult
from citebound.contracts.audit import AuditConversation, AuditEvidence, AuditRecord
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import GenerationStatus, PublicStatus, ValidationStatus
from citebound.contracts.execution import (
    LLMExecutionResult,
    ModelCallRecord,
    ValidationResult,
)
from citebound.contracts.public import PublicResponse
from citebound.errors import ContractError
from citebound.policy import Policy
from citebound.respond.renumber import shown_of


def utc_now() -> str:
    """ISO 8601 UTC with microseconds and a `Z`, sortable as text."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _check_ids(response: PublicResponse, *others: object) -> None:
    ids = {response.request_id}
    ids |= {getattr(o, "request_id") for o in others if o is not None}  # noqa: B009
    if len(ids) != 1:
        raise ContractError(f"audit inputs belong to different requests: {sorted(ids)}")


def _generation_status(
    response: PublicResponse, llm: LLMExecutionResult | None, validation: ValidationResult | None
) -> GenerationStatus:
    if validation is not None:
        return validation.generation_status
    if llm is not None and llm.generation_status is GenerationStatus.FAILED:
        return GenerationStatus.FAILED
    if response.status is PublicStatus.NO_EVIDENCE:
        return GenerationStatus.NO_EVIDENCE
    return GenerationStatus.FAILED


def _answer_calls(
    prompt: PromptBuildResult | None,
    llm: LLMExecutionResult | None,
    validation: ValidationResult | None,
) -> list[ModelCallRecord]:
    """`model_calls` of a caller that ran the single answer call itself (no stage calls, no
    regeneration): that call, judged, or nothing when no model was called."""
    if llm is None or llm.attempts == 0:
        return []
    call = ModelCallRecord.of("answer", llm, prompt.template_id if prompt is not None else None)
    return [call.judged(validation) if validation is not None else call]


def _display_anchors(
    response: PublicResponse,
    bundle: AnswerBundle | None,
    validation: ValidationResult | None,
    shown: Mapping[str, str] | None,
) -> dict[str, str] | None:
    """Prompt anchor -> shown anchor of an answer the reader saw (None otherwise): the mapping
    packaging applied (`shown`, from `respond.package_answer`), or, when the caller did not
    pass it, the same function of `validated_citations` (respond/renumber.py)."""
    if response.status is not PublicStatus.OK or bundle is None or validation is None:
        return None
    return dict(shown) if shown is not None else shown_of(bundle, validation)


def build_audit_record(
    *,
    policy: Policy,
    response: PublicResponse,
    question: str,
    bundle: AnswerBundle | None = None,
    prompt: PromptBuildResult | None = None,
    llm: LLMExecutionResult | None = None,
    validation: ValidationResult | None = None,
    run_id: str | None = None,
    timestamp_utc: str | None = None,
    embedding_model: str | None = None,
    index_version: str | None = None,
    store_prompt_text: bool = False,
    store_evidence_text: bool = False,
    model_calls: Sequence[ModelCallRecord] | None = None,
    conversation: AuditConversation | None = None,
    display_anchors: Mapping[str, str] | None = None,
) -> AuditRecord:
    """The audit record of one request, hashed.

    Args:
        policy: the policy the request ran under (version and fingerprint are recorded).
        response: the PublicResponse returned to the caller (status, latency).
        question: the user question as asked.
        bundle, prompt, llm, validation: stage results, None for stages that did not run.
        run_id: defaults to the bundle trace's run_id.
        timestamp_utc: defaults to now.
        embedding_model, index_version: used when there is no bundle trace.
        store_prompt_text: keep the exact prompt text (otherwise only its sha256).
        store_evidence_text: keep the sanitized evidence texts (enables offline replay).
        model_calls: every model call of the request in order (the pipeline's); None means
            the one answer call of `llm`, if it made any.
        conversation: the earlier turns and the follow-up rewrite (None without history).
        display_anchors: the shown anchors of an OK answer, as `respond.package_answer`
            returned them; derived from `validation` when None.

    Raises:
        ContractError: when the inputs belong to different request ids.
    """
    _check_ids(response, bundle, prompt, llm, validation)
    trace = bundle.trace if bundle is not None else None
    evidence = bundle.selected_evidence if bundle is not None else []
    metrics = validation.grounding_metrics if validation is not None else None
    passed = validation is not None and validation.validation_status is ValidationStatus.PASSED
    prompt_sha = (prompt.prompt_sha256 if prompt is not None else "") or (
        llm.prompt_sha256 if llm is not None else ""
    )
    evidence_chars = 0
    if bundle is not None:
        evidence_chars = len(bundle.evidence_block_text) or sum(
            len(e.sanitized_text) for e in evidence
        )
    failure_reason = response.failure_reason
    reason_codes: list[str] = []
    if validation is not None:
        failure_reason = validation.failure_reason
        reason_codes = list(validation.reason_codes)
        model_called = llm is not None and llm.attempts > 0
        if passed and response.status is PublicStatus.FAILED and response.failure_reason:
            # A passed answer the packaging refused (its renumbered text did not validate the
            # same, respond/renumber.py): the reason is the response's.
            failure_reason = response.failure_reason
            reason_codes = [failure_reason]
        if not model_called and response.failure_reason is not None:
            # Failed before any model call (QUESTION_EMPTY, QUESTION_TOO_LONG ...): recorded
            # with the reason its response gave, not the GENERATION_FAILED of a validation
            # that had no model text to judge.
            failure_reason = response.failure_reason
            if failure_reason not in reason_codes:
                reason_codes.insert(0, failure_reason)
    record = AuditRecord(
        request_id=response.request_id,
        run_id=run_id if run_id is not None else (trace.run_id if trace else None),
        timestamp_utc=timestamp_utc or utc_now(),
        status=response.status,
        assembly_status=bundle.assembly_status if bundle is not None else None,
        generation_status=_generation_status(response, llm, validation),
        llm_generation_status=llm.generation_status if llm is not None else None,
        validation_status=validation.validation_status if validation is not None else None,
        failure_reason=failure_reason,
        reason_codes=reason_codes,
        llm_failure_reason=llm.failure_reason if llm is not None else None,
        citation_count=metrics.citation_count if metrics else 0,
        uncited_sentence_count=metrics.uncited_sentence_count if metrics else 0,
        invalid_anchor_count=metrics.invalid_anchor_count if metrics else 0,
        suspicious_new_ids=list(metrics.suspicious_new_ids) if metrics else [],
        refusal_detected=metrics.refusal_detected if metrics else False,
        length_ratio_flag=metrics.length_ratio_flag if metrics else False,
        attribution_coverage=metrics.attribution_coverage if metrics else None,
        min_support=metrics.min_support if metrics else None,
        low_confidence=metrics.low_confidence if metrics else False,
        unsupported_sentences=list(metrics.unsupported_sentences) if metrics else None,
        model_calls=(
            list(model_calls) if model_calls is not None else _answer_calls(prompt, llm, validation)
        ),
        validated_citations=list(validation.validated_citations) if validation else [],
        validated_answer_text=validation.validated_answer_text if passed and validation else None,
        raw_model_text=llm.raw_model_text if llm is not None and llm.attempts > 0 else None,
        model_name=llm.model_name if llm is not None else None,
        provider=llm.provider if llm is not None else None,
        response_id=llm.response_id if llm is not None else None,
        embedding_model=trace.embedding_model if trace else embedding_model,
        index_version=trace.index_version if trace else index_version,
        reranker=trace.reranker if trace else None,
        conversation=conversation,
        display_anchors=_display_anchors(response, bundle, validation, display_anchors),
        policy_version=policy.policy_version,
        policy_fingerprint=policy.fingerprint,
        validator_version=validation.validator_version if validation is not None else None,
        citation_style=bundle.citation_style if bundle is not None else None,
        prompt_sha256=prompt_sha or None,
        template_id=prompt.template_id if prompt is not None else None,
        anchor_map=dict(bundle.anchor_map) if bundle is not None else {},
        evidence=[
            AuditEvidence(
                anchor=e.citation_anchor,
                chunk_id=e.chunk_id,
                knowledge_id=e.knowledge_id,
                rank=e.rank,
                similarity_score=e.similarity_score,
                text_sha256=sha256_hex(e.sanitized_text),
            )
            for e in evidence
        ],
        evidence_chars=evidence_chars,
        evidence_texts=[e.sanitized_text for e in evidence] if store_evidence_text else None,
        attempts=llm.attempts if llm is not None else 0,
        llm_latency_ms=llm.llm_latency_ms if llm is not None else None,
        latency_ms=response.latency_ms,
        prompt_tokens=response.token_usage.prompt,
        completion_tokens=response.token_usage.completion,
        total_tokens=response.token_usage.total,
        question=question,
        prompt_text=(prompt.prompt_text or None) if store_prompt_text and prompt else None,
    )
    return record.model_copy(update={"record_hash": record.compute_hash()})
