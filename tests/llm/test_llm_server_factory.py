"""ScriptedLLMServer behaviour, make_provider options, Retry-After parsing, public surface."""

from __future__ import annotations

import email.utils

import httpx
import pytest
from llm_helpers import fast_policy, make_bundle, make_prompt

import citebound.llm
import citebound.testing
from citebound.contracts import GenerationStatus
from citebound.errors import ConfigError
from citebound.llm import (
    ExtractiveProvider,
    OllamaProvider,
    OpenAIProvider,
    execute,
    make_provider,
    parse_retry_after,
)
from citebound.testing import ScriptedLLMServer

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.integration
class TestScriptedServer:
    def test_nothing_queued_is_a_clear_500(self, server: ScriptedLLMServer) -> None:
        response = httpx.post(server.base_url + "/chat/completions", json=CHAT)
        assert response.status_code == 500
        assert "no reply queued" in response.text

    def test_default_text_answers_every_route(self) -> None:
        with ScriptedLLMServer(default_text="ok") as server:
            chat = httpx.post(server.base_url + "/chat/completions", json=CHAT).json()
            resp = httpx.post(server.base_url + "/responses", json=CHAT).json()
            olla = httpx.post(server.root_url + "/api/chat", json=CHAT).json()
        assert chat["choices"][0]["message"]["content"] == "ok"
        assert resp["output"][0]["content"][0]["text"] == "ok"
        assert olla["message"]["content"] == "ok" and olla["done"] is True

    def test_unknown_path_is_404_and_keeps_the_script(self, server: ScriptedLLMServer) -> None:
        server.reply("kept")
        assert httpx.post(server.root_url + "/v2/nothing", json=CHAT).status_code == 404
        assert server.pending == 1 and len(server.requests) == 1

    def test_records_raw_bytes_and_headers(self, server: ScriptedLLMServer) -> None:
        server.reply("x")
        body = '{"model":"m","messages":[{"role":"user","content":"µ  "}]}'.encode()
        httpx.post(
            server.base_url + "/chat/completions",
            content=body,
            headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
        )
        (request,) = server.requests
        assert request.body == body
        assert request.headers["authorization"] == "Bearer k"
        assert request.path == "/v1/chat/completions"

    def test_429_carries_retry_after(self, server: ScriptedLLMServer) -> None:
        server.error(429, retry_after="7")
        response = httpx.post(server.base_url + "/chat/completions", json=CHAT)
        assert (response.status_code, response.headers["retry-after"]) == (429, "7")

    def test_responses_truncation_looks_like_openai(self, server: ScriptedLLMServer) -> None:
        server.truncated("cut")
        data = httpx.post(server.base_url + "/responses", json=CHAT).json()
        assert data["status"] == "incomplete"
        assert data["incomplete_details"] == {"reason": "max_output_tokens"}

    def test_reported_model_is_the_requested_one(self, server: ScriptedLLMServer) -> None:
        server.reply("x")
        data = httpx.post(server.base_url + "/chat/completions", json=CHAT).json()
        assert data["model"] == "m"


class TestMakeProvider:
    def test_extractive_is_the_offline_default(self) -> None:
        provider = make_provider("extractive")
        assert isinstance(provider, ExtractiveProvider)
        assert provider.model == "extractive-v14"

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"name": "gpt"}, "provider"),
            ({"name": "openai"}, "model"),
            ({"name": "ollama"}, "model"),
            ({"name": "extractive", "model": "llama3"}, "model"),
        ],
    )
    def test_bad_options_name_the_field(self, kwargs: dict[str, str], field: str) -> None:
        name = kwargs.pop("name")
        with pytest.raises(ConfigError) as err:
            make_provider(name, **kwargs)  # type: ignore[arg-type]
        assert err.value.field == field

    def test_openai_cloud_needs_a_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            make_provider("openai", model="gpt-4o-mini")

    def test_named_key_env_must_exist(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("MY_LLM_KEY", raising=False)
        with pytest.raises(ConfigError, match="MY_LLM_KEY"):
            make_provider(
                "openai", model="m", base_url="http://127.0.0.1:1/v1", api_key_env="MY_LLM_KEY"
            )

    def test_local_server_needs_no_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        provider = make_provider("openai", model="m", base_url="http://127.0.0.1:8080/v1")
        assert isinstance(provider, OpenAIProvider)
        provider.close()

    def test_ollama_base_url(self) -> None:
        provider = make_provider("ollama", model="llama3", base_url="http://127.0.0.1:9/")
        assert isinstance(provider, OllamaProvider)
        assert provider.url == "http://127.0.0.1:9/api/chat"
        provider.close()

    @pytest.mark.integration
    @pytest.mark.parametrize("api", ["chat", "responses"])
    def test_key_from_env_is_sent_as_bearer(
        self, server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, api: str
    ) -> None:
        monkeypatch.setenv("MY_LLM_KEY", "sk-test-123")
        provider = make_provider(
            "openai",
            model="m",
            base_url=server.base_url,
            api_key_env="MY_LLM_KEY",
            api=api,  # type: ignore[arg-type]
        )
        server.reply("The pump runs at 40 bar. [C0]")
        bundle = make_bundle()
        result = execute(make_prompt(bundle), bundle, provider, fast_policy())
        provider.close()  # type: ignore[attr-defined]
        assert result.generation_status is GenerationStatus.OK
        (request,) = server.requests
        assert request.headers["authorization"] == "Bearer sk-test-123"
        assert request.path == ("/v1/chat/completions" if api == "chat" else "/v1/responses")
        assert "sk-test-123" not in result.model_dump_json()


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after(" 0.25 ") == 0.25
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("nan") is None
    assert parse_retry_after("later") is None
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after(date, now=1_000_000.0) == pytest.approx(30.0)


def test_public_surface_is_pinned() -> None:
    assert sorted(citebound.llm.__all__) == [
        "EXTRACTIVE_MODEL",
        "ExtractiveProvider",
        "OllamaProvider",
        "OpenAIProvider",
        "PROVIDERS",
        "Provider",
        "ProviderReply",
        "ProviderRequest",
        "backoff_delay",
        "citation_marker",
        "execute",
        "make_provider",
        "marker_pattern",
        "parse_retry_after",
    ]
    assert sorted(citebound.testing.__all__) == ["RecordedRequest", "ScriptedLLMServer", "Step"]
    for name in citebound.llm.__all__:
        assert getattr(citebound.llm, name) is not None
