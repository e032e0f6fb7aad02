"""Typed, frozen contracts: the only objects that cross a stage boundary."""

from citebound.contracts.assembly import (
    AnswerBundle,
    AssemblyMetrics,
    ChatMessage,
    DropRecord,
    PromptBuildResult,
    PromptTokenCounts,
    SelectedEvidence,
    Thresholds,
    Trace,
)
from citebound.contracts.base import Contract, canonical_json, content_hash, sha256_hex
from citebound.contracts.conversation import ConversationTurn
from citebound.contracts.documents import Chunk, Document
from citebound.contracts.enums import (
    AssemblyStatus,
    BuildStatus,
    CitationStyle,
    GenerationStatus,
    PromptStyle,
    PublicStatus,
    ReasonCode,
    RetrievalStatus,
    ValidationStatus,
)
from citebound.contracts.execution import GroundingMetrics, LLMExecutionResult, ValidationResult
from citebound.contracts.public import PublicCitation, PublicResponse, TokenUsage
from citebound.contracts.retrieval import (
    DateRange,
    FiltersApplied,
    GateMeasures,
    GateTrace,
    RetrievalBundle,
    RetrievalRow,
    SourceRef,
)

__all__ = [
    "AnswerBundle",
    "AssemblyMetrics",
    "AssemblyStatus",
    "BuildStatus",
    "ChatMessage",
    "Chunk",
    "CitationStyle",
    "Contract",
    "ConversationTurn",
    "DateRange",
    "Document",
    "DropRecord",
    "FiltersApplied",
    "GateMeasures",
    "GateTrace",
    "GenerationStatus",
    "GroundingMetrics",
    "LLMExecutionResult",
    "PromptBuildResult",
    "PromptStyle",
    "PromptTokenCounts",
    "PublicCitation",
    "PublicResponse",
    "PublicStatus",
    "ReasonCode",
    "RetrievalBundle",
    "RetrievalRow",
    "RetrievalStatus",
    "SelectedEvidence",
    "SourceRef",
    "Thresholds",
    "TokenUsage",
    "Trace",
    "ValidationResult",
    "ValidationStatus",
    "canonical_json",
    "content_hash",
    "sha256_hex",
]
