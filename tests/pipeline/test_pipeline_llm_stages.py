"""Optional LLM stages (A2 shape, A3 semantic keep/drop) over real HTTP to the scripted server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from citebound.pipeline import Pipeline
from citebound.testing import ScriptedLLMServer

TORQUE = "What torque should the HP-220 impeller bolts be tightened to?"


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


def _llm(server: ScriptedLLMServer, **switches: bool) -> dict[str, object]:
    return {
        "provider.name": "openai",
        "provider.model": "m",
        "provider.base_url": server.base_url,
        **{f"stages.{k}": v for k, v in switches.items()},
    }


@pytest.mark.integration
def test_a3_semantic_gate_keeps_only_what_the_model_chose(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply(json.dumps({"keep": [2, 99, "x"]}))
    server.reply(
        "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
    )
    state = make_pipeline(**_llm(server, llm_gate=True)).run(TORQUE)
    a3 = next(r for r in state.stage_log if r.stage == "a3")
    reranked = state.views_by_stage["reranked"]
    assert state.views_by_stage["a3"] == [reranked[1]]
    assert {d.reason_code for d in a3.dropped} >= {"DROP_SEMANTIC"}
    assert state.retrieval_bundle is not None and [
        r.rank for r in state.retrieval_bundle.results
    ] == [0]
    assert "PASSAGES:" in server.requests[0].messages()[1]["content"]
    assert state.response is not None and state.response.status.value == "NO_EVIDENCE"


@pytest.mark.integration
def test_a3_keeping_nothing_refuses_before_the_answer_call(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply('{"keep": []}')
    state = make_pipeline(**_llm(server, llm_gate=True)).run(TORQUE)
    assert state.response is not None and state.response.status.value == "NO_EVIDENCE"
    assert (
        len(server.requests) == 1
        and state.llm_result is not None
        and state.llm_result.attempts == 0
    )


@pytest.mark.integration
def test_a2_llm_shape_clamps_values_outside_the_enums(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply(
        json.dumps(
            {
                "system": "maintenance advisor",
                "audience": "aliens",
                "tone": "formal",
                "depth": "detailed",
                "confidence": "medium",
            }
        )
    )
    server.reply(
        "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
    )
    state = make_pipeline(**_llm(server, llm_shape=True)).run(TORQUE)
    assert state.shape is not None
    assert (state.shape.system, state.shape.audience, state.shape.source) == (
        "maintenance advisor",
        "engineer",
        "llm",
    )
    assert any("audience" in n for n in state.extras["a2_decisions"])


@pytest.mark.integration
def test_unusable_chooser_reply_blocks_with_a_clear_error(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply("Sure! Here are the passages I would keep: 1 and 2.")
    state = make_pipeline(**_llm(server, llm_gate=True)).run(TORQUE)
    assert state.response is not None and state.response.status.value == "FAILED"
    assert state.response.failure_reason == "STAGE_DISABLED"
    assert "stages.llm_gate" in state.extras["error"]["message"]


def test_a3_llm_gate_with_the_extractive_provider_is_a_clear_error(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline(**{"stages.llm_gate": True}).run(TORQUE)
    assert state.response is not None and state.response.failure_reason == "STAGE_DISABLED"
    assert "extractive" in state.extras["error"]["message"]


def test_a_misconfigured_provider_fails_with_config_invalid(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline(**{"provider.name": "ollama"}).run(TORQUE)  # no model configured
    assert state.response is not None and state.response.status.value == "FAILED"
    assert state.response.failure_reason == "CONFIG_INVALID"
    assert "model" in state.extras["error"]["message"]
