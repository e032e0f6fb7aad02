"""Seed 001 "LLM Execution Tests Run": the five invariants, one test class each, plus logs.

1. no prompt mutation  2. no silent fallback  3. no parameter drift
4. no prompt corruption across retries  5. no contract violation of the output shape
"""

from __future__ import annotations

import logging

import pytest
from llm_helpers import FakeSleep, SpyProvider, fast_policy, make_bundle, make_prompt

from citebound.contracts import (
    AssemblyStatus,
    BuildStatus,
    ChatMessage,
    GenerationStatus,
    LLMExecutionResult,
    ReasonCode,
    sha256_hex,
)
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.llm import ExtractiveProvider, Provider, execute
from citebound.testing import ScriptedLLMServer

POLICY = fast_policy()
TRICKY_SUFFIX = '\n\n  Ünïcödé µm² — 🔧 \\n "quoted" </s> {{braces}}\t  '


@pytest.mark.integration
class TestNoPromptMutation:
    def test_server_receives_exactly_the_built_prompt(
        self, server: ScriptedLLMServer, provider: Provider
    ) -> None:
        bundle = make_bundle()
        prompt = make_prompt(bundle, user_suffix=TRICKY_SUFFIX)
        before = prompt.model_dump()
        server.reply("The pump runs at 40 bar. [C0]")
        execute(prompt, bundle, provider, POLICY)
        (wire,) = server.requests
        messages = wire.messages()
        assert [m["role"] for m in messages] == ["system", "user"]  # nothing appended
        assert messages[0]["content"] == prompt.messages[0].content
        assert messages[1]["content"] == prompt.messages[1].content
        assert wire.prompt_text() == prompt.prompt_text
        assert sha256_hex(wire.prompt_text()) == prompt.prompt_sha256
        assert prompt.model_dump() == before

    def test_altered_prompt_is_never_sent(self, server: ScriptedLLMServer) -> None:
        bundle = make_bundle()
        good = make_prompt(bundle)
        tampered = good.model_copy(update={"prompt_text": good.prompt_text + " extra"})
        swapped = good.model_copy(
            update={"messages": [good.messages[0], ChatMessage(role="user", content="other")]}
        )
        wrong_hash = good.model_copy(update={"prompt_sha256": "0" * 64})
        other_request = good.model_copy(update={"request_id": "someone-else"})
        system, user = good.messages
        roles = good.model_copy(
            update={
                "messages": [
                    ChatMessage(role="user", content=system.content),
                    ChatMessage(role="system", content=user.content),
                ]
            }
        )
        for prompt in (tampered, swapped, wrong_hash, other_request, roles):
            spy = SpyProvider(ExtractiveProvider())
            result = execute(prompt, bundle, spy, POLICY)
            assert result.generation_status is GenerationStatus.FAILED
            assert result.failure_reason == ReasonCode.PROMPT_STRUCTURE
            assert result.attempts == 0 and spy.requests == []
        assert server.requests == []


@pytest.mark.integration
class TestNoSilentFallback:
    def test_model_never_changes_even_when_every_attempt_fails(
        self, server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
    ) -> None:
        for _ in range(3):
            server.error(503)
        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, provider, POLICY, sleep=fake_sleep)
        assert result.generation_status is GenerationStatus.FAILED
        assert result.model_name == provider.model == "test-model"
        assert {r.json()["model"] for r in server.requests} == {"test-model"}
        assert result.provider == provider.name

    def test_model_not_found_is_not_replaced(
        self, server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
    ) -> None:
        server.error(404)
        server.reply("never sent")
        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, provider, POLICY, sleep=fake_sleep)
        assert result.failure_reason == ReasonCode.LLM_NOT_FOUND
        assert len(server.requests) == 1 and result.model_name == "test-model"

    def test_server_side_substitution_is_logged_not_adopted(
        self,
        server: ScriptedLLMServer,
        provider: Provider,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        server.reply("The pump runs at 40 bar. [C0]", model="cheaper-model")
        server.reply("The pump runs at 40 bar. [C0]", model="test-model-2024-07-18")
        bundle = make_bundle()
        caplog.set_level(logging.INFO, logger="citebound.llm")
        first = execute(make_prompt(bundle), bundle, provider, POLICY)
        second = execute(make_prompt(bundle), bundle, provider, POLICY)
        assert first.model_name == second.model_name == "test-model"
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "reported=cheaper-model" in warnings[0]


@pytest.mark.integration
class TestNoParameterDrift:
    def test_every_attempt_sends_the_policy_parameters(
        self, server: ScriptedLLMServer, provider: Provider, http_kind: str, fake_sleep: FakeSleep
    ) -> None:
        policy = fast_policy(temperature=0.0, max_output_tokens=321)
        server.error(500)
        server.error(429, retry_after="0")
        server.reply("The pump runs at 40 bar. [C0]")
        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, provider, policy, sleep=fake_sleep)
        assert result.attempts == 3
        assert (result.temperature, result.max_output_tokens) == (0.0, 321)
        bodies = [r.json() for r in server.requests]
        assert all(b == bodies[0] for b in bodies)
        sent = bodies[0]
        if http_kind == "ollama":
            assert sent["options"] == {"temperature": 0.0, "num_predict": 321}
            assert sent["stream"] is False
        elif http_kind == "openai-responses":
            assert (sent["temperature"], sent["max_output_tokens"]) == (0.0, 321)
        else:
            assert (sent["temperature"], sent["max_tokens"]) == (0.0, 321)


@pytest.mark.integration
class TestNoPromptCorruptionAcrossRetries:
    def test_every_attempt_hashes_to_prompt_sha256(
        self, server: ScriptedLLMServer, provider: Provider, fake_sleep: FakeSleep
    ) -> None:
        policy = fast_policy(max_attempts=5, timeout_s=0.5)
        server.reset()
        server.error(503)
        server.timeout(delay_s=5.0)
        server.error(429, retry_after="0")
        server.reply("The pump runs at 40 bar. [C0]")
        bundle = make_bundle()
        prompt = make_prompt(bundle, user_suffix=TRICKY_SUFFIX)
        result = execute(prompt, bundle, provider, policy, sleep=fake_sleep)
        assert (result.generation_status, result.attempts) == (GenerationStatus.OK, 5)
        assert len(server.requests) == 5
        assert len({r.body for r in server.requests}) == 1
        for wire in server.requests:
            assert sha256_hex(wire.prompt_text().encode("utf-8")) == prompt.prompt_sha256


class TestOutputShape:
    FIELDS = frozenset(
        {
            "request_id",
            "provider",
            "model_name",
            "prompt_sha256",
            "generation_status",
            "failure_reason",
            "message",
            "raw_model_text",
            "finish_reason",
            "attempts",
            "llm_latency_ms",
            "response_id",
            "prompt_tokens_actual",
            "completion_tokens_actual",
            "total_tokens_actual",
            "temperature",
            "max_output_tokens",
        }
    )

    def check(self, result: LLMExecutionResult) -> None:
        assert set(result.model_dump()) == self.FIELDS
        assert LLMExecutionResult.model_validate_json(result.model_dump_json()) == result
        assert (result.failure_reason is None) == (result.generation_status is GenerationStatus.OK)
        assert result.llm_latency_ms >= 0
        if result.generation_status is not GenerationStatus.OK:
            assert result.message

    @pytest.mark.integration
    def test_raw_text_is_returned_unparsed_and_unedited(
        self, server: ScriptedLLMServer, provider: Provider
    ) -> None:
        raw = "  The pump runs at 40 bar. [C0]\n\n[C9] <b>kept</b>  \n"
        server.reply(raw, usage=(10, 5))
        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, provider, POLICY)
        self.check(result)
        assert result.raw_model_text == raw
        assert (result.prompt_tokens_actual, result.completion_tokens_actual) == (10, 5)
        assert result.total_tokens_actual == 15

    @pytest.mark.parametrize(
        ("assembly", "build", "status"),
        [
            (AssemblyStatus.NO_EVIDENCE, BuildStatus.NO_EVIDENCE, GenerationStatus.NO_EVIDENCE),
            (AssemblyStatus.FAILED, BuildStatus.FAILED, GenerationStatus.FAILED),
            (AssemblyStatus.OK, BuildStatus.FAILED, GenerationStatus.FAILED),
            (AssemblyStatus.OK, BuildStatus.NO_EVIDENCE, GenerationStatus.NO_EVIDENCE),
        ],
    )
    def test_skipped_results(
        self, assembly: AssemblyStatus, build: BuildStatus, status: GenerationStatus
    ) -> None:
        bundle = make_bundle(status=assembly)
        spy = SpyProvider(ExtractiveProvider())
        result = execute(make_prompt(bundle, status=build), bundle, spy, POLICY)
        self.check(result)
        assert result.generation_status is status
        assert (result.attempts, result.failure_reason) == (0, ReasonCode.LLM_SKIPPED)
        assert spy.requests == [] and result.llm_latency_ms == 0.0

    def test_provider_that_raises_something_else_fails_closed(self) -> None:
        class Broken:
            name = "broken"
            model = "broken-1"

            def complete(self, request: ProviderRequest) -> ProviderReply:
                raise KeyError("choices")

        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, Broken(), POLICY)
        self.check(result)
        assert result.failure_reason == ReasonCode.INTERNAL_ERROR
        assert result.attempts == 1 and "KeyError" in result.message

    def test_empty_text_is_not_ok(self) -> None:
        class Silent:
            name = "silent"
            model = "silent-1"

            def complete(self, request: ProviderRequest) -> ProviderReply:
                return ProviderReply(text="  \n", finish_reason="stop")

        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, Silent(), POLICY)
        self.check(result)
        assert result.failure_reason == ReasonCode.LLM_EMPTY_RESPONSE
        assert result.raw_model_text == "  \n"


@pytest.mark.integration
def test_logs_carry_hash_and_tokens_never_prompt_or_answer_text(
    server: ScriptedLLMServer,
    provider: Provider,
    fake_sleep: FakeSleep,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "Secret valve code ZX-9041 is in cabinet 7."
    bundle = make_bundle([secret, "The pump runs at 40 bar."])
    prompt = make_prompt(bundle)
    answer = "Secret valve code ZX-9041 is in cabinet 7. [C0]"
    server.error(500, body=b"oops")
    server.reply(answer, usage=(42, 9))
    caplog.set_level(logging.DEBUG)
    result = execute(prompt, bundle, provider, POLICY, sleep=fake_sleep)
    assert result.generation_status is GenerationStatus.OK
    messages = [r.getMessage() for r in caplog.records]
    assert messages, "execution logged nothing"
    everything = "\n".join(messages)
    for fragment in ("ZX-9041", "cabinet 7", "only from the evidence", "At what pressure"):
        assert fragment not in everything
    results = [m for m in messages if m.startswith("llm result")]
    assert len(results) == 1
    assert prompt.prompt_sha256 in results[0]
    assert "prompt_tokens=42" in results[0] and "completion_tokens=9" in results[0]
    assert any("attempt=1/3" in m for m in messages) and any("attempt=2/3" in m for m in messages)
