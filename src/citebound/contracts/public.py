"""The public response (R6): the only object that leaves citebound for end users."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.enums import PublicStatus


class PublicCitation(Contract):
    """A citation safe to show: no chunk text, no scores, no internal ids beyond these."""

    anchor: str = Field(description="Anchor as cited, without brackets.")
    knowledge_id: str = Field(description="Document id.")
    source_reference: str = Field(description="Document > heading path, page.")
    document: str | None = Field(default=None, description="Document name.")
    source_path: str | None = Field(
        default=None,
        description="File as ingested, relative to the folder given to ingest (e.g. docs/a.md).",
    )
    heading_path: list[str] = Field(default_factory=list, description="Heading hierarchy.")
    page: int | None = Field(default=None, description="Page (1-based) when paged.")
    ocr: bool = Field(
        default=False,
        description="The cited text was read by OCR from a scanned page (may hold misreadings).",
    )
    event_date: str | None = Field(default=None, description="Event date.")
    equipment_id: str | None = Field(default=None, description="Equipment id.")


class TokenUsage(Contract):
    prompt: int | None = Field(default=None, description="Prompt tokens reported.")
    completion: int | None = Field(default=None, description="Completion tokens reported.")
    total: int | None = Field(default=None, description="Total tokens reported.")


class PublicResponse(Contract):
    """Stable API payload (R6)."""

    request_id: str = Field(description="Request id.")
    status: PublicStatus = Field(description="OK, NO_EVIDENCE or FAILED.")
    answer: str = Field(description="Validated answer, the exact refusal, or empty when FAILED.")
    citations: list[PublicCitation] = Field(default_factory=list, description="Cited sources.")
    token_usage: TokenUsage = Field(description="Token usage.")
    latency_ms: float = Field(description="End-to-end latency in ms.")
    low_confidence: bool = Field(
        default=False,
        description="Passed with limited support (a preset that flags it instead of failing).",
    )
    confidence: Literal["high", "medium", "low"] | None = Field(
        default=None,
        description="OK answers: from the weakest sentence's support score (docs/validation.md).",
    )
    failure_reason: str | None = Field(default=None, description="Reason code when FAILED.")
