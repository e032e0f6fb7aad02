"""The answer stages: execute, validate (with one regeneration), record the audit, package."""

from __future__ import annotations

import time

from citebound.contracts.audit import AuditConversation
from citebound.contracts.conversation import FollowupRewrite
from citebound.contracts.enums import AssemblyStatus, ValidationStatus
from citebound.contracts.execution import ModelCallRecord
from citebound.llm import execute
from citebound.pipeline.context import PipelineContext
from citebound.pipeline.stages.step import done
from citebound.pipeline.state import DISPLAY_ANCHORS, RequestState, StageRecord
from citebound.validate import validate_answer


def executed(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.prompt is not None and state.answer_bundle is not None
    carried = state.extras.get("followup_rewrite", {}).get("carried", [])
    result = execute(
        state.prompt,
        state.answer_bundle,
        ctx.provider,
        ctx.policy,
        max_output_tokens=state.max_output_tokens,
        followup_terms=" ".join(carried),
    )
    note = f"{result.generation_status.value} after {result.attempts} attempt(s)"
    if result.failure_reason:
        note += f" ({result.failure_reason})"
    calls = state.model_calls
    if result.attempts:
        calls = [*calls, ModelCallRecord.of("answer", result, state.prompt.template_id)]
    return done(
        state,
        "executed",
        StageRecord(stage="executed", note=note, latency_ms=result.llm_latency_ms),
        llm_result=result,
        model_calls=calls,
    )


def validated(state: RequestState, ctx: PipelineContext) -> RequestState:
    """R5 on the answer; with `[validation] regenerate_on_failure`, at most one regeneration
    of a rejected answer (pipeline/stages/regenerate.py)."""
    # Lazy: stages.regenerate adds ~2.5 ms to importing citebound.pipeline (python -X
    # importtime) and is used only for an answer that fails validation.
    from citebound.pipeline.stages import regenerate as regen

    bundle, llm, prompt = state.answer_bundle, state.llm_result, state.prompt
    assert llm is not None and bundle is not None and prompt is not None
    # One projection of the bundle for the whole request: both answers of a regeneration,
    # their located failures, and packaging's check of the renumbered answer (`recorded`).
    view = state.evidence_view()
    state = state.keeping_view(view)
    v = validate_answer(bundle, llm, ctx.policy, view=view)
    note = v.validation_status.value + (f" ({v.failure_reason})" if v.failure_reason else "")
    calls = list(state.model_calls)
    judged = llm.attempts > 0 and bool(calls) and calls[-1].stage == "answer"
    failures = (
        regen.located_failures(view, llm.raw_model_text, v, ctx.policy)
        if judged and v.validation_status is ValidationStatus.FAILED
        else []
    )
    if judged:
        calls[-1] = calls[-1].judged(v, failures)
    changes: dict[str, object] = {"validation": v, "model_calls": calls}
    if judged and regen.should_regenerate(ctx.policy, prompt, llm, v):
        carried = state.extras.get("followup_rewrite", {}).get("carried", [])
        out = regen.regenerate(
            ctx,
            bundle,
            prompt,
            llm,
            v,
            failures,
            calls,
            view=view,
            max_output_tokens=state.max_output_tokens,
            followup_terms=" ".join(carried),
        )
        v, note = out.validation, out.note
        changes = {
            "validation": v,
            "model_calls": out.calls,
            "llm_result": out.llm,
            "prompt": out.prompt,
        }
    return done(
        state,
        "validated",
        StageRecord(stage="validated", kept=v.validated_citations, note=note),
        **changes,
    )


def _latency_ms(state: RequestState) -> float:
    return (time.perf_counter_ns() - state.started_ns) / 1e6 if state.started_ns else 0.0


def audit_conversation(state: RequestState) -> AuditConversation | None:
    """What the audit record keeps of the conversation: the turns as received, how many were
    used, and the follow-up rewrite (None for a request without earlier turns)."""
    if not state.received_turns:
        return None
    rewrite = state.extras.get("followup_rewrite")
    return AuditConversation(
        turns=state.received_history,
        turns_received=state.received_turns,
        turns_used=len(state.history),
        rewrite=FollowupRewrite.model_validate(rewrite) if rewrite else None,
    )


def recorded(state: RequestState, ctx: PipelineContext) -> RequestState:
    # Lazy: citebound.audit and citebound.respond add ~13 and ~3 ms to importing
    # citebound.pipeline (python -X importtime).
    from citebound.audit import build_audit_record
    from citebound.respond import Packaged, package_answer, package_without_generation

    bundle, llm, v = state.answer_bundle, state.llm_result, state.validation
    assert bundle is not None
    latency = _latency_ms(state)
    if (
        bundle.assembly_status is not AssemblyStatus.OK
        or llm is None
        or v is None
        or state.prompt is None
        or state.prompt.build_status.value != "OK"
    ):
        packaged = Packaged(package_without_generation(bundle, ctx.policy, latency_ms=latency))
    else:
        packaged = package_answer(
            bundle, llm, v, policy=ctx.policy, latency_ms=latency, view=state.evidence_view()
        )
    response = packaged.response
    # The shown anchors are derived once, by packaging; the record and `extras` keep them.
    record = build_audit_record(
        policy=ctx.policy,
        response=response,
        question=state.user_text,
        bundle=bundle,
        prompt=state.prompt,
        llm=llm,
        validation=v,
        run_id=state.run_id,
        conversation=audit_conversation(state),
        store_prompt_text=ctx.config.audit.store_prompt_text,
        store_evidence_text=ctx.config.audit.store_prompt_text,
        model_calls=state.model_calls,
        display_anchors=packaged.display_anchors,
    )
    for sink in ctx.sinks:
        sink.append(record)
    return done(
        state,
        "recorded",
        StageRecord(stage="recorded", note=f"{len(ctx.sinks)} sink(s)"),
        response=response,
        audit_record_hash=record.record_hash,
        extras={**state.extras, DISPLAY_ANCHORS: record.display_anchors or {}},
    )


def packaged(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.response is not None
    r = state.response
    return done(
        state,
        "packaged",
        StageRecord(stage="packaged", note=f"{r.status.value}, {len(r.citations)} citation(s)"),
    )
