"""Seed 002 §7 acceptance criteria and seed 003 failure modes, on the real sample corpus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citebound.errors import PipelineOrderError
from citebound.pipeline import Pipeline, RequestState, check_invariants, next_stage
from citebound.pipeline.table import BY_NAME, STAGE_NAMES

TORQUE = "What torque should the HP-220 impeller bolts be tightened to?"
REFUSAL = "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
# Fields that legitimately differ between two runs: wall-clock timings and the audit hash
# (the record carries its timestamp).
VOLATILE = {
    "started_ns",
    "stage_log",
    "audit_record_hash",
    "response",
    "llm_result",
    "model_calls",
}


def _stable(state: RequestState) -> dict[str, Any]:
    data = state.model_dump(mode="json", exclude=VOLATILE)
    resp = (
        state.response.model_dump(mode="json", exclude={"latency_ms"}) if state.response else None
    )
    llm = (
        state.llm_result.model_dump(mode="json", exclude={"llm_latency_ms"})
        if state.llm_result
        else None
    )
    calls = [c.model_dump(mode="json", exclude={"llm_latency_ms"}) for c in state.model_calls]
    return {
        **data,
        "response": resp,
        "llm": llm,
        "model_calls": calls,
        "log": [(r.stage, r.kept, r.dropped, r.note) for r in state.stage_log],
    }


def test_answerable_question_is_answered_with_citations(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline().run(TORQUE, request_id="r1")
    assert state.response is not None and state.response.status.value == "OK"
    assert state.steps_done == list(STAGE_NAMES)
    # Seed 002 §2.1 vocabulary; the Prompt_Builder and what follows it keep `a5`.
    assert state.history_of_stages == [
        "preprocessed",
        "a2",
        "retrieval",
        "reranked",
        "a3",
        "a4",
        "a5",
    ]
    assert state.stage == "a5"
    cited = {c.anchor for c in state.response.citations}
    assert cited and all(f"[{a}]" in state.response.answer for a in cited)
    texts = [
        e.sanitized_text
        for e in state.answer_bundle.selected_evidence
        if e.citation_anchor in cited
    ]  # type: ignore[union-attr]
    assert any("45 Nm" in t for t in texts)
    assert state.validation is not None and state.validation.validation_status.value == "PASSED"


def test_two_runs_give_byte_identical_state(make_pipeline: Callable[..., Pipeline]) -> None:
    # Two processes (contexts) with their own audit files: only the config fingerprint, which
    # covers the audit path, may differ.
    first = make_pipeline().run(TORQUE, request_id="same")
    second = make_pipeline().run(TORQUE, request_id="same")
    assert first.config_fingerprint != second.config_fingerprint
    first, second = (s.evolve(config_fingerprint="") for s in (first, second))
    assert _stable(first) == _stable(second)
    assert first.prompt is not None and second.prompt is not None
    assert first.prompt.prompt_text.encode() == second.prompt.prompt_text.encode()
    assert (
        first.s_ctx_md == second.s_ctx_md
        and first.final_selection_ids == second.final_selection_ids
    )


def test_base_context_unique_and_n_constant_caps(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline(
        **{
            "limits.n1_retr_max_candidates": 30,
            "limits.n2_rerank_top_k": 10,
            "limits.n3_final_selection_max": 3,
        }
    )
    state = pipe.run("How often must the HP-220 mechanical seal be inspected?")
    ids = [r.chunk_id for r in state.base_context_chunks]
    assert len(ids) == len(set(ids))
    assert len(state.views_by_stage["retrieval"]) <= 30
    assert len(state.views_by_stage["reranked"]) <= 10
    assert len(state.final_selection_ids) <= 3
    assert set(state.final_selection_ids) <= set(ids)


def test_out_of_corpus_question_is_refused_before_any_llm_call(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline().run("Who is the CEO of the company that operates this plant?")
    assert state.response is not None and state.response.status.value == "NO_EVIDENCE"
    assert state.response.answer == REFUSAL and state.response.citations == []
    assert state.llm_result is not None and state.llm_result.attempts == 0
    assert state.retrieval_bundle is not None and state.retrieval_bundle.gate is not None
    assert not state.retrieval_bundle.gate.passed


def test_planted_injection_is_quoted_never_obeyed(make_pipeline: Callable[..., Pipeline]) -> None:
    state = make_pipeline().run("Does the HP-220 pump need maintenance?")
    assert state.response is not None
    assert "no maintenance" not in state.response.answer.lower()
    # The planted chunk reaches the prompt: the instructions come before it.
    assert state.prompt is not None and state.prompt.prompt_text
    text = state.prompt.prompt_text
    assert text.index("=== SYSTEM INSTRUCTIONS ===") < text.index("=== EVIDENCE ===")


def test_llm_stages_off_give_deterministic_defaults(make_pipeline: Callable[..., Pipeline]) -> None:
    state = make_pipeline().run("AUDIENCE: technician\nTONE: chatty\nTASK: " + TORQUE)
    assert state.shape is not None
    assert (state.shape.audience, state.shape.tone, state.shape.source) == (
        "technician",
        "neutral",
        "user",
    )
    assert any("tone" in n for n in state.extras["a2_decisions"])


def test_llm_shape_with_a_provider_that_cannot_classify_blocks_with_a_clear_error(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    pipe = make_pipeline(**{"stages.llm_shape": True})
    state = pipe.run(TORQUE, request_id="blocked")
    assert state.response is not None and state.response.status.value == "FAILED"
    assert state.response.failure_reason == "STAGE_DISABLED"
    assert "stages.llm_shape" in state.extras["error"]["message"]
    assert state.answer_bundle is None  # nothing half-configured went further
    (record,) = pipe.ctx.sinks[0].find("blocked")
    assert record.generation_status is not None


def test_every_request_leaves_exactly_one_audit_record(
    make_pipeline: Callable[..., Pipeline], demo_store_dir: Path
) -> None:
    # Over the shared demo store: a missing collection's name must write nothing to it.
    pipe = make_pipeline()
    pipe.run(TORQUE, request_id="ok-1")
    pipe.run("Who is the CEO of the company that operates this plant?", request_id="ne-1")
    pipe.run(TORQUE, request_id="fail-1", collection="no-such-collection")
    sink = pipe.ctx.sinks[0]
    statuses = {rid: [r.status for r in sink.find(rid)] for rid in ("ok-1", "ne-1", "fail-1")}
    assert statuses == {"ok-1": ["OK"], "ne-1": ["NO_EVIDENCE"], "fail-1": ["FAILED"]}


def test_missing_index_fails_closed_with_an_actionable_message(
    make_pipeline: Callable[..., Pipeline], demo_store_dir: Path
) -> None:
    # Over the shared demo store: a missing collection's name must write nothing to it.
    state = make_pipeline().run(TORQUE, collection="no-such-collection")
    assert state.response is not None and state.response.status.value == "FAILED"
    assert "ingest" in state.extras["error"]["message"]


def test_step_mode_matches_auto_mode_and_round_trips_as_json(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    pipe = make_pipeline()
    state = pipe.start(TORQUE, request_id="steps")
    seen = []
    while (stage := next_stage(state)) is not None:
        before = state.history_of_stages
        state = pipe.step(RequestState.model_validate_json(state.model_dump_json()), stage=stage)
        seen.append(stage)
        assert state.steps_done == seen
        seed = BY_NAME[stage].seed
        assert state.history_of_stages == ([*before, seed] if seed else before)
    assert seen == list(STAGE_NAMES)
    auto = make_pipeline().run(TORQUE, request_id="steps")
    state, auto = (s.evolve(config_fingerprint="") for s in (state, auto))
    assert _stable(state) == _stable(auto)


def test_step_out_of_order_and_after_completion_are_clear_errors(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    pipe = make_pipeline()
    state = pipe.start(TORQUE)
    with pytest.raises(PipelineOrderError, match="next stage is 'preprocessed'"):
        pipe.step(state, stage="retrieval")
    done = pipe.finish(state)
    with pytest.raises(PipelineOrderError, match="complete"):
        pipe.step(done)


def test_invariant_checker_rejects_violations(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline()
    s0 = pipe.start(TORQUE)
    s1 = pipe.step(s0)
    s2 = pipe.step(s1)
    s3 = pipe.step(s2)  # retrieval
    rows = list(s3.base_context_chunks)
    dup = s3.evolve(base_context_chunks=[*rows, rows[0]])
    with pytest.raises(PipelineOrderError, match="duplicate"):
        check_invariants(s2, dup, "retrieval", pipe.ctx)
    edited = s3.evolve(
        base_context_chunks=[rows[0].model_copy(update={"chunk_text": "changed"}), *rows[1:]]
    )
    s4 = pipe.step(s3)
    with pytest.raises(PipelineOrderError, match="modified"):
        check_invariants(
            s3,
            edited.evolve(
                stage="reranked",
                history_of_stages=s4.history_of_stages,
                steps_done=s4.steps_done,
            ),
            "reranked",
            pipe.ctx,
        )
    with pytest.raises(PipelineOrderError, match="steps_done"):
        check_invariants(s3, s3, "reranked", pipe.ctx)
    with pytest.raises(PipelineOrderError, match="must follow the stage order"):
        check_invariants(s3, s4.evolve(stage="retrieval"), "reranked", pipe.ctx)
    ghost = s4.evolve(final_selection_ids=["not-a-chunk"])
    with pytest.raises(PipelineOrderError, match="final_selection_ids"):
        check_invariants(s3, ghost, "reranked", pipe.ctx)
    early = s4.evolve(views_by_stage={**s4.views_by_stage, "a4": []})
    with pytest.raises(PipelineOrderError, match="before its stage"):
        check_invariants(s3, early, "reranked", pipe.ctx)


def test_evolve_validates_what_it_changes_and_keeps_the_rest() -> None:
    from pydantic import ValidationError

    state = RequestState(request_id="r1", user_text="q")
    moved = state.evolve(stage="preprocessed", history_of_stages=("preprocessed",))
    assert moved.history_of_stages == ["preprocessed"]  # coerced, as full validation would
    assert (moved.request_id, moved.user_text, state.stage) == ("r1", "q", "raw")
    with pytest.raises(ValidationError):
        state.evolve(final_selection_ids=[1, 2])
    with pytest.raises(ValidationError):
        state.evolve(base_context_chunks=[{"chunk_id": "c1"}])  # an incomplete row
    with pytest.raises(ValueError, match="no field"):
        state.evolve(stagee="a2")


def test_a_pipeline_serves_requests_from_other_threads(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    # A web app builds one Pipeline at import and runs it from worker threads. The SQLite
    # audit connection used to belong to the first thread: every other one got AUDIT_FAILED.
    from concurrent.futures import ThreadPoolExecutor

    pipe = make_pipeline()
    assert pipe.run(TORQUE).response.status.value == "OK"  # type: ignore[union-attr]
    with ThreadPoolExecutor(3) as pool:
        states = list(pool.map(lambda i: pipe.run(TORQUE, request_id=f"t{i}"), range(6)))
    assert [s.response.status.value for s in states] == ["OK"] * 6  # type: ignore[union-attr]
    (sink,) = pipe.ctx.sinks
    assert sorted(r.request_id for r in sink.records() if r.request_id.startswith("t")) == [
        f"t{i}" for i in range(6)
    ]


def test_reused_request_id_fails_closed_when_the_audit_refuses_it(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    pipe = make_pipeline()
    assert pipe.run(TORQUE, request_id="dup").response.status.value == "OK"  # type: ignore[union-attr]
    again = pipe.run(TORQUE, request_id="dup")
    assert again.response is not None and again.response.status.value == "FAILED"
    assert again.response.failure_reason == "AUDIT_FAILED" and again.response.answer == ""
    assert "already exists" in again.extras["error"]["message"]
    assert len(pipe.ctx.sinks[0].find("dup")) == 1
