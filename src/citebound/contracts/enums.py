"""Status enums and reason codes. Enum values are the serialized names."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator


class RetrievalStatus(StrEnum):
    SUCCESS = "SUCCESS"
    NO_EVIDENCE = "NO_EVIDENCE"
    FAILED = "FAILED"


class AssemblyStatus(StrEnum):
    OK = "OK"
    NO_EVIDENCE = "NO_EVIDENCE"
    FAILED = "FAILED"


class BuildStatus(StrEnum):
    OK = "OK"
    NO_EVIDENCE = "NO_EVIDENCE"
    FAILED = "FAILED"


class GenerationStatus(StrEnum):
    OK = "OK"
    FAILED = "FAILED"
    NO_EVIDENCE = "NO_EVIDENCE"


class ValidationStatus(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"


class PublicStatus(StrEnum):
    OK = "OK"
    NO_EVIDENCE = "NO_EVIDENCE"
    FAILED = "FAILED"


# The packs' original API uses `numeric` for superscript markers ([¹]); the style this project
# called `numeric` ([1]) was renamed `decimal` so the two meanings cannot be confused
# (docs/assemble_prompt.md).
RENAMED_CITATION_STYLES = {
    "numeric": "citation style 'numeric' was renamed 'decimal' (markers [1], [2], ...); "
    "in retrieve_packs / assemble_prompt requests 'numeric' meant superscript markers [¹], which "
    "is style 'superscript' here. "
    'Set citation_style = "decimal" to keep [1] markers.',
}


class CitationStyle(StrEnum):
    """Anchor look: `C` -> [C0] (from 0), `S` -> [S1], `decimal` -> [1], `superscript` -> [¹],
    `footnote` -> [^1]. The old name `numeric` (for [1]) is rejected with a message saying so."""

    C = "C"
    S = "S"
    DECIMAL = "decimal"
    SUPERSCRIPT = "superscript"
    FOOTNOTE = "footnote"

    @classmethod
    def _missing_(cls, value: object) -> CitationStyle | None:
        message = RENAMED_CITATION_STYLES.get(str(value))
        if message is not None:
            raise ValueError(message)
        return None


def _reject_renamed(value: object) -> object:
    if isinstance(value, str) and value in RENAMED_CITATION_STYLES:
        raise ValueError(RENAMED_CITATION_STYLES[value])
    return value


def _read_legacy(value: object) -> object:
    # Records written before the rename said `numeric` for what is now `decimal` ([1]).
    return CitationStyle.DECIMAL.value if value == "numeric" else value


# A style given as input (policy, request): the old name `numeric` is an error that says why.
CitationStyleInput = Annotated[CitationStyle, BeforeValidator(_reject_renamed)]
# A style read back from stored data (audit records): the old name reads as `decimal`.
StoredCitationStyle = Annotated[CitationStyle, BeforeValidator(_read_legacy)]


class PromptStyle(StrEnum):
    QA = "qa"
    SUMMARIZE = "summarize"


class ReasonCode(StrEnum):
    """Every reason code citebound emits. One registry for dispatch and messages."""

    # R2 fail-fast validation groups (V1-V5, docs/design.md)
    V1_SCHEMA = "V1_SCHEMA"
    V2_RANK_INTEGRITY = "V2_RANK_INTEGRITY"
    V3_SIMILARITY_INTEGRITY = "V3_SIMILARITY_INTEGRITY"
    V4_TEXT_INTEGRITY = "V4_TEXT_INTEGRITY"
    V5_DOMAIN_INTEGRITY = "V5_DOMAIN_INTEGRITY"
    EMPTY_BUNDLE = "EMPTY_BUNDLE"
    RETRIEVAL_FAILED = "RETRIEVAL_FAILED"
    RETRIEVAL_NO_EVIDENCE = "RETRIEVAL_NO_EVIDENCE"
    MISSING_TRACE = "MISSING_TRACE"
    # R2 selection drops: one reason per dropped row
    DROP_DUP = "DROP_DUP"
    DROP_BUDGET = "DROP_BUDGET"
    DROP_PER_KNOWLEDGE_CAP = "DROP_PER_KNOWLEDGE_CAP"
    DROP_MAX_CHUNKS = "DROP_MAX_CHUNKS"
    DROP_EMPTY_AFTER_SANITIZE = "DROP_EMPTY_AFTER_SANITIZE"
    DROP_BELOW_SIMILARITY_FLOOR = "DROP_BELOW_SIMILARITY_FLOOR"
    DROP_BELOW_TOP_SIMILARITY = "DROP_BELOW_TOP_SIMILARITY"
    DROP_FILTER_NULL = "DROP_FILTER_NULL"
    DROP_FILTER_MISMATCH = "DROP_FILTER_MISMATCH"
    DROP_STRUCTURE_CONFLICT = "DROP_STRUCTURE_CONFLICT"
    DROP_PROMPT_BUDGET = "DROP_PROMPT_BUDGET"
    DROP_SEMANTIC = "DROP_SEMANTIC"
    DROP_TOP_K = "DROP_TOP_K"
    # R3 prompt build
    PROMPT_STRUCTURE = "PROMPT_STRUCTURE"
    PROMPT_OVER_BUDGET = "PROMPT_OVER_BUDGET"
    QUESTION_EMPTY = "QUESTION_EMPTY"
    QUESTION_TOO_LONG = "QUESTION_TOO_LONG"
    QUESTION_STRUCTURE_CONFLICT = "QUESTION_STRUCTURE_CONFLICT"
    ASSEMBLY_NOT_OK = "ASSEMBLY_NOT_OK"
    # Retrieval gate (docs/gate.md)
    GATE_BELOW_MIN_SCORE = "GATE_BELOW_MIN_SCORE"
    GATE_TOO_FEW_CHUNKS = "GATE_TOO_FEW_CHUNKS"
    GATE_LOW_COVERAGE = "GATE_LOW_COVERAGE"
    # R4 execution
    LLM_SKIPPED = "LLM_SKIPPED"
    LLM_TIMEOUT = "LLM_TIMEOUT"
    LLM_CONNECTION_ERROR = "LLM_CONNECTION_ERROR"
    LLM_RATE_LIMITED = "LLM_RATE_LIMITED"
    LLM_SERVER_ERROR = "LLM_SERVER_ERROR"
    LLM_BAD_REQUEST = "LLM_BAD_REQUEST"
    LLM_AUTH = "LLM_AUTH"
    LLM_NOT_FOUND = "LLM_NOT_FOUND"
    LLM_MALFORMED_RESPONSE = "LLM_MALFORMED_RESPONSE"
    LLM_EMPTY_RESPONSE = "LLM_EMPTY_RESPONSE"
    LLM_TRUNCATED = "LLM_TRUNCATED"
    LLM_RETRIES_EXHAUSTED = "LLM_RETRIES_EXHAUSTED"
    LLM_CONFIG = "LLM_CONFIG"
    # A batch call journaled before it was sent whose answer never came back (the job died
    # mid-call); the resumed run records it instead of asking the model again.
    LLM_INTERRUPTED = "LLM_INTERRUPTED"
    # R5 validation (docs/validation.md)
    INVALID_CITATION_REFERENCE = "INVALID_CITATION_REFERENCE"
    MALFORMED_CITATION = "MALFORMED_CITATION"
    UNCITED_FACTUAL_STATEMENT = "UNCITED_FACTUAL_STATEMENT"
    INVALID_REFUSAL_FORMAT = "INVALID_REFUSAL_FORMAT"
    CITATION_MISMATCH = "CITATION_MISMATCH"
    INTERNAL_ID_LEAK = "INTERNAL_ID_LEAK"
    META_COMMENTARY = "META_COMMENTARY"
    INJECTION_ECHO = "INJECTION_ECHO"
    UNSUPPORTED_NEW_FACT = "UNSUPPORTED_NEW_FACT"
    LOW_SUPPORT = "LOW_SUPPORT"
    EMPTY_ANSWER = "EMPTY_ANSWER"
    GENERATION_FAILED = "GENERATION_FAILED"
    # Pipeline
    STAGE_DISABLED = "STAGE_DISABLED"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    CONFIG_INVALID = "CONFIG_INVALID"
    AUDIT_FAILED = "AUDIT_FAILED"
    STAGE_ORDER = "STAGE_ORDER"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    # Batch: another live driver holds the run id (batch/run_lock.py).
    BATCH_RUN_LOCKED = "BATCH_RUN_LOCKED"
