"""`POST /v1/steps`: step mode over HTTP (docs/api.md), one stage per call.

Start with `{"question": ...}` (state `raw`, nothing run yet), then post back `state` and
`state_token` to run the next stage (`stage`, when given, must be that one), or
`"to_end": true` to run every remaining stage (auto mode). The server keeps nothing between
calls: the state travels with the client, and the token (an HMAC over caller key + state
bytes) makes sure it comes back unchanged and from the same caller, so a client can neither
edit the evidence nor switch to a collection it may not read.

Recorded at the model call (docs/api.md, "Step mode"): the first stage that may call a model
(`executed`, or an earlier LLM-backed stage when one is switched on) runs together with every
stage after it, up to `recorded` and `packaged`, in one call. So a state holding model text
never leaves the server before the validator judged it and the audit record is written; the
finished state a client gets back carries no model text (`llm_result`, `validation`,
`model_calls` are dropped: the views and `result` say what was validated). The request id is
claimed for that call (`ApiRuntime.model_call`), so a replayed pre-model state is a 409,
never a second call.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import ValidationError

from citebound.api.deps import Caller, Runtime, problems
from citebound.api.present import answer_view, stage_view
from citebound.api.runtime import ApiRuntime, ensure_recorded
from citebound.api.security import Principal
from citebound.contracts.api import StepButton, StepRequest, StepResponse
from citebound.errors import AccessDenied, ContractError, PipelineOrderError
from citebound.pipeline import STAGES, PipelineContext, RequestState, buttons, next_stage
from citebound.pipeline.stages.semantic_headers import enabled as header_mapping_on

router = APIRouter(prefix="/v1")


def _is_done(state: RequestState) -> bool:
    """Complete when packaged, or ended FAILED by a stage error (fail closed)."""
    return state.response is not None and (next_stage(state) is None or "error" in state.extras)


def _restore(rt: ApiRuntime, who: Principal, body: StepRequest) -> RequestState:
    assert body.state is not None and body.state_token is not None
    rt.signer.verify(who, body.state, body.state_token)
    try:
        state = RequestState.model_validate_json(body.state)
    except ValidationError as err:  # only reachable with a valid token, i.e. a server bug
        raise ContractError(f"state is not a RequestState: {err.errors()[0]['msg']}") from None
    if not who.may_read(state.collection):  # the grant may have changed since the start
        raise AccessDenied(
            f"key {who.name!r} may not read collection {state.collection!r}", status=403
        )
    if state.policy_fingerprint != rt.ctx.policy.fingerprint:
        raise PipelineOrderError(
            "the server's policy changed since this request started: start again"
        )
    if _is_done(state):
        raise PipelineOrderError("the request is complete; no stage left to run")
    return state


def model_stages(ctx: PipelineContext) -> frozenset[str]:
    """Registry stages that may call a model under `ctx`'s config: every `[stages] llm_*`
    switch names the stage it runs in, so a step that reaches a model is always recorded in
    the same call (A0 header mapping, the follow-up rewrite and the A4 condenser included)."""
    switches = ctx.config.stages
    optional = {
        "preprocessed": header_mapping_on(ctx),
        "a2": switches.llm_shape,
        "retrieval": switches.llm_rewrite,
        "a3": switches.llm_gate,
        "a4": switches.llm_condense,
        "a5": switches.llm_format,
    }
    return frozenset({"executed", *(s for s, on in optional.items() if on)})


def _run_one(rt: ApiRuntime, state: RequestState, stage: str | None) -> RequestState:
    upcoming = next_stage(state)
    if stage is not None and stage != upcoming:
        raise PipelineOrderError(f"stage {stage!r} cannot run now: the next stage is {upcoming!r}")
    if upcoming in model_stages(rt.ctx):
        # Model call, validation and the audit record in one call; the id is claimed first.
        with rt.model_call(state.request_id):
            while not _is_done(state):
                # Same as auto mode: a stage error ends the request FAILED, recorded.
                state = ensure_recorded(rt.pipeline.advance(state))
        return state
    return ensure_recorded(rt.pipeline.advance(state, stage))


def _receipt(state: RequestState) -> RequestState:
    """The finished state as handed out: no model text, validated or not (H1). What passed
    is in `response`; the stage views and `result` were built from the full state."""
    return state.evolve(llm_result=None, validation=None, model_calls=[])


def _advance(rt: ApiRuntime, body: StepRequest, state: RequestState) -> RequestState:
    """Run the next stage, or all remaining ones (`to_end`); a fresh start runs none."""
    if body.to_end:
        if body.stage is not None and body.stage != next_stage(state):
            raise PipelineOrderError(
                f"stage {body.stage!r} cannot run now: the next stage is {next_stage(state)!r}"
            )
        while not _is_done(state):
            state = _run_one(rt, state, None)
    elif body.state is not None:
        state = _run_one(rt, state, body.stage)
    return state


@router.post(
    "/steps",
    response_model=StepResponse,
    responses=problems(400, 401, 403, 404, 409, 413, 422),
)
def steps(
    body: StepRequest,
    rt: Runtime,
    who: Caller,
) -> StepResponse:
    """Start a request, run its next stage, or run it to the end."""
    # Lazy: citebound.retrieve loads tantivy and the retriever, ~40-60 ms more of importing this
    # module (measured in a fresh process, as python -X importtime shows).
    from citebound.retrieve import compile_filters

    if body.question is not None:
        rt.check_question(body.question)
        rt.check_texts(  # as /v1/answer: the history counts against the same limits
            [body.question, *(t for turn in body.history for t in (turn.question, turn.answer))],
            "the question and its history",
        )
        collection, filters = rt.resolve_collection(who, body.collection, body.filters)
        compile_filters(filters)
        request_id = rt.scoped_request_id(collection, body.request_id)
        rt.require_new_request_id(request_id)
        state = rt.pipeline.start(
            body.question,
            collection=collection,
            filters=filters,
            request_id=request_id,
            history=body.history,
        )
    else:
        state = _restore(rt, who, body)
    before = len(state.stage_log)
    with rt.slot():
        state = _advance(rt, body, state)
    ran = len(state.stage_log) - before
    rt.metrics.observe_stages(state, ran)
    done = _is_done(state)
    if done and ran:
        rt.metrics.observe_request(state, stages=False)
    state_json = (_receipt(state) if done else state).model_dump_json()
    return StepResponse(
        state=state_json,
        state_token=rt.signer.sign(who, state_json),
        stage=state.stage,
        next_stage=None if done else next_stage(state),
        stage_order=[s.name for s in STAGES],
        buttons=[StepButton(name=n, stages=list(st)) for n, st in buttons()],
        labels={s.name: s.label for s in STAGES},
        views=[stage_view(state, rec) for rec in state.stage_log[before:]],
        result=answer_view(state) if done else None,
    )
