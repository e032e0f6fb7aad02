"""LLM execution (R4) and post-generation validation (R5) contracts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.enums import GenerationStatus, ValidationStatus


class LLMExecutionResult(Contract):
    """What happened when the frozen prompt was sent (seed 000 R3, seed 001 R4)."""

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
    """R5 grounding metrics (seed 001) plus attribution coverage and support (seed 003 §6)."""

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
    """Frozen R5 output schema (seed 001)."""

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
