"""Every fault of issue 3, over real loopback HTTP, for all three HTTP provider flavours:
asserted attempt counts, statuses, reason codes, backoff delays, and identical bytes per retry.
"""

from __future__ import annotations

import json
import socket

import pytest
from llm_helpers import FakeSleep, fast_policy, make_bundle, make_prompt

from citebound.contracts import GenerationStatus, LLMExecutionResult, ReasonCode, sha256_hex
from citebound.llm import OpenAIProvider, Provider, backoff_delay, execute
from citebound.testing import ScriptedLLMServer

pytestmark = pytest.mark.integration

ANSWER = "The pump runs at 40 bar. [C0]"
POLICY = fast_policy()  # 3 attempts, backoff 0.5s doubling, capped at 8s


def run(
    provider: Provider, sleep: FakeSleep, policy: object = POLICY
) -> tuple[LLMExecutionResult, str]:
    bundle = make_bundle()
    prompt = make_prompt(bundle)
    return execute(prompt, bundle, provider, policy, sleep=sleep), prompt.prompt_sha256  # type: ignore[arg-type]


def assert_same_bytes_every_attempt(server: ScriptedLLMServer, prompt_sha256: str) -> None:
    bodies = [r.body for r in server.requests]
    assert len(set(bodies)) == 1, "request bytes changed between attempts"
    for request in server.requests:
        assert sha256_hex(request.prompt_text()) == prompt_sha256


def test_429_honours_retry_after_then_succeeds(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.error(429, retry_after="3")
    server.reply(ANSWER)
    result, sha = run(provider, fake_sleep)
    assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 2)
    assert fake_sleep.calls == [3.0]  # Retry-After (3s) beats the 0.5s backoff
    assert result.raw_model_text == ANSWER
    assert_same_bytes_every_attempt(server, sha)


def test_429_asking_longer_than_backoff_cap_gives_up(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.error(429, retry_after="120")
    server.reply(ANSWER)
    result, _ = run(provider, fake_sleep)
    assert result.generation_status is GenerationStatus.FAILED
    assert result.failure_reason == ReasonCode.LLM_RATE_LIMITED
    assert result.attempts == 1 and fake_sleep.calls == []
    assert "120" in result.message
    assert server.pending == 1


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried_with_backoff(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep, status: int
) -> None:
    server.error(status)
    server.error(status)
    server.reply(ANSWER)
    result, sha = run(provider, fake_sleep)
    assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 3)
    assert fake_sleep.calls == [0.5, 1.0]
    assert_same_bytes_every_attempt(server, sha)


def test_exhausted_retries_fail_without_raising(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    for _ in range(3):
        server.error(503)
    server.reply(ANSWER)  # never reached: the policy allows 3 attempts
    result, sha = run(provider, fake_sleep)
    assert result.generation_status is GenerationStatus.FAILED
    assert result.failure_reason == ReasonCode.LLM_RETRIES_EXHAUSTED
    assert result.attempts == 3 and len(server.requests) == 3 and server.pending == 1
    assert "LLM_SERVER_ERROR" in result.message
    assert result.raw_model_text == ""
    assert_same_bytes_every_attempt(server, sha)


def test_backoff_is_capped_exponential(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    policy = fast_policy(max_attempts=5, backoff_base_s=1.0, backoff_max_s=3.0)
    for _ in range(4):
        server.error(500)
    server.reply(ANSWER)
    result, _ = run(provider, fake_sleep, policy)
    assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 5)
    assert fake_sleep.calls == [1.0, 2.0, 3.0, 3.0]
    assert [backoff_delay(policy.llm, n) for n in (1, 2, 3, 4)] == fake_sleep.calls


def test_timeout_is_retried(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    policy = fast_policy(timeout_s=0.5)
    server.timeout(delay_s=5.0)
    server.reply(ANSWER)
    result, sha = run(provider, fake_sleep, policy)
    assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 2)
    assert fake_sleep.calls == [0.5]
    assert_same_bytes_every_attempt(server, sha)


def test_timeouts_until_exhausted(server: ScriptedLLMServer, fake_sleep: FakeSleep) -> None:
    policy = fast_policy(timeout_s=0.2, max_attempts=2)
    server.timeout(delay_s=5.0)
    server.timeout(delay_s=5.0)
    with OpenAIProvider("m", base_url=server.base_url) as provider:
        result, _ = run(provider, fake_sleep, policy)
    assert result.failure_reason == ReasonCode.LLM_RETRIES_EXHAUSTED
    assert result.attempts == 2 and "LLM_TIMEOUT" in result.message


def test_connection_reset_is_retried(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.reset()
    server.reply(ANSWER)
    result, sha = run(provider, fake_sleep)
    assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 2)
    assert_same_bytes_every_attempt(server, sha)


def test_connection_refused_exhausts(fake_sleep: FakeSleep) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1") as provider:
        result, _ = run(provider, fake_sleep)
    assert result.generation_status is GenerationStatus.FAILED
    assert result.failure_reason == ReasonCode.LLM_RETRIES_EXHAUSTED
    assert result.attempts == 3 and "LLM_CONNECTION_ERROR" in result.message


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (400, ReasonCode.LLM_BAD_REQUEST),
        (401, ReasonCode.LLM_AUTH),
        (403, ReasonCode.LLM_AUTH),
        (404, ReasonCode.LLM_NOT_FOUND),
        (422, ReasonCode.LLM_BAD_REQUEST),
    ],
)
def test_client_errors_fail_at_once(
    server: ScriptedLLMServer,
    provider: Provider,
    fake_sleep: FakeSleep,
    status: int,
    reason: ReasonCode,
) -> None:
    server.error(status, body=b'{"error": {"message": "model \'test-model\' not found"}}')
    server.reply(ANSWER)
    result, _ = run(provider, fake_sleep)
    assert result.generation_status is GenerationStatus.FAILED
    assert result.failure_reason == reason
    assert result.attempts == 1 and fake_sleep.calls == [] and server.pending == 1
    assert f"HTTP {status}" in result.message and "not found" in result.message


def test_malformed_json_fails_at_once(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.malformed_json()
    server.reply(ANSWER)
    result, _ = run(provider, fake_sleep)
    assert result.failure_reason == ReasonCode.LLM_MALFORMED_RESPONSE
    assert (result.generation_status, result.attempts) == (GenerationStatus.FAILED, 1)
    assert server.pending == 1


def test_json_of_the_wrong_shape_fails_at_once(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.malformed_json(b'{"unexpected": true}')
    result, _ = run(provider, fake_sleep)
    assert result.failure_reason == ReasonCode.LLM_MALFORMED_RESPONSE
    assert result.attempts == 1


def test_empty_choice_fails_at_once(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.empty_choice()
    server.reply(ANSWER)
    result, _ = run(provider, fake_sleep)
    assert result.failure_reason == ReasonCode.LLM_EMPTY_RESPONSE
    assert (result.generation_status, result.attempts) == (GenerationStatus.FAILED, 1)
    assert server.pending == 1


def test_finish_reason_length_is_truncated_and_not_retried(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    server.truncated("The pump runs at 40")
    server.reply(ANSWER)
    result, _ = run(provider, fake_sleep)
    assert result.generation_status is GenerationStatus.FAILED
    assert result.failure_reason == ReasonCode.LLM_TRUNCATED
    assert result.attempts == 1 and server.pending == 1
    assert result.finish_reason == "length"
    assert result.raw_model_text == "The pump runs at 40"  # kept for the audit, unedited
    assert result.completion_tokens_actual is not None


def test_mixed_faults_then_success(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
) -> None:
    policy = fast_policy(max_attempts=4, timeout_s=0.5)
    server.reset()
    server.error(429, retry_after="0")
    server.timeout(delay_s=5.0)
    server.reply(ANSWER, usage=(111, 7))
    result, sha = run(provider, fake_sleep, policy)
    assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 4)
    assert fake_sleep.calls == [0.5, 1.0, 2.0]
    assert (result.prompt_tokens_actual, result.completion_tokens_actual) == (111, 7)
    assert result.total_tokens_actual == 118
    assert_same_bytes_every_attempt(server, sha)


def _escaped_reply(http_kind: str, text_json: str) -> bytes:
    """A 200 reply of `http_kind` whose answer text is the JSON string body `text_json`,
    written with its escapes as they are (the scripted server writes UTF-8, which cannot
    carry a lone surrogate)."""
    from citebound.testing.server import _ROUTES, Step

    path = {"openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses",
            "ollama": "/api/chat"}[http_kind]  # fmt: skip
    step = Step("reply", text="@@TEXT@@", usage=(1, 1), model="test-model")
    payload = json.dumps(_ROUTES[path](step, None, 1))  # type: ignore[arg-type]
    return payload.replace("@@TEXT@@", text_json).encode("ascii")


def test_a_reply_with_a_lone_surrogate_is_malformed_not_a_crash(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep, http_kind: str
) -> None:
    """JSON may escape a lone UTF-16 surrogate ("\\ud800"); Python decodes it to a str that
    is not Unicode text, which no UTF-8 writer takes: the audit hash raised
    UnicodeEncodeError and `citebound ask` died with a traceback, the request that reached
    the model unaudited. Such a reply is malformed: failed at once with a reason."""
    server.malformed_json(_escaped_reply(http_kind, "The pump runs at 40 bar \\ud800 [C0]"))
    result, _ = run(provider, fake_sleep)
    assert result.failure_reason == ReasonCode.LLM_MALFORMED_RESPONSE
    assert (result.generation_status, result.attempts) == (GenerationStatus.FAILED, 1)
    assert "surrogate" in result.message
    result.model_dump_json().encode("utf-8")  # the result itself is Unicode text


def test_a_reply_with_an_escaped_surrogate_pair_is_an_ordinary_character(
    server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep, http_kind: str
) -> None:
    server.malformed_json(_escaped_reply(http_kind, "The pump runs at 40 bar \\ud83d\\ude00 [C0]"))
    result, _ = run(provider, fake_sleep)
    assert result.generation_status is GenerationStatus.OK
    assert result.raw_model_text == "The pump runs at 40 bar \U0001f600 [C0]"
