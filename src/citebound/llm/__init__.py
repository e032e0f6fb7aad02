"""LLM execution (R4): send the frozen prompt unchanged, retry only transient failures, record.

Public surface::

    execute(prompt, bundle, provider, policy) -> LLMExecutionResult
    make_provider("extractive" | "openai" | "ollama", model=..., base_url=..., ...) -> Provider
    Provider            the protocol every provider implements (name, model, complete)
    ExtractiveProvider  built-in deterministic offline answerer (the default, the baseline)
    OpenAIProvider      OpenAI-compatible HTTP (Responses API or Chat Completions)
    OllamaProvider      Ollama native /api/chat

Example:
    >>> from citebound.llm import make_provider
    >>> make_provider("extractive").name
    'extractive'
"""

from typing import TYPE_CHECKING, Any

from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.llm.base import Provider, parse_retry_after
from citebound.llm.execute import backoff_delay, execute
from citebound.llm.extractive import (
    EXTRACTIVE_MODEL,
    ExtractiveProvider,
    citation_marker,
    marker_pattern,
)
from citebound.llm.factory import PROVIDERS, make_provider

if TYPE_CHECKING:
    from citebound.llm.ollama import OllamaProvider
    from citebound.llm.openai import OpenAIProvider

# The HTTP providers import httpx; the default (extractive) path never needs it.
_LAZY = {"OllamaProvider": "citebound.llm.ollama", "OpenAIProvider": "citebound.llm.openai"}


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'citebound.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "EXTRACTIVE_MODEL",
    "PROVIDERS",
    "ExtractiveProvider",
    "OllamaProvider",
    "OpenAIProvider",
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
