"""LLM execution (R4) and post-generation validation (R5) contracts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.enums import GenerationStatus, ValidationStatus


class LLMExecutionResult(Contract):
    """What happened when the frozen prompt was sent (R4)."""

    request_id: str = Field(description="Request id.")
    provider: str = Field(description="Provider name: openai, ollama, extractive.")
    model_name: str = Field(description="Model identity as configured; never switched.")
    prompt_sha256: str = Field(description="sha256 of the prompt bytes sent.")
    generation_status: GenerationStatus = Field(description="OK, FAILED or NO_EVIDENCE.")
    failure_reason: str | None = Field(default=None, description="LLM_* reason code if FAILED.")
    message: str = Field(default="", description="Actionable explanation if FAILED.")
    raw_model_text: str = Field(default="", description="Model output, unparsed and unedited.")
    finish_reason: str | None = Field(default=None, description="Provider finish reason.")
    attempts: int = Field(ge=0, description="Calls made, 0 when skipped.")
    llm_latency_ms: float = Field(ge=0, description="Wall time over all attempts.")
    response_id: str | None = Field(default=None, description="Provider response id.")
    prompt_tokens_actual: int | None = Field(default=None, description="Reported by provider.")
    completion_tokens_actual: int | None = Field(default=None, description="Reported by provider.")
    total_tokens_actual: int | None = Field(default=None, description="Reported by provider.")
    temperature: float = Field(description="Temperature sent (policy).")
    max_output_tokens: int = Field(description="Output-token cap sent (policy).")


class UnsupportedSentence(Contract):
    """A cited sentence the support check rejected (audit only, never in the public response)."""

    index: int = Field(ge=0, description="0-based index among the answer's factual sentences.")
    score: float = Field(description="Support score in [0, 1] (validate/support.py).")
    coverage: float = Field(description="Share of its content words found in cited evidence.")
    reason: str = Field(description="Why: low coverage, missing names, polarity flip.")
    best_evidence_span: str = Field(description="The cited evidence sentence closest to it.")


class GroundingMetrics(Contract):
    """R5 grounding metrics plus attribution coverage and support (docs/validation.md)."""

    citation_count: int = Field(description="Citation markers found (with repeats).")
    uncited_sentence_count: int = Field(description="Factual sentences without a citation.")
    invalid_anchor_count: int = Field(description="Markers outside the allowed anchor set.")
    malformed_citation_count: int = Field(default=0, description="Near-miss markers like [c0].")
    refusal_detected: bool = Field(description="The answer is (or contains) a refusal.")
    length_ratio_flag: bool = Field(description="Answer longer than N x evidence (flag only).")
    suspicious_new_ids: list[str] = Field(
        default_factory=list, description="Numbers/dates/codes absent from cited evidence."
    )
    sentence_count: int = Field(default=0, description="Sentences considered.")
    attribution_coverage: float = Field(default=0.0, description="Cited / total sentences.")
    min_support: float | None = Field(default=None, description="Lowest sentence support.")
    mean_support: float | None = Field(default=None, description="Mean sentence support.")
    sentence_support: list[float] = Field(default_factory=list, description="Per sentence.")
    low_confidence: bool = Field(default=False, description="Support below the policy floor.")
    confidence: Literal["high", "medium", "low"] | None = Field(
        default=None,
        description="From the weakest sentence's support: high (>= policy "
        "high_confidence_support), medium (passed the floor), low (low_confidence).",
    )
    unsupported_sentences: list[UnsupportedSentence] = Field(
        default_factory=list, description="Cited sentences below the support floor (audit)."
    )


class ValidationResult(Contract):
    """Frozen R5 output schema."""

    request_id: str = Field(description="Request id.")
    generation_status: GenerationStatus = Field(description="OK, FAILED or NO_EVIDENCE.")
    validation_status: ValidationStatus = Field(description="PASSED or FAILED.")
    failure_reason: str | None = Field(default=None, description="First reason code.")
    reason_codes: list[str] = Field(default_factory=list, description="All reason codes found.")
    message: str = Field(default="", description="Actionable explanation.")
    validated_answer_text: str = Field(
        default="", description="The answer, unmodified; empty if FAILED."
    )
    validated_citations: list[str] = Field(
        default_factory=list, description="Anchors, first-use order."
    )
    grounding_metrics: GroundingMetrics = Field(description="Metrics.")
    validator_version: str = Field(description="Validator version, for replay comparisons.")


class SentenceFailure(Contract):
    """One rule an answer broke, located: the sentence the validator rejected and its code.

    What a regeneration prompt may name: the index and the reason code, nothing the validator
    withholds from the caller (no scores, no evidence spans, no answer text)."""

    index: int | None = Field(
        ge=0,
        description="0-based index among the answer's factual sentences (as in "
        "UnsupportedSentence.index); None when the rule concerns the whole answer.",
    )
    reason_code: str = Field(description="The R5 reason code, e.g. LOW_SUPPORT.")


class ModelCallRecord(Contract):
    """One model call of a request (one exact-bytes prompt through `llm.execute`), for the
    audit record's `model_calls`. Transient retries of the same bytes are `attempts` of one
    call; a regeneration is a call of its own, with its own prompt hash."""

    stage: str = Field(
        description="What the call was for: answer, regenerate, or an LLM stage (a0, a2, "
        "rewrite, a3, a4, a5)."
    )
    template_id: str | None = Field(default=None, description="Prompt template id.")
    prompt_sha256: str = Field(description="sha256 of the exact prompt bytes sent.")
    provider: str = Field(description="Provider name.")
    model_name: str = Field(description="Model identity as configured.")
    generation_status: GenerationStatus = Field(description="What the execution layer returned.")
    failure_reason: str | None = Field(default=None, description="LLM_* reason code if FAILED.")
    attempts: int = Field(ge=0, description="Provider calls made for these bytes (retries).")
    llm_latency_ms: float = Field(ge=0, description="Wall time over its attempts.")
    response_id: str | None = Field(default=None, description="Provider response id.")
    finish_reason: str | None = Field(default=None, description="Provider finish reason.")
    raw_output: str = Field(default="", description="Model output, unparsed and unedited.")
    prompt_tokens: int | None = Field(default=None, description="Reported by the provider.")
    completion_tokens: int | None = Field(default=None, description="Reported by the provider.")
    total_tokens: int | None = Field(default=None, description="Reported by the provider.")
    validation_status: ValidationStatus | None = Field(
        default=None, description="R5 verdict on this call's answer; None for stage calls."
    )
    validation_failure_reason: str | None = Field(
        default=None, description="First R5 reason code of this call's answer when FAILED."
    )
    failed_sentences: list[SentenceFailure] = Field(
        default_factory=list,
        description="What R5 rejected in this call's answer (named in a regeneration prompt).",
    )

    @classmethod
    def of(
        cls, stage: str, result: LLMExecutionResult, template_id: str | None = None
    ) -> ModelCallRecord:
        """The record of one execution result (not yet validated)."""
        return cls(
            stage=stage,
            template_id=template_id,
            prompt_sha256=result.prompt_sha256,
            provider=result.provider,
            model_name=result.model_name,
            generation_status=result.generation_status,
            failure_reason=result.failure_reason,
            attempts=result.attempts,
            llm_latency_ms=result.llm_latency_ms,
            response_id=result.response_id,
            finish_reason=result.finish_reason,
            raw_output=result.raw_model_text,
            prompt_tokens=result.prompt_tokens_actual,
            completion_tokens=result.completion_tokens_actual,
            total_tokens=result.total_tokens_actual,
        )

    def judged(
        self, validation: ValidationResult, failed: list[SentenceFailure] | None = None
    ) -> ModelCallRecord:
        """This record with the validator's verdict on its answer."""
        return self.model_copy(
            update={
                "validation_status": validation.validation_status,
                "validation_failure_reason": validation.failure_reason,
                "failed_sentences": list(failed or []),
            }
        )
