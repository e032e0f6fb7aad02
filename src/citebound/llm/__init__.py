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
from citebound.llm.ollama import OllamaProvider
from citebound.llm.openai import OpenAIProvider

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
