"""The question stages: A0 preprocess (headers to a prompt body) and A2 shape."""

from __future__ import annotations

from citebound.pipeline.context import PipelineContext
from citebound.pipeline.stages import semantic_headers
from citebound.pipeline.stages.chooser import call_json
from citebound.pipeline.stages.step import done
from citebound.pipeline.state import RequestState, StageRecord
from citebound.question.preprocess import preprocess
from citebound.question.shape import chooser_prompt, shape_deterministic, shape_from_mapping


def a0_preprocess(state: RequestState, ctx: PipelineContext) -> RequestState:
    body, unknown, decisions, ready = preprocess(state.user_text)
    semantic: dict[str, object] = {"semantic_used": False, "normalized_map": {}}
    calls = state.model_calls
    if unknown and semantic_headers.enabled(ctx):
        body, unknown, more, ready, semantic, call = semantic_headers.apply_semantic(
            state.request_id, ctx, body, unknown
        )
        decisions = [*decisions, *more]
        calls = [*calls, call]
    extras = {
        **state.extras,
        "unknown_attributes": unknown,
        "decisions": [d.model_dump() for d in decisions],
        **semantic,
    }
    note = f"{len(decisions)} headers mapped" if decisions else "plain question -> task"
    return done(
        state,
        "preprocessed",
        StageRecord(stage="preprocessed", note=note),
        body=body,
        extras=extras,
        prompt_ready=ready,
        model_calls=calls,
    )


def a2_shape(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.body is not None
    calls = state.model_calls
    if ctx.config.stages.llm_shape:
        data, call = call_json(
            ctx,
            state.request_id,
            chooser_prompt(state.body),
            stage="a2",
            switch="llm_shape",
            call="a2",
        )
        shape, notes = shape_from_mapping(data)
        calls = [*calls, call]
    else:
        shape, notes = shape_deterministic(state.body)
    extras = {**state.extras, "a2_decisions": notes}
    return done(
        state,
        "a2",
        StageRecord(stage="a2", note=f"shape from {shape.source}"),
        shape=shape,
        extras=extras,
        model_calls=calls,
    )
