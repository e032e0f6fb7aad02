"""`make_provider`: one place that turns CLI/API/config options into a `Provider`."""

from __future__ import annotations

import os
from typing import Literal
from urllib.parse import urlparse

from citebound._names import PROVIDERS
from citebound.errors import ConfigError
from citebound.llm.base import Provider
from citebound.llm.extractive import EXTRACTIVE_MODEL, ExtractiveProvider
from citebound.policy import AnswererPolicy

__all__ = ["DEFAULT_API_KEY_ENV", "PROVIDERS", "make_provider"]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


def make_provider(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    api: Literal["chat", "responses"] = "chat",
    answerer: AnswererPolicy | None = None,
) -> Provider:
    """Build a provider by name; raise `ConfigError` naming the option that is wrong.

    Args:
        name: `extractive` (built in, offline), `openai` (any OpenAI-compatible server) or
            `ollama` (native API).
        model: Model name; required for `openai` and `ollama`. For `extractive` it may be
            omitted or `extractive-v14`.
        base_url: Server root. Defaults: `https://api.openai.com/v1` for openai,
            `http://127.0.0.1:11434` for ollama.
        api_key_env: Name of the environment variable holding the API key (openai only).
            Default `OPENAI_API_KEY`. A missing key is an error only for api.openai.com or
            when the variable was named explicitly; local servers need none.
        api: `chat` (Chat Completions) or `responses` (Responses API), openai only.
        answerer: The policy's `[answerer]` values for `extractive` (default: strict-v1's).

    Example:
        >>> make_provider("extractive").model
        'extractive-v14'
        >>> make_provider("ollama", model="llama3").url
        'http://127.0.0.1:11434/api/chat'
    """
    if name == "extractive":
        if model not in (None, EXTRACTIVE_MODEL):
            raise ConfigError(
                f"the extractive provider has one model, {EXTRACTIVE_MODEL!r}; got {model!r}",
                field="model",
            )
        return ExtractiveProvider(answerer)
    if name not in PROVIDERS:
        raise ConfigError(
            f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}", field="provider"
        )
    if not model:
        raise ConfigError(
            f"the {name} provider needs --model (citebound never picks a model for you)",
            field="model",
        )
    # The HTTP providers import httpx (~0.1 s): only a command that uses one pays for it.
    if name == "ollama":
        from citebound.llm.ollama import OLLAMA_BASE_URL, OllamaProvider

        return OllamaProvider(model, base_url=base_url or OLLAMA_BASE_URL)
    from citebound.llm.openai import OPENAI_BASE_URL, OpenAIProvider

    url = base_url or OPENAI_BASE_URL
    env = api_key_env or DEFAULT_API_KEY_ENV
    key = os.environ.get(env) or None
    needs_key = api_key_env is not None or urlparse(url).hostname == "api.openai.com"
    if key is None and needs_key:
        raise ConfigError(
            f"environment variable {env} is not set; export your API key there "
            "(or use --api-key-env NAME)",
            field="api_key_env",
        )
    return OpenAIProvider(model, base_url=url, api_key=key, api=api)
