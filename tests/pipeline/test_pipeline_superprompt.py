"""Seed 002 §7's five acceptance criteria for `superprompt-v1`, with the LLM stages off and on
(A4 condenser, A5 format enforcer against the scripted model over real HTTP); A4's grounding
fallback; A5's effect on the prompt; a switch on without an LLM is a clear error."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from citebound.pipeline import Pipeline, RequestState
from citebound.prompt.condense import s_ctx_lines
from citebound.testing import ScriptedLLMServer

TORQUE = "What torque should the HP-220 impeller bolts be tightened to?"
HEADERS = ("## System_MD", "## Prompt_MD", "## S_CTX_MD", "## Attachments_MD")


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


def _llm(server: ScriptedLLMServer, **switches: bool) -> dict[str, object]:
    return {
        "policy": "superprompt-v1",
        "provider.name": "openai",
        "provider.model": "m",
        "provider.base_url": server.base_url,
        **{f"stages.{k}": v for k, v in switches.items()},
    }


def _snapshot(state: RequestState) -> str:
    """§7.1: the fields that must be byte-identical between two runs."""
    assert state.body is not None
    return json.dumps(
        {
            "body": state.body.model_dump(),
            "views": state.views_by_stage,
            "final": state.final_selection_ids,
            "s_ctx": state.s_ctx_md,
            "prompt": state.prompt.prompt_text if state.prompt else None,
        },
        sort_keys=True,
        ensure_ascii=False,
    )


def _criteria(state: RequestState, policy_caps: Any) -> None:
    """§7.2, §7.3 and §7.5."""
    ids = [r.chunk_id for r in state.base_context_chunks]
    assert len(ids) == len(set(ids))  # 2: no duplicates
    assert len(state.views_by_stage["retrieval"]) <= policy_caps.n1_retr_max_candidates  # 3
    assert len(state.views_by_stage["reranked"]) <= policy_caps.n2_rerank_top_k
    assert len(state.final_selection_ids) <= policy_caps.n3_final_selection_max
    ready = state.prompt_ready  # 5: stable blocks, fenced attachments
    positions = [ready.index(h) for h in HEADERS]
    assert positions == sorted(positions) and ready.startswith("## System_MD\n")
    attachments = ready.split("## Attachments_MD\n")[1]
    assert attachments.startswith("[C0]\nSOURCE: ") and "\nSPAN: " in attachments
    assert "\n```text\n" in attachments or "\n````" in attachments
    assert state.system_md and state.prompt_md and state.s_ctx_md and state.attachments_md


def _run_off(make_pipeline: Callable[..., Pipeline], **kw: Any) -> RequestState:
    return make_pipeline(policy="superprompt-v1", **kw).run(TORQUE)


def test_llm_stages_off_meet_the_acceptance_criteria(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    a = _run_off(make_pipeline)
    b = _run_off(make_pipeline)
    assert _snapshot(a) == _snapshot(b)  # 1
    pipe = make_pipeline(policy="superprompt-v1")
    _criteria(a, pipe.ctx.policy.retrieval)
    assert a.prompt is not None and a.prompt.template_id == "superprompt_v1"
    assert a.extras["a4"] == {"source": "extractive"}
    assert a.response is not None and a.response.status.value == "OK", a.response
    assert a.validation is not None and a.validation.validation_status == "PASSED"
    assert a.s_ctx_md.startswith("(Condensed view for orientation only")


def _facts(make_pipeline: Callable[..., Pipeline]) -> list[str]:
    off = _run_off(make_pipeline)
    return s_ctx_lines(off.s_ctx_md)


def _script(server: ScriptedLLMServer, a4: dict[str, Any], answer: str) -> None:
    server.reply(json.dumps(a4))
    server.reply(json.dumps({"normalized_format_spec": "bullet list", "hard_rules": []}))
    server.reply(answer)


@pytest.mark.integration
def test_llm_stages_on_meet_the_acceptance_criteria(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    facts = _facts(make_pipeline)
    a4 = {"facts": facts[:2], "constraints": [], "open_issues": [], "relevance": [1]}
    answer = f"- {facts[0].rstrip('.')} [C0]."
    states = []
    for _ in range(2):
        _script(server, a4, answer)
        pipe = make_pipeline(**_llm(server, llm_condense=True, llm_format=True))
        states.append(pipe.run(TORQUE + " Answer as a bullet list."))
    a, b = states
    assert _snapshot(a) == _snapshot(b)  # 1, with the scripted model at temperature 0
    _criteria(a, pipe.ctx.policy.retrieval)
    assert a.extras["a4"]["source"] == "llm" and a.extras["a4"]["grounded"] is True
    assert "Facts:\n- " + facts[0] in a.s_ctx_md
    calls = a.extras["llm_stage_calls"]
    assert [c["stage"] for c in calls] == ["a4", "a5"]
    assert all(c["generation_status"] == "OK" and len(c["prompt_sha256"]) == 64 for c in calls)
    assert a.extras["format_enforcer"]["normalized_format_spec"] == "bullet list"
    assert "Output format (bullet list):" in a.system_md
    sent = server.requests[0].messages()[1]["content"]
    assert "ATTACHMENTS:" in sent and "do not add any fact" in sent
    assert a.response is not None and a.response.status.value == "OK", a.response


@pytest.mark.integration
def test_a4_output_with_a_new_fact_is_replaced_by_the_extractive_view(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    extractive = _run_off(make_pipeline).s_ctx_md
    a4 = {"facts": ["The impeller bolts take 95 Nm."], "constraints": [], "open_issues": []}
    server.reply(json.dumps(a4))
    server.reply(
        "NO_EVIDENCE: The provided evidence does not contain sufficient information "
        "to answer this question."
    )
    state = make_pipeline(**_llm(server, llm_condense=True)).run(TORQUE)
    info = state.extras["a4"]
    assert info["replaced_llm_output"] is True and info["source"] == "extractive"
    assert "'95'" in info["reason"]
    assert state.s_ctx_md == extractive and "95 Nm" not in state.prompt_ready


def test_switch_on_without_an_llm_blocks_with_a_clear_error(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline(policy="superprompt-v1", **{"stages.llm_condense": True}).run(TORQUE)
    assert state.response is not None and state.response.status.value == "FAILED"
    assert state.response.failure_reason == "STAGE_DISABLED"
    assert "stages.llm_condense" in state.extras["error"]["message"]  # 4: never half-configured


def test_requested_format_reaches_the_prompt_without_llm(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline(policy="superprompt-v1").run(f"Task: {TORQUE}\nFormat: numbered list")
    assert state.extras["format_enforcer"]["normalized_format_spec"] == "numbered list"
    assert "Output format (numbered list):" in state.prompt_ready
    plain = make_pipeline(policy="superprompt-v1").run(TORQUE)
    assert "Output format (plain):" in plain.prompt_ready


def test_a2_shape_reaches_the_system_block(make_pipeline: Callable[..., Pipeline]) -> None:
    shaped = make_pipeline(policy="superprompt-v1").run(
        f"Task: {TORQUE}\nAudience: technician\nDepth: brief"
    )
    assert "writing for technician readers" in shaped.system_md
    assert "Keep the answer brief" in shaped.system_md
