"""One bounded regeneration (`[validation] regenerate_on_failure`), over real HTTP to the scripted
model server: at most one more call, its own prompt hash, both calls audited, once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from citebound.contracts.base import sha256_hex
from citebound.pipeline import Pipeline, RequestState
from citebound.policy import load_policy
from citebound.prompt.regenerate import HEADER
from citebound.testing import ScriptedLLMServer

TORQUE = "What torque should the HP-220 impeller bolts be tightened to?"
GOOD = (
    "The impeller bolts were tightened to 45 Nm in a cross pattern with a calibrated torque "
    "wrench. [C0]"
)
# Sentence 2 is cited but not supported (LOW_SUPPORT); sentence 3 carries no marker.
HALLUCINATED = GOOD + " The relief valve never needs inspection. [C0] Mars has two moons."
UNCITED = "The impeller bolts were tightened to 45 Nm. Mars has two moons."
PRESET = Path(__file__).resolve().parents[2] / "src/citebound/presets/strict-v1.toml"


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


@pytest.fixture
def regen_policy(tmp_path: Path) -> str:
    """strict-v1 with the shipped switch turned on (and short backoffs for the fault tests)."""
    text = PRESET.read_text("utf-8")
    assert "regenerate_on_failure = false" in text  # shipped off
    text = text.replace("regenerate_on_failure = false", "regenerate_on_failure = true")
    text = text.replace("backoff_base_s = 0.5", "backoff_base_s = 0.01")
    path = tmp_path / "regen.toml"
    path.write_text(text, "utf-8")
    return str(path)


@pytest.fixture
def off_policy(tmp_path: Path) -> str:
    """strict-v1 as shipped (switch off), with the same short backoffs."""
    text = PRESET.read_text("utf-8").replace("backoff_base_s = 0.5", "backoff_base_s = 0.01")
    path = tmp_path / "off.toml"
    path.write_text(text, "utf-8")
    return str(path)


def _llm(server: ScriptedLLMServer, policy: str) -> dict[str, object]:
    return {
        "provider.name": "openai",
        "provider.model": "m",
        "provider.base_url": server.base_url,
        "policy": policy,
    }


def _run(make: Callable[..., Pipeline], server: ScriptedLLMServer, policy: str) -> RequestState:
    pipe = make(**_llm(server, policy))
    state = pipe.run(TORQUE)
    assert state.response is not None and "error" not in state.extras, state.extras
    records = pipe.ctx.sinks[0].find(state.request_id)
    assert len(records) == 1 and records[0].hash_ok()  # audited exactly once
    assert records[0].record_hash == state.audit_record_hash
    return state


def test_shipped_presets_keep_regeneration_off() -> None:
    for name in ("strict-v1", "hybridrag", "superprompt-v1"):
        policy = load_policy(name)
        assert policy.validation.regenerate_on_failure is False
        on = policy.evolve(
            validation={**policy.validation.model_dump(), "regenerate_on_failure": True}
        )
        assert on.fingerprint != policy.fingerprint  # the switch is fingerprinted


@pytest.mark.integration
def test_a_hallucinated_answer_is_regenerated_and_both_calls_are_audited(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer, regen_policy: str
) -> None:
    server.reply(HALLUCINATED, usage=(100, 10))
    server.reply(GOOD, usage=(120, 12))
    pipe = make_pipeline(**_llm(server, regen_policy))
    state = pipe.run(TORQUE)
    assert state.response is not None and state.response.status.value == "OK"
    assert state.response.answer == GOOD
    assert state.response.token_usage.total == 242  # both calls are paid for
    first, second = server.requests  # exactly one more call
    sent1, sent2 = first.prompt_text(), second.prompt_text()
    # The regeneration prompt is the first prompt, byte for byte, plus the frozen section
    # naming the rejected sentences by number and reason code, and nothing of the answer.
    assert sent2.startswith(sent1) and sent2 != sent1
    added = sent2[len(sent1) :]
    assert added.startswith("\n" + HEADER + "\n")
    assert "- sentence 2: LOW_SUPPORT\n- sentence 3: UNCITED_FACTUAL_STATEMENT\n" in added
    assert "Mars" not in added and "relief valve" not in added
    assert first.messages()[0] == second.messages()[0]  # same system message

    (record,) = pipe.ctx.sinks[0].find(state.request_id)
    assert record.hash_ok() and record.schema_version >= 4
    calls = record.model_calls or []
    assert [(c.stage, c.template_id) for c in calls] == [
        ("answer", "qa_v1"),
        ("regenerate", "regenerate_v1"),
    ]
    assert [c.prompt_sha256 for c in calls] == [sha256_hex(sent1), sha256_hex(sent2)]
    assert [c.raw_output for c in calls] == [HALLUCINATED, GOOD]
    assert [(c.validation_status, c.validation_failure_reason) for c in calls] == [
        ("FAILED", "UNCITED_FACTUAL_STATEMENT"),
        ("PASSED", None),
    ]
    assert [(f.index, f.reason_code) for f in calls[0].failed_sentences] == [
        (1, "LOW_SUPPORT"),
        (2, "UNCITED_FACTUAL_STATEMENT"),
    ]
    assert [(c.attempts, c.provider, c.model_name) for c in calls] == [(1, "openai", "m")] * 2
    # The request's verdict is the regenerated answer's.
    assert (record.status, record.validation_status, record.raw_model_text) == (
        "OK",
        "PASSED",
        GOOD,
    )
    assert record.prompt_sha256 == sha256_hex(sent2) and record.attempts == 2
    note = next(r.note for r in state.stage_log if r.stage == "validated")
    assert note == "FAILED (UNCITED_FACTUAL_STATEMENT); regenerated: PASSED"


@pytest.mark.integration
def test_a_second_rejection_fails_exactly_as_without_regeneration(
    make_pipeline: Callable[..., Pipeline],
    server: ScriptedLLMServer,
    regen_policy: str,
    off_policy: str,
) -> None:
    server.reply(HALLUCINATED)
    server.reply(UNCITED)
    on = _run(make_pipeline, server, regen_policy)
    assert len(server.requests) == 2
    server.reply(UNCITED)
    off = _run(make_pipeline, server, off_policy)
    assert len(server.requests) == 3
    assert on.response is not None and off.response is not None
    fields = {"status", "answer", "citations", "failure_reason", "low_confidence", "confidence"}
    assert on.response.model_dump(include=fields) == off.response.model_dump(include=fields)
    assert on.response.status.value == "FAILED"
    assert on.response.failure_reason == "UNCITED_FACTUAL_STATEMENT"
    assert [c.stage for c in on.model_calls] == ["answer", "regenerate"]
    assert on.model_calls[1].validation_status == "FAILED"
    assert [(f.index, f.reason_code) for f in on.model_calls[1].failed_sentences] == [
        (0, "UNCITED_FACTUAL_STATEMENT"),
        (1, "UNCITED_FACTUAL_STATEMENT"),
    ]


@pytest.mark.integration
def test_a_regenerated_refusal_refuses_exactly_as_a_first_refusal(
    make_pipeline: Callable[..., Pipeline],
    server: ScriptedLLMServer,
    regen_policy: str,
    off_policy: str,
) -> None:
    refusal = load_policy("strict-v1").refusal.model_text
    server.reply(HALLUCINATED)
    server.reply(refusal)
    on = _run(make_pipeline, server, regen_policy)
    server.reply(refusal)
    off = _run(make_pipeline, server, off_policy)
    assert on.response is not None and off.response is not None
    assert on.response.status.value == off.response.status.value == "NO_EVIDENCE"
    assert on.response.answer == off.response.answer == refusal


@pytest.mark.integration
def test_switch_off_is_one_call_with_todays_bytes(
    make_pipeline: Callable[..., Pipeline],
    server: ScriptedLLMServer,
    regen_policy: str,
    off_policy: str,
) -> None:
    server.reply(HALLUCINATED)
    off = _run(make_pipeline, server, off_policy)
    assert len(server.requests) == 1  # no second call
    assert off.response is not None and off.response.failure_reason == "UNCITED_FACTUAL_STATEMENT"
    assert [c.stage for c in off.model_calls] == ["answer"]
    server.reply(HALLUCINATED)
    server.reply(GOOD)
    _run(make_pipeline, server, regen_policy)
    # The first call's request is byte for byte the same with the switch on or off.
    assert server.requests[1].body == server.requests[0].body
    assert server.requests[2].body != server.requests[0].body


@pytest.mark.integration
def test_transient_faults_are_retries_not_regenerations(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer, regen_policy: str
) -> None:
    server.error(503)
    server.reply(GOOD)
    ok = _run(make_pipeline, server, regen_policy)
    assert ok.response is not None and ok.response.status.value == "OK"
    assert [(c.stage, c.attempts) for c in ok.model_calls] == [("answer", 2)]
    assert server.requests[0].body == server.requests[1].body  # retried with the same bytes

    server.error(500)
    server.reply(HALLUCINATED)
    server.error(503)
    server.reply(GOOD)
    both = _run(make_pipeline, server, regen_policy)
    assert both.response is not None and both.response.status.value == "OK"
    assert [(c.stage, c.attempts) for c in both.model_calls] == [("answer", 2), ("regenerate", 2)]
    bodies = [r.body for r in server.requests[2:]]
    assert bodies[0] == bodies[1] and bodies[2] == bodies[3] and bodies[1] != bodies[2]


@pytest.mark.integration
def test_a_failed_regeneration_call_leaves_the_first_rejection(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer, regen_policy: str
) -> None:
    server.reply(HALLUCINATED)
    for _ in range(3):  # max_attempts in strict-v1
        server.error(503)
    state = _run(make_pipeline, server, regen_policy)
    assert len(server.requests) == 4
    assert (
        state.response is not None and state.response.failure_reason == "UNCITED_FACTUAL_STATEMENT"
    )
    regen = state.model_calls[1]
    assert (regen.stage, regen.failure_reason, regen.attempts) == (
        "regenerate",
        "LLM_RETRIES_EXHAUSTED",
        3,
    )
    assert regen.validation_status is None  # no answer, nothing judged


@pytest.mark.integration
def test_no_regeneration_after_a_failed_model_call(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer, regen_policy: str
) -> None:
    server.truncated(GOOD)
    state = _run(make_pipeline, server, regen_policy)
    assert len(server.requests) == 1
    assert state.response is not None and state.response.failure_reason == "GENERATION_FAILED"
    assert [c.failure_reason for c in state.model_calls] == ["LLM_TRUNCATED"]
