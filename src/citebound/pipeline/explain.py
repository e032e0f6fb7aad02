"""Why a request was not answered, in one line a person can act on (the CLI's stderr line and
the MCP server's tool error say the same)."""

from __future__ import annotations

from citebound.pipeline.state import RequestState

__all__ = ["why_not_answered"]


def why_not_answered(state: RequestState) -> str:
    """One line for stderr: the reason code and what a person can check or change."""
    resp = state.response
    assert resp is not None
    error = state.extras.get("error", {})
    gate = state.retrieval_bundle.gate if state.retrieval_bundle else None
    if resp.status.value == "NO_EVIDENCE" and gate is not None and not gate.passed:
        top = "none" if gate.max_similarity is None else f"{gate.max_similarity:.3f}"
        if gate.reason_code == "GATE_LOW_COVERAGE":
            return (
                f"{gate.reason_code}: the retrieval gate refused before any LLM call (the best "
                f"chunk holds {gate.coverage or 0:.0%} of the question's key words; rephrase "
                "with the terms your documents use)"
            )
        return (
            f"{gate.reason_code}: the retrieval gate refused before any LLM call (top "
            f"similarity {top}, min_score {gate.min_score}; {gate.chunks_above_min_score} of "
            f"{gate.min_chunks} required chunk(s) reached it)"
        )
    v = state.validation
    refused = v is not None and v.grounding_metrics.refusal_detected
    if resp.status.value == "NO_EVIDENCE" and refused:
        n = len(state.final_selection_ids)
        return (
            f"the model refused: the {n} evidence chunk(s) that passed the gate do not answer the "
            "question (--step shows them)"
        )
    message = str(error.get("message", ""))
    bundle = state.answer_bundle
    if not message and bundle is not None and bundle.messages:
        message = bundle.messages[0]  # assembly refused, e.g. QUESTION_TOO_LONG and its limit
    llm = state.llm_result
    if not message and llm is not None and llm.message:  # e.g. the model server is down
        message = f"{llm.failure_reason}: {llm.message}" if llm.failure_reason else llm.message
    parts = [resp.failure_reason or "", message]
    return ": ".join(p for p in parts if p)
