"""Every LLM stage call (A0 header mapping, A2 shape, the follow-up rewrite, A3 gate, A4
condenser, A5 format enforcer) is one exact-bytes call through `llm.execute`, recorded once in
the audit record's `model_calls`, over real HTTP to the scripted model server (#19)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from citebound.contracts.base import sha256_hex
from citebound.contracts.conversation import ConversationTurn
from citebound.pipeline import Pipeline
from citebound.testing import ScriptedLLMServer

QUESTION = (
    "Task: What torque should the HP-220 impeller bolts be tightened to? "
    "Answer as a bullet list.\n"
    "Wartungsfenster: night shift only"
)
HISTORY = [ConversationTurn(question="Which pump is the HP-220?", answer="")]
ANSWER = (
    "- The impeller bolts were tightened to 45 Nm in a cross pattern with a calibrated "
    "torque wrench. [C0]"
)
REPLIES = {
    "a0": {"mappings": [{"header": "Wartungsfenster", "key": "constraints", "confidence": 0.9}]},
    "a2": {
        "system": "maintenance advisor",
        "audience": "engineer",
        "tone": "formal",
        "depth": "detailed",
        "confidence": "medium",
    },
    "rewrite": {"query": "HP-220 impeller bolt torque"},
    "a3": {"keep": [1, 2]},
    "a4": {"facts": [], "constraints": [], "open_issues": [], "relevance": [1]},
    "a5": {"normalized_format_spec": "bullet list", "hard_rules": []},
}
SWITCHES = (
    "llm_header_mapping",
    "llm_shape",
    "llm_rewrite",
    "llm_gate",
    "llm_condense",
    "llm_format",
)


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


def _pipe(make: Callable[..., Pipeline], server: ScriptedLLMServer, *on: str) -> Pipeline:
    return make(
        **{
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": server.base_url,
            "policy": "superprompt-v1",
            **{f"stages.{s}": True for s in on},
        }
    )


@pytest.mark.integration
def test_every_enabled_stage_call_is_audited_exactly_once(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    texts = [json.dumps(r) for r in REPLIES.values()] + [ANSWER]
    for text in texts:
        server.reply(text)
    pipe = _pipe(make_pipeline, server, *SWITCHES)
    state = pipe.run(QUESTION, history=HISTORY)
    assert state.response is not None and "error" not in state.extras, state.extras
    (record,) = pipe.ctx.sinks[0].find(state.request_id)
    assert record.hash_ok() and record.model_calls == state.model_calls
    calls = record.model_calls or []
    assert [c.stage for c in calls] == [*REPLIES, "answer"]
    assert len(server.requests) == len(calls)  # every request to the model is listed
    for call, sent, text in zip(calls, server.requests, texts, strict=True):
        assert call.prompt_sha256 == sha256_hex(sent.prompt_text())  # the exact bytes sent
        assert (call.raw_output, call.attempts, call.generation_status) == (text, 1, "OK")
        assert (call.provider, call.model_name) == ("openai", "m")
    assert [c.template_id for c in calls] == [
        "stage_a0_v1",
        "stage_a2_v1",
        "followup_rewrite_v1",
        "stage_a3_v1",
        "stage_a4_v1",
        "stage_a5_v1",
        "superprompt_v1",
    ]
    # Only the answer is judged by R5; the stage replies are decisions, not answers.
    assert [c.validation_status is None for c in calls] == [True] * 6 + [False]
    # The decisions the replies drove (one per stage).
    assert state.extras["normalized_map"] == {"Wartungsfenster": "constraints"}
    assert state.shape is not None and state.shape.source == "llm"
    assert state.extras["followup_rewrite"]["rule"] == "llm"
    assert [c["stage"] for c in state.extras["llm_stage_calls"]] == ["a4", "a5"]


@pytest.mark.integration
def test_stages_switched_off_make_no_calls(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply(json.dumps(REPLIES["a2"]))
    server.reply(ANSWER)
    pipe = _pipe(make_pipeline, server, "llm_shape")
    state = pipe.run(QUESTION, history=HISTORY)
    (record,) = pipe.ctx.sinks[0].find(state.request_id)
    assert [c.stage for c in record.model_calls or []] == ["a2", "answer"]


@pytest.mark.integration
def test_a_stage_call_that_blocks_the_request_is_still_audited(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply(json.dumps(REPLIES["a2"]))
    server.reply("Sure! I would keep passages 1 and 2.")
    pipe = _pipe(make_pipeline, server, "llm_shape", "llm_gate")
    state = pipe.run(QUESTION)
    assert state.response is not None and state.response.failure_reason == "STAGE_DISABLED"
    (record,) = pipe.ctx.sinks[0].find(state.request_id)
    assert record.hash_ok()
    assert [(c.stage, c.raw_output) for c in record.model_calls or []] == [
        ("a2", json.dumps(REPLIES["a2"])),
        ("a3", "Sure! I would keep passages 1 and 2."),
    ]


@pytest.mark.integration
def test_a_stage_call_retries_transient_faults_with_the_same_bytes(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.error(503)
    server.reply(json.dumps(REPLIES["a2"]))
    server.reply(ANSWER)
    pipe = _pipe(make_pipeline, server, "llm_shape")
    state = pipe.run(QUESTION)
    assert [(c.stage, c.attempts) for c in state.model_calls] == [("a2", 2), ("answer", 1)]
    assert server.requests[0].body == server.requests[1].body
