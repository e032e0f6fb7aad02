"""Names the CLI offers as choices before it imports what they select (no imports here, so
`citebound ask --help` loads no pydantic): the LLM providers. `citebound.llm.PROVIDERS` is
this tuple; the policy presets' registry is `citebound.presets`."""

from __future__ import annotations

__all__ = ["PROVIDERS"]

# `make_provider` dispatches on these names; the CLI's --provider choices are this tuple.
PROVIDERS: tuple[str, ...] = ("extractive", "openai", "ollama")
