"""`openai` provider: any OpenAI-compatible server, Responses API or Chat Completions.

Works unchanged with OpenAI, vLLM, llama.cpp `llama-server`, LM Studio and Ollama's `/v1`
because it speaks only the documented request/response fields and takes `base_url` as given.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx

from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ConfigError
from citebound.llm.base import empty, encode_body, malformed, opt_int, post_json

__all__ = ["OPENAI_BASE_URL", "OpenAIProvider"]

OPENAI_BASE_URL = "https://api.openai.com/v1"

Api = Literal["chat", "responses"]


class OpenAIProvider:
    """OpenAI-compatible HTTP provider.

    Args:
        model: Model name sent in every call (never substituted).
        base_url: API root including `/v1`, e.g. `http://127.0.0.1:8080/v1`.
        api_key: Bearer token, or None for local servers that need none.
        api: `chat` (POST `/chat/completions`) or `responses` (POST `/responses`).
        max_tokens_field: Chat Completions field for the output cap. `max_tokens` is understood
            by every compatible server; OpenAI's reasoning models want `max_completion_tokens`.
        client: An `httpx.Client` to reuse; one is created (and owned) when omitted.

    Example:
        >>> p = OpenAIProvider("gpt-4o-mini", base_url="http://127.0.0.1:8080/v1", api="chat")
        >>> (p.name, p.model, p.url)
        ('openai', 'gpt-4o-mini', 'http://127.0.0.1:8080/v1/chat/completions')
        >>> p.close()
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_BASE_URL,
        api_key: str | None = None,
        api: Api = "chat",
        max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        client: httpx.Client | None = None,
    ) -> None:
        if not model.strip():
            raise ConfigError("the openai provider needs a model name", field="model")
        if api not in ("chat", "responses"):
            raise ConfigError(f"api must be 'chat' or 'responses', not {api!r}", field="api")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://: {base_url!r}")
        self._model = model
        self._api: Api = api
        self._max_tokens_field = max_tokens_field
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + ("/chat/completions" if api == "chat" else "/responses")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._owns_client = client is None
        self._client = client or httpx.Client(headers=headers)
        if client is not None and api_key:
            self._client.headers.update(headers)

    @property
    def name(self) -> str:
        return "openai"

    @property
    def model(self) -> str:
        return self._model

    @property
    def api(self) -> Api:
        return self._api

    def close(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> OpenAIProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request_body(self, request: ProviderRequest) -> bytes:
        """The exact bytes POSTed for `request` (identical for every attempt)."""
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        body: dict[str, Any]
        if self._api == "chat":
            body = {
                "model": self._model,
                "messages": messages,
                "temperature": request.temperature,
                self._max_tokens_field: request.max_output_tokens,
                "stream": False,
            }
        else:
            body = {
                "model": self._model,
                "input": messages,
                "temperature": request.temperature,
                "max_output_tokens": request.max_output_tokens,
                "store": False,
            }
        return encode_body(body)

    def complete(self, request: ProviderRequest) -> ProviderReply:
        data = post_json(
            self._client, self.name, self.url, self.request_body(request), request.timeout_s
        )
        if self._api == "chat":
            return _parse_chat(data)
        return _parse_responses(data)


def _parse_chat(data: dict[str, Any]) -> ProviderReply:
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise malformed("openai", "chat completion has no 'choices' list")
    if not choices:
        raise empty("openai", "chat completion returned no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise malformed("openai", "chat completion choice has no 'message' object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise malformed("openai", "chat completion message content is not a string")
    finish = choice.get("finish_reason")
    usage = _usage(data)
    return ProviderReply(
        text=content or "",
        finish_reason=finish if isinstance(finish, str) else None,
        response_id=data["id"] if isinstance(data.get("id"), str) else None,
        reported_model=data["model"] if isinstance(data.get("model"), str) else None,
        prompt_tokens=opt_int(usage.get("prompt_tokens")),
        completion_tokens=opt_int(usage.get("completion_tokens")),
        total_tokens=opt_int(usage.get("total_tokens")),
    )


def _responses_finish(data: dict[str, Any]) -> str | None:
    status = data.get("status")
    if status == "completed":
        return "stop"
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        # Normalized so the wrapper treats a capped Responses answer like a capped chat one.
        return "length" if reason == "max_output_tokens" else str(reason or "incomplete")
    return status if isinstance(status, str) else None


def _parse_responses(data: dict[str, Any]) -> ProviderReply:
    if data.get("status") == "failed":
        error = data.get("error")
        raise malformed("openai", f"response status is 'failed': {error!r}")
    output = data.get("output")
    if not isinstance(output, list):
        raise malformed("openai", "response has no 'output' list")
    parts: list[str] = []
    saw_message = False
    for item in output:
        if not isinstance(item, dict) or item.get("type") != "message":
            continue  # reasoning items and tool calls carry no answer text
        saw_message = True
        content = item.get("content")
        if not isinstance(content, list):
            raise malformed("openai", "response message has no 'content' list")
        for part in content:
            if isinstance(part, dict) and part.get("type") == "output_text":
                text = part.get("text")
                if not isinstance(text, str):
                    raise malformed("openai", "output_text part has no string 'text'")
                parts.append(text)
    if not saw_message:
        raise empty("openai", "response output holds no message")
    usage = _usage(data)
    return ProviderReply(
        text="".join(parts),
        finish_reason=_responses_finish(data),
        response_id=data["id"] if isinstance(data.get("id"), str) else None,
        reported_model=data["model"] if isinstance(data.get("model"), str) else None,
        prompt_tokens=opt_int(usage.get("input_tokens")),
        completion_tokens=opt_int(usage.get("output_tokens")),
        total_tokens=opt_int(usage.get("total_tokens")),
    )


def _usage(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage")
    return usage if isinstance(usage, dict) else {}
