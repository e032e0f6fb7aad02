"""The controller: runs the registered stages in order (auto mode) or one at a time (step mode),
and checks the state invariants (docs/superprompt.md) after every stage.

    >>> pipe = Pipeline(PipelineContext(load_config()))          # doctest: +SKIP
    >>> state = pipe.run("What torque for the HP-220 impeller bolts?")  # doctest: +SKIP
    >>> state.response.status                                     # doctest: +SKIP

A stage that raises (a missing index, an unusable provider) does not escape `run`: the request
ends FAILED with a reason code, and is still packaged and recorded.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from citebound.contracts.conversation import MAX_HISTORY_TURNS, ConversationTurn
from citebound.contracts.enums import PublicStatus, ReasonCode
from citebound.contracts.execution import ModelCallRecord
from citebound.contracts.public import PublicResponse, TokenUsage
from citebound.contracts.retrieval import FiltersApplied
from citebound.errors import (
    AuditError,
    CiteboundError,
    ConfigError,
    PipelineOrderError,
    StageError,
    StoreError,
)
from citebound.pipeline.context import PipelineContext
from citebound.pipeline.stages.answer import audit_conversation
from citebound.pipeline.stages.search import search_pieces
from citebound.pipeline.state import RequestState, StageRecord
from citebound.pipeline.table import BY_NAME, STAGE_NAMES
from citebound.question.conversation import recent_turns
from citebound.question.preprocess import preprocess
from citebound.store.snapshot import request_snapshot


def next_stage(state: RequestState) -> str | None:
    """The stage that must run next, or None when the request is complete."""
    done = len(state.steps_done)
    return STAGE_NAMES[done] if done < len(STAGE_NAMES) else None


def check_invariants(
    before: RequestState, after: RequestState, stage: str, ctx: PipelineContext
) -> None:
    """Raise PipelineOrderError when a stage broke an ordering, view or selection invariant."""

    def bad(msg: str) -> PipelineOrderError:
        return PipelineOrderError(f"stage '{stage}' broke an invariant: {msg}", stage=stage)

    if after.steps_done != [*before.steps_done, stage]:
        raise bad("steps_done must grow by exactly this stage")
    spec = BY_NAME.get(stage)
    seed = None if spec is None else spec.seed
    history = [*before.history_of_stages, seed] if seed else before.history_of_stages
    if after.history_of_stages != history or after.stage != (seed or before.stage):
        raise bad(
            "stage / history_of_stages must follow the stage order (raw, preprocessed, ..., a5)"
        )
    old_rows, new_rows = before.base_context_chunks, after.base_context_chunks
    # Stages only append rows, so the usual case is an equal prefix (list equality tries
    # identity first, in C); anything else gets the full check by chunk id.
    untouched = new_rows[: len(old_rows)] == old_rows
    new = {r.chunk_id: r for r in new_rows}
    if len(new) != len(new_rows):
        raise bad("base_context_chunks has duplicate chunk ids")
    if not untouched:
        for r in old_rows:
            now = new.get(r.chunk_id)
            if now is None:
                raise bad("chunks were removed from base_context_chunks")
            if now.chunk_text != r.chunk_text:
                raise bad("a chunk in base_context_chunks was modified")
    run = set(after.steps_done)
    for view, view_ids in after.views_by_stage.items():
        if view not in run:
            raise bad(f"view '{view}' written before its stage ran")
        if not new.keys() >= set(view_ids):
            raise bad(f"view '{view}' names chunks not in base_context_chunks")
    final = set(after.final_selection_ids)
    if len(final) != len(after.final_selection_ids) or not new.keys() >= final:
        raise bad("final_selection_ids must be unique chunk ids from base_context_chunks")
    limits = ctx.policy.retrieval
    caps = {"retrieval": limits.n1_retr_max_candidates, "reranked": limits.n2_rerank_top_k}
    for view, cap in caps.items():
        if len(after.views_by_stage.get(view, [])) > cap:
            raise bad(f"view '{view}' exceeds its cap {cap}")
    if "a4" in run and len(after.final_selection_ids) > limits.n3_final_selection_max:
        raise bad(f"final_selection_ids exceeds N3 = {limits.n3_final_selection_max}")


class Pipeline:
    """Runs requests through the stage registry. One per process; requests share nothing."""

    def __init__(self, ctx: PipelineContext) -> None:
        self.ctx = ctx

    def start(
        self,
        question: str,
        *,
        collection: str | None = None,
        filters: FiltersApplied | None = None,
        request_id: str | None = None,
        run_id: str | None = None,
        history: Sequence[ConversationTurn] = (),
        max_output_tokens: int | None = None,
    ) -> RequestState:
        """A fresh state at stage `raw`.

        `history` holds the earlier turn pairs of a conversation, oldest first; only the last
        N4 (`superprompt.n4_recent_conv_max_pairs`) are kept. `max_output_tokens` lowers the
        policy's output cap for this request (it never raises it).
        """
        return RequestState(
            request_id=request_id or uuid.uuid4().hex,
            run_id=run_id,
            user_text=question,
            collection=collection or self.ctx.config.collection,
            filters=filters,
            history=recent_turns(history, self.ctx.policy),
            received_history=list(history[-MAX_HISTORY_TURNS:]),
            received_turns=len(history),
            max_output_tokens=max_output_tokens,
            started_ns=time.perf_counter_ns(),
            policy_fingerprint=self.ctx.policy.fingerprint,
            config_fingerprint=self.ctx.config.fingerprint,
        )

    def prefetch(self, questions: Sequence[str], *, collection: str | None = None) -> int:
        """Embed the query pieces of `questions` in bulk before they are asked (a batch runs
        about a third faster; answers are identical). Returns how many pieces were embedded;
        0 when there is nothing to embed or the collection cannot be searched, in which case
        each question fails or refuses on its own, as without prefetching. `prefetched` also
        drops what was not used afterwards."""
        pol = self.ctx.policy
        if pol.retrieval.mode == "lexical":
            return 0
        pieces: list[str] = []
        for q in questions:
            try:  # stage A0, then what the retrieval stage searches
                pieces += search_pieces(preprocess(q)[0], pol)[1]
            except CiteboundError:
                continue  # e.g. an empty question: it fails on its own when asked
        try:
            return self.ctx.retriever.prefetch(collection or self.ctx.config.collection, pieces)
        except CiteboundError:
            return 0

    @contextmanager
    def prefetched(
        self, questions: Sequence[str], *, collection: str | None = None
    ) -> Iterator[int]:
        """`prefetch` for a block that asks `questions`; unused vectors are dropped after it."""
        try:
            yield self.prefetch(questions, collection=collection)
        finally:
            self.ctx.retriever.query_vectors.clear()

    def step(self, state: RequestState, stage: str | None = None) -> RequestState:
        """Run exactly one stage (the next one; `stage`, when given, must be that one)."""
        expected = next_stage(state)
        if expected is None:
            raise PipelineOrderError("the request is complete; no stage left to run")
        if stage is not None and stage != expected:
            raise PipelineOrderError(
                f"stage '{stage}' cannot run now: the next stage is '{expected}'", stage=stage
            )
        started = time.perf_counter()
        after = BY_NAME[expected].run(state, self.ctx)
        check_invariants(state, after, expected, self.ctx)
        last = after.stage_log[-1]
        if not last.latency_ms:
            timed = last.model_copy(update={"latency_ms": (time.perf_counter() - started) * 1000})
            after = after.evolve(stage_log=[*after.stage_log[:-1], timed])
        return after

    def run(self, question: str, **kwargs: object) -> RequestState:
        """Auto mode: every stage in order. Never raises for a request-level failure. One
        store snapshot for the whole request (store.snapshot: a shared store reads its
        index version once)."""
        with request_snapshot():
            state = self.start(question, **kwargs)  # type: ignore[arg-type]
            return self.finish(state)

    def advance(self, state: RequestState, stage: str | None = None) -> RequestState:
        """Step mode for callers that must not raise: like `step`, but a stage error ends the
        request FAILED (recorded), as in auto mode. Order errors still raise."""
        try:
            return self.step(state, stage)
        except PipelineOrderError:
            raise
        except CiteboundError as err:
            return self._failed(state, err)

    def finish(self, state: RequestState) -> RequestState:
        """Run the remaining stages of `state` (auto mode from any step)."""
        while next_stage(state) is not None:
            state = self.advance(state)
            if "error" in state.extras:  # ended FAILED by a stage error; already recorded
                break
        return state

    def _failed(self, state: RequestState, err: CiteboundError) -> RequestState:
        """End the request FAILED with a reason code; still record it (fail closed)."""
        # Lazy: citebound.audit adds ~13 ms to importing citebound.pipeline (python -X importtime).
        from citebound.audit import build_audit_record

        stage = next_stage(state) or "packaged"
        if isinstance(err, StageError):
            reason = err.reason_code
        elif isinstance(err, AuditError):
            reason = ReasonCode.AUDIT_FAILED.value
        elif isinstance(err, StoreError):
            reason = ReasonCode.STORE_UNAVAILABLE.value
        elif isinstance(err, ConfigError):
            reason = ReasonCode.CONFIG_INVALID.value
        else:
            reason = ReasonCode.INTERNAL_ERROR.value
        latency = (time.perf_counter_ns() - state.started_ns) / 1e6 if state.started_ns else 0.0
        response = PublicResponse(
            request_id=state.request_id,
            status=PublicStatus.FAILED,
            answer="",
            citations=[],
            token_usage=TokenUsage(),
            latency_ms=latency,
            failure_reason=reason,
        )
        record = build_audit_record(
            policy=self.ctx.policy,
            response=response,
            question=state.user_text,
            bundle=state.answer_bundle,
            prompt=state.prompt,
            llm=state.llm_result,
            validation=state.validation,
            run_id=state.run_id,
            model_calls=[
                *state.model_calls,
                *(c for c in getattr(err, "model_calls", ()) if isinstance(c, ModelCallRecord)),
            ],
            conversation=audit_conversation(state),
        )
        message = str(err)
        recorded: str | None = None if isinstance(err, AuditError) else record.record_hash
        if not isinstance(err, AuditError):
            try:
                for sink in self.ctx.sinks:
                    sink.append(record)
            except AuditError as audit_err:
                # No record means no answer: the request stays FAILED and says why.
                response = response.model_copy(
                    update={"failure_reason": ReasonCode.AUDIT_FAILED.value}
                )
                message, recorded = (
                    f"{message}; the audit record could not be written: {audit_err}",
                    None,
                )
        log = StageRecord(stage=stage, note=f"FAILED: {message}")
        return state.evolve(
            response=response,
            audit_record_hash=recorded,
            stage_log=[*state.stage_log, log],
            extras={
                **state.extras,
                "error": {
                    "stage": stage,
                    "reason_code": response.failure_reason,
                    "message": message,
                },
            },
        )
