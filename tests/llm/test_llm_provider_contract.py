"""ONE contract suite every provider passes (house rule 9; seed 003 §5: same behaviour offline
and online). HTTP providers run against the scripted server over real loopback HTTP; the
server answers with what the extractive answerer gives for the same bundle, so every provider
must come back with the same, validator-clean text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from llm_helpers import (
    HTTP_KINDS,
    SpyProvider,
    check_answer,
    extractive_answer,
    fast_policy,
    http_provider,
    make_bundle,
    make_prompt,
)

from citebound.contracts import (
    AssemblyStatus,
    GenerationStatus,
    LLMExecutionResult,
    ReasonCode,
    sha256_hex,
)
from citebound.llm import ExtractiveProvider, Provider, execute
from citebound.testing import ScriptedLLMServer

POLICY = fast_policy()


@dataclass
class Harness:
    kind: str
    provider: SpyProvider
    server: ScriptedLLMServer | None

    def queue(self, text: str) -> None:
        if self.server is not None:
            self.server.reply(text)

    def wire_requests(self) -> int:
        return 0 if self.server is None else len(self.server.requests)


@pytest.fixture(
    params=[
        "extractive",
        *(pytest.param(k, marks=pytest.mark.integration) for k in HTTP_KINDS),
    ]
)
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    kind = str(request.param)
    if kind == "extractive":
        yield Harness(kind, SpyProvider(ExtractiveProvider()), None)
        return
    with ScriptedLLMServer() as server:
        inner: Provider = http_provider(kind, server)
        yield Harness(kind, SpyProvider(inner), server)
        inner.close()  # type: ignore[attr-defined]


def test_is_a_provider(harness: Harness) -> None:
    assert isinstance(harness.provider.inner, Provider)
    assert harness.provider.name in ("extractive", "openai", "ollama")
    assert harness.provider.model


def test_ok_answer_has_the_full_result_shape(harness: Harness) -> None:
    bundle = make_bundle()
    prompt = make_prompt(bundle)
    expected = extractive_answer(bundle, POLICY)
    harness.queue(expected)
    result = execute(prompt, bundle, harness.provider, POLICY)
    assert result.generation_status is GenerationStatus.OK
    assert result.failure_reason is None and result.message == ""
    assert result.raw_model_text == expected
    assert result.attempts == 1
    assert result.finish_reason == "stop"
    assert result.provider == harness.provider.name
    assert result.model_name == harness.provider.model
    assert result.prompt_sha256 == prompt.prompt_sha256
    assert result.temperature == POLICY.llm.temperature
    assert result.max_output_tokens == POLICY.llm.max_output_tokens
    assert result.request_id == bundle.request_id
    assert LLMExecutionResult.model_validate_json(result.model_dump_json()) == result


def test_answer_passes_the_validator_rules(harness: Harness) -> None:
    bundle = make_bundle(question="seals hours relief valves pressure")
    harness.queue(extractive_answer(bundle, POLICY))
    result = execute(make_prompt(bundle), bundle, harness.provider, POLICY)
    assert result.raw_model_text != POLICY.refusal.model_text
    assert check_answer(result.raw_model_text, bundle, POLICY.refusal.model_text) == []


def test_refusal_passes_through_unchanged(harness: Harness) -> None:
    bundle = make_bundle(question="Who painted the Mona Lisa?")
    harness.queue(POLICY.refusal.model_text)
    result = execute(make_prompt(bundle), bundle, harness.provider, POLICY)
    assert result.generation_status is GenerationStatus.OK  # R5 decides it is a refusal
    assert result.raw_model_text == POLICY.refusal.model_text


@pytest.mark.parametrize("status", [AssemblyStatus.NO_EVIDENCE, AssemblyStatus.FAILED])
def test_no_call_unless_assembly_is_ok(harness: Harness, status: AssemblyStatus) -> None:
    bundle = make_bundle(status=status)
    result = execute(make_prompt(bundle), bundle, harness.provider, POLICY)
    assert result.generation_status.value == status.value
    assert result.attempts == 0
    assert result.failure_reason == ReasonCode.LLM_SKIPPED
    assert result.raw_model_text == ""
    assert harness.provider.requests == []
    assert harness.wire_requests() == 0


def test_provider_gets_the_exact_prompt_and_policy_parameters(harness: Harness) -> None:
    bundle = make_bundle()
    prompt = make_prompt(bundle, user_suffix="\n  µm² — 🔧 trailing  ")
    harness.queue("The pump runs at 40 bar. [C0]")
    execute(prompt, bundle, harness.provider, POLICY)
    (sent,) = harness.provider.requests
    assert sent.prompt_text == prompt.prompt_text
    assert sha256_hex(sent.prompt_text) == prompt.prompt_sha256
    assert sent.temperature == POLICY.llm.temperature
    assert sent.max_output_tokens == POLICY.llm.max_output_tokens
    assert sent.timeout_s == POLICY.llm.timeout_s
    # Only the in-process answerer has no wire; every HTTP kind's request is checked there too.
    assert (harness.server is None) == (harness.kind == "extractive"), harness.kind
    if harness.server is not None:
        (wire,) = harness.server.requests
        assert sha256_hex(wire.prompt_text()) == prompt.prompt_sha256
        assert wire.json()["model"] == harness.provider.model


def test_same_input_same_answer(harness: Harness) -> None:
    bundle = make_bundle()
    text = extractive_answer(bundle, POLICY)
    harness.queue(text)
    harness.queue(text)
    a = execute(make_prompt(bundle), bundle, harness.provider, POLICY)
    b = execute(make_prompt(bundle), bundle, harness.provider, POLICY)
    assert (a.generation_status, a.raw_model_text) == (b.generation_status, b.raw_model_text)
