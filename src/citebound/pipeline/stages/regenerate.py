"""One bounded regeneration (docs/validation.md), run by the `validated` stage.

When `[validation] regenerate_on_failure` is on and R5 rejects the model's answer, the pipeline
makes at most ONE more model call: the first prompt followed by the frozen `regenerate_v1`
section naming the rejected sentences by number and reason code (prompt/regenerate.py). The
regenerated answer is validated like the first, by the same validator, against the same
evidence; it never edits or merges the two answers.

* Only a judged answer is regenerated: a model call that failed (retries exhausted, truncated,
  empty), a skipped call, a failed assembly or a validator error is not. So transient faults
  stay inside the execution layer (retries of the same bytes, `attempts`), never here.
* The regeneration is its own exact-bytes call through `llm.execute`, with its own prompt
  hash and its own transient retries, recorded as a `model_calls` entry (`regenerate`).
* The request's verdict is the regenerated answer's. When the regeneration call itself returns
  no answer, or its prompt no longer fits the budget, the first answer's rejection stands.
  Counters (attempts, latency, tokens) add up both calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from citebound.contracts.assembly import AnswerBundle, PromptBuildResult
from citebound.contracts.enums import BuildStatus, GenerationStatus, ReasonCode, ValidationStatus
from citebound.contracts.execution import (
    LLMExecutionResult,
    ModelCallRecord,
    SentenceFailure,
    ValidationResult,
)
from citebound.llm import execute
from citebound.pipeline.context import PipelineContext
from citebound.policy import Policy
from citebound.prompt.regenerate import build_regeneration_prompt
from citebound.validate import validate_answer
from citebound.validate.failures import failed_sentences
from citebound.validate.view import EvidenceView

# Rejections that say nothing about the answer text: regenerating cannot fix them.
NOT_REGENERATED = frozenset(
    {ReasonCode.GENERATION_FAILED, ReasonCode.ASSEMBLY_NOT_OK, ReasonCode.INTERNAL_ERROR}
)


@dataclass(frozen=True)
class Outcome:
    """What the `validated` stage keeps: the decisive prompt, call and verdict, every call
    record, and one line for the stage log."""

    prompt: PromptBuildResult
    llm: LLMExecutionResult
    validation: ValidationResult
    calls: list[ModelCallRecord]
    note: str


def located_failures(
    view: EvidenceView, text: str, validation: ValidationResult, policy: Policy
) -> list[SentenceFailure]:
    """The rejected sentences of `text` (validated against `view`) by index and reason code
    (validate/failures.py)."""
    return failed_sentences(view, text, validation, policy)


def should_regenerate(
    policy: Policy, prompt: PromptBuildResult, llm: LLMExecutionResult, v: ValidationResult
) -> bool:
    """Whether a rejected answer gets its one regeneration."""
    return (
        policy.validation.regenerate_on_failure
        and v.validation_status is ValidationStatus.FAILED
        and llm.generation_status is GenerationStatus.OK
        and llm.attempts > 0
        and prompt.build_status is BuildStatus.OK
        and not NOT_REGENERATED & set(v.reason_codes)
    )


def _total(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def _combined(first: LLMExecutionResult, last: LLMExecutionResult) -> LLMExecutionResult:
    """`last` with the counters of both calls (what the request cost)."""
    return last.model_copy(
        update={
            "attempts": first.attempts + last.attempts,
            "llm_latency_ms": first.llm_latency_ms + last.llm_latency_ms,
            "prompt_tokens_actual": _total(first.prompt_tokens_actual, last.prompt_tokens_actual),
            "completion_tokens_actual": _total(
                first.completion_tokens_actual, last.completion_tokens_actual
            ),
            "total_tokens_actual": _total(first.total_tokens_actual, last.total_tokens_actual),
        }
    )


def regenerate(
    ctx: PipelineContext,
    bundle: AnswerBundle,
    prompt: PromptBuildResult,
    llm: LLMExecutionResult,
    validation: ValidationResult,
    failures: list[SentenceFailure],
    calls: list[ModelCallRecord],
    *,
    view: EvidenceView,
    max_output_tokens: int | None = None,
    followup_terms: str = "",
) -> Outcome:
    """The one regeneration after `validation` rejected `llm`'s answer to `prompt`
    (`view`: the EvidenceView of `bundle`, which both answers are validated against)."""
    first_note = f"FAILED ({validation.failure_reason})"
    second = build_regeneration_prompt(prompt, bundle, ctx.policy, failures)
    if second.build_status is not BuildStatus.OK:
        note = f"{first_note}; no regeneration: {second.failure_reason}"
        return Outcome(prompt, llm, validation, calls, note)
    result = execute(
        second,
        bundle,
        ctx.provider,
        ctx.policy,
        max_output_tokens=max_output_tokens,
        followup_terms=followup_terms,
    )
    record = ModelCallRecord.of("regenerate", result, second.template_id)
    if result.generation_status is not GenerationStatus.OK:
        note = f"{first_note}; regeneration call {result.failure_reason}: first rejection stands"
        return Outcome(prompt, _combined(result, llm), validation, [*calls, record], note)
    v2 = validate_answer(bundle, result, ctx.policy, view=view)
    failed2 = (
        located_failures(view, result.raw_model_text, v2, ctx.policy)
        if v2.validation_status is ValidationStatus.FAILED
        else []
    )
    note = f"{first_note}; regenerated: {v2.validation_status.value}" + (
        f" ({v2.failure_reason})" if v2.failure_reason else ""
    )
    return Outcome(second, _combined(llm, result), v2, [*calls, record.judged(v2, failed2)], note)
