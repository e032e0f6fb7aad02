"""citebound: answers questions only from your own documents.

Every answer is fully cited (citations checked after generation) or an exact refusal, and
every request leaves an append-only audit record.
"""

from __future__ import annotations

__version__ = "0.1.0"

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
from citebound.policy import Policy, load_policy

__all__ = [
    "AnswerBundle",
    "AssemblyStatus",
    "CitationStyle",
    "CiteboundError",
    "ConfigError",
    "LLMExecutionResult",
    "Policy",
    "PromptBuildResult",
    "PublicResponse",
    "ReasonCode",
    "RetrievalBundle",
    "RetrievalRow",
    "SourceRef",
    "ValidationResult",
    "__version__",
    "load_policy",
]
