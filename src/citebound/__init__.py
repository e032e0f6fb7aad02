"""citebound: answers questions only from your own documents.

Every answer is fully cited (citations checked after generation) or an exact refusal, and
every request leaves an append-only audit record.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from citebound._version import __version__

if TYPE_CHECKING:
    from citebound.config import Config, load_config
    from citebound.contracts import (
        AnswerBundle,
        AssemblyStatus,
        CitationStyle,
        LLMExecutionResult,
        PromptBuildResult,
        PublicResponse,
        ReasonCode,
        RetrievalBundle,
        RetrievalRow,
        SourceRef,
        ValidationResult,
    )
    from citebound.errors import CiteboundError, ConfigError
    from citebound.packs import (
        AssembledPrompt,
        PackCitation,
        PackSpan,
        RetrievalPack,
        assemble_prompt,
        retrieve_packs,
    )
    from citebound.pipeline import Pipeline, PipelineContext, RequestState
    from citebound.policy import Policy, load_policy

# Every public name is imported on first use: the contracts alone (pydantic models) take ~0.3 s
# to import and the pipeline pulls in retrieval, assembly, the LLM layer and the audit store, so
# an eager `import citebound` made `citebound --version` 40x slower than a bare interpreter.
_LAZY = {
    **dict.fromkeys(
        [
            "AnswerBundle",
            "AssemblyStatus",
            "CitationStyle",
            "LLMExecutionResult",
            "PromptBuildResult",
            "PublicResponse",
            "ReasonCode",
            "RetrievalBundle",
            "RetrievalRow",
            "SourceRef",
            "ValidationResult",
        ],
        "citebound.contracts",
    ),
    "CiteboundError": "citebound.errors",
    "ConfigError": "citebound.errors",
    "Policy": "citebound.policy",
    "load_policy": "citebound.policy",
    "Config": "citebound.config",
    "load_config": "citebound.config",
    "Pipeline": "citebound.pipeline",
    "PipelineContext": "citebound.pipeline",
    "RequestState": "citebound.pipeline",
    "AssembledPrompt": "citebound.packs",
    "PackCitation": "citebound.packs",
    "PackSpan": "citebound.packs",
    "RetrievalPack": "citebound.packs",
    "assemble_prompt": "citebound.packs",
    "retrieve_packs": "citebound.packs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'citebound' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AnswerBundle",
    "AssembledPrompt",
    "AssemblyStatus",
    "CitationStyle",
    "CiteboundError",
    "Config",
    "ConfigError",
    "LLMExecutionResult",
    "PackCitation",
    "PackSpan",
    "Pipeline",
    "PipelineContext",
    "Policy",
    "PromptBuildResult",
    "PublicResponse",
    "ReasonCode",
    "RequestState",
    "RetrievalBundle",
    "RetrievalPack",
    "RetrievalRow",
    "SourceRef",
    "ValidationResult",
    "__version__",
    "assemble_prompt",
    "load_config",
    "load_policy",
    "retrieve_packs",
]
