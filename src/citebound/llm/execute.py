"""R4 execution wrapper: send the frozen prompt unchanged and record exactly what happened.

R4 rules (docs/llm.md), and how they are kept:

* exact prompt bytes: the system and user messages of the `PromptBuildResult` are checked
  against `prompt_text` and `prompt_sha256` before any call, then frozen into one
  `ProviderRequest` that every attempt reuses (nothing is appended, trimmed or reordered);
* no model switch: the provider is fixed for the whole execution and its configured model
  name is what the result records;
* only transient failures are retried (`ProviderError.transient`), with capped exponential
  backoff `min(backoff_max_s, backoff_base_s * 2**(n-1))` before retry n, no jitter (so runs
  replay identically). A 429's `Retry-After` is honoured as a lower bound; when it asks for
  more than `backoff_max_s` the execution stops with LLM_RATE_LIMITED instead of hanging;
* `finish_reason == "length"` is FAILED with LLM_TRUNCATED and is not retried: the same
  parameters give the same cut-off answer, and a truncated answer is never an OK answer.
  The partial text stays in `raw_model_text` for the audit record;
* nothing raises to the caller: every failure is a FAILED result with a reason code;
* logs carry the request id, prompt hash, attempt numbers, reason codes and token counts,
  never prompt or answer text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pydantic import ValidationError

from citebound.contracts.assembly import AnswerBundle, PromptBuildResult
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import AssemblyStatus, BuildStatus, GenerationStatus, ReasonCode
from citebound.contracts.execution import LLMExecutionResult
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ProviderError
from citebound.llm.base import Provider
from citebound.policy import LLMPolicy, Policy

__all__ = ["backoff_delay", "execute"]

log = logging.getLogger("citebound.llm")

Sleep = Callable[[float], None]
Clock = Callable[[], float]


def backoff_delay(policy: LLMPolicy, retry: int) -> float:
    """Seconds to wait before retry number `retry` (1 = the second attempt).

    >>> backoff_delay(LLMPolicy(backoff_base_s=0.5, backoff_max_s=8.0), 3)
    2.0
    """
    return float(min(policy.backoff_max_s, policy.backoff_base_s * 2 ** (retry - 1)))


def execute(
    prompt: PromptBuildResult,
    bundle: AnswerBundle | None,
    provider: Provider,
    policy: Policy,
    *,
    sleep: Sleep = time.sleep,
    clock: Clock = time.monotonic,
    max_output_tokens: int | None = None,
    followup_terms: str = "",
) -> LLMExecutionResult:
    """Run the frozen prompt through `provider` under `policy.llm`; never raises for a run.

    Args:
        prompt: The prompt build result; only `build_status == OK` leads to a call.
        bundle: The AnswerBundle the prompt was built from; only `assembly_status == OK`
            leads to a call. Offline providers (extractive) answer from it. None for a call
            made before assembly (the LLM stages A0, A2, the follow-up rewrite, A3): the
            prompt alone decides.
        provider: Any `Provider`; its model is used for every attempt.
        policy: Supplies temperature, output cap, attempts, backoff and timeout.
        sleep: Called with the backoff delay between attempts (inject a fake in tests).
        clock: Monotonic clock for `llm_latency_ms`.
        max_output_tokens: The caller's output cap; it lowers `policy.llm.max_output_tokens`
            for this call and never raises it.
        followup_terms: Terms a follow-up rewrite carried from earlier turns (offline
            providers score evidence with them; model providers read the prompt only).

    Returns:
        An `LLMExecutionResult` with generation_status OK, NO_EVIDENCE or FAILED.

    Example:
        >>> from citebound.llm import ExtractiveProvider, execute
        >>> result = execute(prompt, bundle, ExtractiveProvider(), policy)  # doctest: +SKIP
        >>> result.generation_status, result.attempts  # doctest: +SKIP
        ('OK', 1)
    """
    params = policy.llm
    cap = (
        params.max_output_tokens
        if max_output_tokens is None
        else min(params.max_output_tokens, max_output_tokens)
    )
    base = {
        "request_id": prompt.request_id,
        "provider": provider.name,
        "model_name": provider.model,
        "prompt_sha256": prompt.prompt_sha256,
        "temperature": params.temperature,
        "max_output_tokens": cap,
    }

    def finish(
        status: GenerationStatus, reason: str | None, message: str, **extra: object
    ) -> LLMExecutionResult:
        fields = {"attempts": 0, "llm_latency_ms": 0.0, **base, **extra}
        result = LLMExecutionResult.model_validate(
            {**fields, "generation_status": status, "failure_reason": reason, "message": message}
        )
        _log_result(result)
        return result

    skipped = _skip_reason(prompt, bundle)
    if skipped is not None:
        return finish(*skipped)
    try:
        request = ProviderRequest(
            request_id=prompt.request_id,
            messages=(prompt.messages[0], prompt.messages[1]),
            prompt_sha256=prompt.prompt_sha256,
            temperature=params.temperature,
            max_output_tokens=cap,
            timeout_s=params.timeout_s,
            refusal_text=policy.refusal.model_text,
            answer_bundle=bundle,
            followup_terms=followup_terms,
        )
    except ValidationError as err:
        return finish(
            GenerationStatus.FAILED,
            ReasonCode.PROMPT_STRUCTURE,
            f"refusing to send a prompt that differs from the one built: {err.errors()[0]['msg']}",
        )

    started = clock()
    attempts = 0
    last: ProviderError | None = None
    while attempts < params.max_attempts:
        if attempts:
            delay = backoff_delay(params, attempts)
            assert last is not None
            if last.retry_after_s is not None:
                if last.retry_after_s > params.backoff_max_s:
                    return finish(
                        GenerationStatus.FAILED,
                        last.reason_code,
                        f"{last} - the server asked to wait {last.retry_after_s:g}s, more than "
                        f"backoff_max_s={params.backoff_max_s:g}; giving up after {attempts} "
                        "attempt(s)",
                        attempts=attempts,
                        llm_latency_ms=_ms(started, clock),
                    )
                delay = max(delay, last.retry_after_s)
            log.info(
                "llm retry request_id=%s prompt_sha256=%s after=%s wait_s=%.3f",
                prompt.request_id,
                prompt.prompt_sha256,
                last.reason_code,
                delay,
            )
            sleep(delay)
        attempts += 1
        log.info(
            "llm attempt request_id=%s provider=%s model=%s prompt_sha256=%s attempt=%d/%d",
            prompt.request_id,
            provider.name,
            provider.model,
            prompt.prompt_sha256,
            attempts,
            params.max_attempts,
        )
        try:
            reply = provider.complete(request)
        except ProviderError as err:
            log.warning(
                "llm attempt failed request_id=%s prompt_sha256=%s attempt=%d reason=%s "
                "status=%s transient=%s",
                prompt.request_id,
                prompt.prompt_sha256,
                attempts,
                err.reason_code,
                err.status,
                err.transient,
            )
            if not err.transient:
                return finish(
                    GenerationStatus.FAILED,
                    err.reason_code,
                    str(err),
                    attempts=attempts,
                    llm_latency_ms=_ms(started, clock),
                )
            last = err
            continue
        except Exception as err:  # a provider broke its contract; fail closed, keep the type
            # No traceback: exception text may quote the prompt, and logs must not.
            log.error(
                "llm provider raised request_id=%s prompt_sha256=%s type=%s",
                prompt.request_id,
                prompt.prompt_sha256,
                type(err).__name__,
            )
            return finish(
                GenerationStatus.FAILED,
                ReasonCode.INTERNAL_ERROR,
                f"provider {provider.name} raised {type(err).__name__} instead of ProviderError",
                attempts=attempts,
                llm_latency_ms=_ms(started, clock),
            )
        reported = reply.reported_model
        if reported is not None and not reported.startswith(provider.model):
            # Servers may report a dated snapshot of the model asked for (gpt-4o-mini ->
            # gpt-4o-mini-2024-07-18); anything else is the server's own routing. We never
            # switch models ourselves, and we say so loudly when the server did.
            log.warning(
                "llm server reported another model request_id=%s configured=%s reported=%s",
                prompt.request_id,
                provider.model,
                reported,
            )
        return _from_reply(reply, finish, attempts, _ms(started, clock))

    assert last is not None
    return finish(
        GenerationStatus.FAILED,
        ReasonCode.LLM_RETRIES_EXHAUSTED,
        f"all {attempts} attempts failed; last: {last.reason_code}: {last}",
        attempts=attempts,
        llm_latency_ms=_ms(started, clock),
    )


def _skip_reason(
    prompt: PromptBuildResult, bundle: AnswerBundle | None
) -> tuple[GenerationStatus, ReasonCode, str] | None:
    """Why no call is made, or None when the prompt may be sent.

    Upstream FAILED / NO_EVIDENCE is LLM_SKIPPED; a prompt whose parts do not add up (messages
    vs prompt_text vs prompt_sha256, or another request's bundle) is PROMPT_STRUCTURE.
    """
    if bundle is None:
        return _prompt_problem(prompt)
    if bundle.assembly_status is AssemblyStatus.FAILED or prompt.build_status is BuildStatus.FAILED:
        upstream = bundle.failure_reason or prompt.failure_reason or "unknown reason"
        return (
            GenerationStatus.FAILED,
            ReasonCode.LLM_SKIPPED,
            f"no model call: assembly/prompt build FAILED ({upstream})",
        )
    if (
        bundle.assembly_status is AssemblyStatus.NO_EVIDENCE
        or prompt.build_status is BuildStatus.NO_EVIDENCE
    ):
        return (
            GenerationStatus.NO_EVIDENCE,
            ReasonCode.LLM_SKIPPED,
            "no model call: there is no evidence to answer from (NO_EVIDENCE before R4)",
        )
    if prompt.request_id != bundle.request_id:
        return (
            GenerationStatus.FAILED,
            ReasonCode.PROMPT_STRUCTURE,
            f"no model call: prompt request_id {prompt.request_id!r} does not match the "
            f"AnswerBundle's {bundle.request_id!r}",
        )
    return _prompt_problem(prompt)


def _prompt_problem(prompt: PromptBuildResult) -> tuple[GenerationStatus, ReasonCode, str] | None:
    """PROMPT_STRUCTURE when the prompt is not built or its parts do not add up."""
    if prompt.build_status is not BuildStatus.OK:
        return (
            GenerationStatus.FAILED,
            ReasonCode.LLM_SKIPPED,
            f"no model call: prompt build {prompt.build_status.value} ({prompt.failure_reason})",
        )
    if len(prompt.messages) != 2 or prompt.prompt_text != (
        prompt.messages[0].content + "\n\n" + prompt.messages[1].content
    ):
        return (
            GenerationStatus.FAILED,
            ReasonCode.PROMPT_STRUCTURE,
            "no model call: prompt messages are not exactly system + user of prompt_text",
        )
    if sha256_hex(prompt.prompt_text) != prompt.prompt_sha256:
        return (
            GenerationStatus.FAILED,
            ReasonCode.PROMPT_STRUCTURE,
            "no model call: prompt_sha256 does not match prompt_text (prompt was altered)",
        )
    return None


def _from_reply(
    reply: ProviderReply,
    finish: Callable[..., LLMExecutionResult],
    attempts: int,
    latency_ms: float,
) -> LLMExecutionResult:
    fields: dict[str, object] = {
        "attempts": attempts,
        "llm_latency_ms": latency_ms,
        "raw_model_text": reply.text,
        "finish_reason": reply.finish_reason,
        "response_id": reply.response_id,
        "prompt_tokens_actual": reply.prompt_tokens,
        "completion_tokens_actual": reply.completion_tokens,
        "total_tokens_actual": reply.total_tokens,
    }
    if reply.finish_reason == "length":
        return finish(
            GenerationStatus.FAILED,
            ReasonCode.LLM_TRUNCATED,
            "the model hit the output-token cap (finish_reason=length); a cut-off answer is "
            "never accepted - raise llm.max_output_tokens in the policy or shorten the evidence",
            **fields,
        )
    if not reply.text.strip():
        return finish(
            GenerationStatus.FAILED,
            ReasonCode.LLM_EMPTY_RESPONSE,
            "the model returned no text",
            **fields,
        )
    return finish(GenerationStatus.OK, None, "", **fields)


def _ms(started: float, clock: Clock) -> float:
    return max(0.0, (clock() - started) * 1000.0)


def _log_result(result: LLMExecutionResult) -> None:
    log.info(
        "llm result request_id=%s provider=%s model=%s prompt_sha256=%s status=%s reason=%s "
        "attempts=%d latency_ms=%.1f finish_reason=%s prompt_tokens=%s completion_tokens=%s "
        "total_tokens=%s response_id=%s",
        result.request_id,
        result.provider,
        result.model_name,
        result.prompt_sha256,
        result.generation_status,
        result.failure_reason,
        result.attempts,
        result.llm_latency_ms,
        result.finish_reason,
        result.prompt_tokens_actual,
        result.completion_tokens_actual,
        result.total_tokens_actual,
        result.response_id,
    )
