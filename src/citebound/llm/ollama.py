"""`ollama` provider: Ollama's native `/api/chat` (a local model, no network, e.g. `llama3`).

Sends `stream: false` and the policy's parameters as `options.temperature` and
`options.num_predict`. Ollama reports no response id; `done_reason` becomes `finish_reason`.
"""

from __future__ import annotations

from typing import Any

import httpx

from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ConfigError
from citebound.llm.base import encode_body, malformed, opt_int, post_json

__all__ = ["OLLAMA_BASE_URL", "OllamaProvider"]

OLLAMA_BASE_URL = "http://127.0.0.1:11434"


class OllamaProvider:
    """Native Ollama chat provider.

    Args:
        model: Model tag as Ollama knows it, e.g. `llama3` or `llama3.1:8b`.
        base_url: Server root without `/api`, default `http://127.0.0.1:11434`.
        client: An `httpx.Client` to reuse; one is created (and owned) when omitted.

    Example:
        >>> p = OllamaProvider("llama3")
        >>> (p.name, p.model, p.url)
        ('ollama', 'llama3', 'http://127.0.0.1:11434/api/chat')
        >>> p.close()
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OLLAMA_BASE_URL,
        client: httpx.Client | None = None,
    ) -> None:
        if not model.strip():
            raise ConfigError("the ollama provider needs a model name", field="model")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://: {base_url!r}")
        self._model = model
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/api/chat"
        self._owns_client = client is None
        self._client = client or httpx.Client()

    @property
    def name(self) -> str:
        return "ollama"

    @property
    def model(self) -> str:
        return self._model

    def close(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> OllamaProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request_body(self, request: ProviderRequest) -> bytes:
        """The exact bytes POSTed for `request` (identical for every attempt)."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "stream": False,
            "options": {
                "temperature": request.temperature,
                "num_predict": request.max_output_tokens,
            },
        }
        return encode_body(body)

    def complete(self, request: ProviderRequest) -> ProviderReply:
        data = post_json(
            self._client, self.name, self.url, self.request_body(request), request.timeout_s
        )
        if "error" in data:
            raise malformed("ollama", f"ollama returned an error object: {data['error']!r}")
        message = data.get("message")
        if not isinstance(message, dict):
            raise malformed("ollama", "ollama chat response has no 'message' object")
        content = message.get("content")
        if not isinstance(content, str):
            raise malformed("ollama", "ollama chat message has no string 'content'")
        done_reason = data.get("done_reason")
        prompt_tokens = opt_int(data.get("prompt_eval_count"))
        completion_tokens = opt_int(data.get("eval_count"))
        total = (
            prompt_tokens + completion_tokens
            if prompt_tokens is not None and completion_tokens is not None
            else None
        )
        return ProviderReply(
            text=content,
            finish_reason=done_reason if isinstance(done_reason, str) else None,
            response_id=None,
            reported_model=data["model"] if isinstance(data.get("model"), str) else None,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=total,
        )
