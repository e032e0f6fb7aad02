"""The prompt stages: assembly, A4 condense, A5 format and the prompt build."""

from __future__ import annotations

from citebound.contracts.enums import ReasonCode
from citebound.errors import StageError
from citebound.pipeline.context import PipelineContext
from citebound.pipeline.stages import superprompt
from citebound.pipeline.stages.step import done
from citebound.pipeline.state import RequestState, StageRecord
from citebound.prompt import build_prompt
from citebound.prompt.builder import prefix_bundle
from citebound.text import get_tokenizer


def assembled(state: RequestState, ctx: PipelineContext) -> RequestState:
    # Lazy: citebound.assemble adds ~6 ms to importing citebound.pipeline (python -X importtime).
    from citebound.assemble import assemble

    assert state.retrieval_bundle is not None
    bundle = assemble(
        state.retrieval_bundle, ctx.policy, question=state.user_text, request_id=state.request_id
    )
    ids = [e.chunk_id for e in bundle.selected_evidence]
    note = bundle.assembly_status.value + (
        f" ({bundle.failure_reason})" if bundle.failure_reason else ""
    )
    record = StageRecord(
        stage="assembled", kept=ids, dropped=bundle.assembly_metrics.drops, note=note
    )
    return done(
        state,
        "assembled",
        record,
        answer_bundle=bundle,
        final_selection_ids=ids,
        views_by_stage={**state.views_by_stage, "assembled": ids},
    )


def a4_condense(state: RequestState, ctx: PipelineContext) -> RequestState:
    """Extractive: evidence is never paraphrased or summarized. Assembly already budgeted it,
    so A4 enforces N3 by dropping whole chunks from the end (lowest rank) and exposes the
    evidence block as S_CTX_MD."""
    bundle = state.answer_bundle
    assert bundle is not None
    n3 = ctx.policy.retrieval.n3_final_selection_max
    removed = {e.chunk_id for e in bundle.selected_evidence[n3:]}
    bundle = prefix_bundle(
        bundle,
        n3,
        reason_code=ReasonCode.DROP_MAX_CHUNKS,
        detail=f"N3 final selection cap {n3}",
        tok=get_tokenizer(ctx.policy.tokenizer),
    )
    ids = [e.chunk_id for e in bundle.selected_evidence]
    dropped = [d for d in bundle.assembly_metrics.drops if d.chunk_id in removed]
    s_ctx, extras = bundle.evidence_block_text, state.extras
    note = f"extractive; {len(ids)} chunks, N3={n3}"
    calls = state.model_calls
    if superprompt.is_superprompt(ctx):
        s_ctx, ids, info, made = superprompt.condense(state.evolve(answer_bundle=bundle), ctx)
        calls = [*calls, *made]
        extras = {
            **extras,
            "a4": info,
            "llm_stage_calls": info.pop("calls", None) or state.extras.get("llm_stage_calls", []),
        }
        note = f"S_CTX_MD from {info['source']}; {len(ids)} chunks, N3={n3}"
    record = StageRecord(stage="a4", kept=ids, dropped=dropped, note=note)
    return done(
        state,
        "a4",
        record,
        answer_bundle=bundle,
        final_selection_ids=ids,
        s_ctx_md=s_ctx,
        extras=extras,
        views_by_stage={**state.views_by_stage, "a4": ids},
        model_calls=calls,
    )


def a5_format(state: RequestState, ctx: PipelineContext) -> RequestState:
    """V1: the prompt contract is frozen, so a requested format is recorded, not injected.
    superprompt-v1: the format decision changes the prompt's output rules."""
    assert state.body is not None
    if superprompt.is_superprompt(ctx):
        fspec, calls, made = superprompt.enforce_format(state, ctx)
        enforcer = {
            "normalized_format_spec": fspec.normalized_format_spec,
            "requested_format": fspec.requested_format,
            "applied": fspec.applied,
            "hard_rules": fspec.hard_rules,
            "example_shape": fspec.example_shape,
            "note": fspec.note,
            "spec": fspec.model_dump(),
        }
        return done(
            state,
            "a5",
            StageRecord(stage="a5", note=f"format {fspec.normalized_format_spec} ({fspec.source})"),
            extras={**state.extras, "format_enforcer": enforcer, "llm_stage_calls": calls},
            model_calls=[*state.model_calls, *made],
        )
    asked = state.body.format
    spec = {
        "normalized_format_spec": "plain sentences, each ending with citation markers",
        "requested_format": asked,
        "applied": not asked,
        "note": "the frozen prompt template fixes the output format" if asked else "",
    }
    if ctx.config.stages.llm_format:
        raise StageError(
            "A5 with an LLM (stages.llm_format) cannot change the frozen prompt "
            "contract; turn stages.llm_format off",
            stage="a5",
            reason_code=ReasonCode.STAGE_DISABLED,
        )
    return done(
        state,
        "a5",
        StageRecord(stage="a5", note="format fixed by the prompt contract"),
        extras={**state.extras, "format_enforcer": spec},
    )


def prompt_built(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.answer_bundle is not None
    if superprompt.is_superprompt(ctx):
        return superprompt.build(state, ctx, done)
    outcome = build_prompt(state.answer_bundle, ctx.policy, conversation=state.history)
    ids = [e.chunk_id for e in outcome.bundle.selected_evidence]
    msgs = outcome.prompt.messages
    attachments = "\n\n".join(
        f"SOURCE: {e.source_reference}\nSPAN: {e.citation_anchor} chunk {e.chunk_id}\n"
        f"```\n{e.sanitized_text}\n```"
        for e in outcome.bundle.selected_evidence
    )
    note = f"{outcome.prompt.build_status.value} sha256={outcome.prompt.prompt_sha256[:12]}"
    dropped = [
        d
        for d in outcome.bundle.assembly_metrics.drops
        if d.chunk_id in outcome.prompt.dropped_chunk_ids
    ]
    return done(
        state,
        "prompt_built",
        StageRecord(stage="prompt_built", kept=ids, dropped=dropped, note=note),
        answer_bundle=outcome.bundle,
        prompt=outcome.prompt,
        final_selection_ids=ids,
        system_md=msgs[0].content if msgs else "",
        prompt_md=state.prompt_ready,
        attachments_md=attachments,
    )
