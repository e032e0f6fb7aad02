"""Audit contracts: one append-only record per request, feedback, and replay reports.

`AuditRecord` holds every column of the validation table (docs/audit.md) plus what explains and
replays a request: prompt hash, policy fingerprint, anchor -> chunk map, retrieval scores of the
selected evidence, attempts, latency, token usage and the question.
Prompt text and evidence text are stored only when the operator opts in.

Schema v4 lists every model call in `model_calls`. With a regeneration (`[validation]
regenerate_on_failure`) the answer-level fields (`raw_model_text`, `prompt_sha256`,
`template_id`, `response_id`, the verdict) describe the last answer call, whose verdict is the
request's; `attempts`, `llm_latency_ms` and the token counts add up every answer call.

Schema v5 records the anchors the reader saw (`display_anchors`): the public answer numbers
its citations in first-citation order (`respond/renumber.py`), while `raw_model_text`,
`validated_answer_text`, `validated_citations`, `anchor_map` and `evidence` keep the prompt's
anchors, so replay re-validates the exact bytes the model returned.

`record_hash` is `content_hash` (sha256 over canonical JSON) of the record without the hash.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from citebound.contracts.base import Contract, content_hash
from citebound.contracts.conversation import ConversationTurn, FollowupRewrite
from citebound.contracts.enums import (
    AssemblyStatus,
    GenerationStatus,
    PublicStatus,
    StoredCitationStyle,
    ValidationStatus,
)
from citebound.contracts.execution import ModelCallRecord, UnsupportedSentence, ValidationResult

AUDIT_SCHEMA_VERSION = 5

# Fields added after schema version 1, with the version that added them. A record of an older
# version must leave them unset and hashes without them, so every hash written before a field
# existed stays valid (records are append-only: they are never rewritten to a new version).
ADDED_IN_VERSION: dict[str, int] = {
    "reranker": 2,
    "unsupported_sentences": 3,
    "model_calls": 4,
    "conversation": 4,
    "display_anchors": 5,
}


class AuditEvidence(Contract):
    """One selected chunk as the audit keeps it: identity, score and a hash of its text."""

    anchor: str = Field(description="Citation anchor label, e.g. C0.")
    chunk_id: str = Field(description="Chunk id (content hash) in the store.")
    knowledge_id: str = Field(description="Document id.")
    rank: int = Field(description="Retrieval rank.")
    similarity_score: float = Field(description="Calibrated retrieval similarity in [0, 1].")
    text_sha256: str = Field(description="sha256 hex of the sanitized text sent to the model.")


class AuditConversation(Contract):
    """The conversation a follow-up was asked in (schema v4+): enough to explain its retrieval
    query and prompt, and to ask it again with the same history."""

    turns: list[ConversationTurn] = Field(
        description="The earlier turns as the request received them, oldest first (the newest "
        "MAX_HISTORY_TURNS when it carried more)."
    )
    turns_received: int = Field(ge=0, description="How many earlier turns the request carried.")
    turns_used: int = Field(
        ge=0, description="How many of the newest went into the rewrite and prompt (N4)."
    )
    rewrite: FollowupRewrite | None = Field(
        default=None,
        description="How the retrieval query was derived (`query` is the query searched); "
        "None when the request ended before retrieval.",
    )


class AuditRecord(Contract):
    """Everything needed to explain (and, with evidence, replay) one request."""

    schema_version: int = Field(default=AUDIT_SCHEMA_VERSION, description="Record schema version.")
    request_id: str = Field(min_length=1, description="Request id.")
    run_id: str | None = Field(default=None, description="Run id; (request_id, run_id) is unique.")
    timestamp_utc: str = Field(description="ISO 8601 UTC time the record was built (…Z).")
    status: PublicStatus = Field(description="Public status returned to the caller.")
    assembly_status: AssemblyStatus | None = Field(
        default=None, description="Assembly status; None when no AnswerBundle was built."
    )
    generation_status: GenerationStatus = Field(
        description="Generation status of the model call (OK, or why it failed)."
    )
    llm_generation_status: GenerationStatus | None = Field(
        default=None, description="Status the LLM layer returned; None when it was not called."
    )
    validation_status: ValidationStatus | None = Field(
        default=None, description="PASSED/FAILED; None when validation did not run (no model)."
    )
    failure_reason: str | None = Field(default=None, description="First reason code.")
    reason_codes: list[str] = Field(default_factory=list, description="All R5 reason codes.")
    llm_failure_reason: str | None = Field(default=None, description="LLM_* reason code.")
    citation_count: int = Field(default=0, description="Citation markers found.")
    uncited_sentence_count: int = Field(default=0, description="Factual sentences uncited.")
    invalid_anchor_count: int = Field(default=0, description="Markers outside the anchor set.")
    suspicious_new_ids: list[str] = Field(
        default_factory=list, description="Numbers/dates/codes absent from cited evidence."
    )
    refusal_detected: bool = Field(default=False, description="Answer is/contains a refusal.")
    length_ratio_flag: bool = Field(default=False, description="Answer > N x evidence length.")
    attribution_coverage: float | None = Field(default=None, description="Cited ÷ factual.")
    min_support: float | None = Field(default=None, description="Lowest sentence support.")
    low_confidence: bool = Field(default=False, description="Passed with limited support.")
    validated_citations: list[str] = Field(default_factory=list, description="Anchors used.")
    validated_answer_text: str | None = Field(
        default=None, description="The validated answer; only when validation PASSED."
    )
    raw_model_text: str | None = Field(
        default=None, description="Unedited model output (for replay); None if not called."
    )
    model_name: str | None = Field(default=None, description="Model identity.")
    provider: str | None = Field(default=None, description="LLM provider.")
    response_id: str | None = Field(default=None, description="Provider response id.")
    embedding_model: str | None = Field(default=None, description="From the trace.")
    index_version: str | None = Field(default=None, description="From the trace.")
    reranker: str | None = Field(
        default=None,
        description="Reranker that ordered the candidates (`passthrough` = none); schema v2+.",
    )
    unsupported_sentences: list[UnsupportedSentence] | None = Field(
        default=None,
        description="Sentences the support check rejected: index, score, reason, best evidence "
        "span (schema v3+; None when validation did not run).",
    )
    model_calls: list[ModelCallRecord] | None = Field(
        default=None,
        description="Every model call of the request, in order: stage (answer, regenerate, "
        "LLM stages), template id, prompt sha256, raw output, the verdict on that answer, "
        "provider/model and its transient attempts (schema v4+; None before).",
    )
    conversation: AuditConversation | None = Field(
        default=None,
        description="Earlier turns and the follow-up rewrite (schema v4+; None for a question "
        "asked without history).",
    )
    display_anchors: dict[str, str] | None = Field(
        default=None,
        description="Prompt anchor -> anchor shown to the reader, for each cited anchor in "
        "first-citation order (C2 -> C0 when the answer cites C2 first); the public answer "
        "and citations carry the shown ones (schema v5+; None when no answer was shown).",
    )
    policy_version: str = Field(description="Policy version.")
    policy_fingerprint: str = Field(description="`Policy.fingerprint` (sha256 of the policy).")
    validator_version: str | None = Field(default=None, description="R5 validator version.")
    citation_style: StoredCitationStyle | None = Field(default=None, description="Anchor style.")
    prompt_sha256: str | None = Field(default=None, description="sha256 of the prompt bytes.")
    template_id: str | None = Field(default=None, description="Prompt template id.")
    anchor_map: dict[str, str] = Field(default_factory=dict, description="anchor -> chunk_id.")
    evidence: list[AuditEvidence] = Field(
        default_factory=list, description="Selected evidence with retrieval scores, anchor order."
    )
    evidence_chars: int = Field(default=0, description="Characters of the evidence block.")
    evidence_texts: list[str] | None = Field(
        default=None, description="Sanitized evidence texts (opt-in; enables offline replay)."
    )
    attempts: int = Field(default=0, description="LLM calls made.")
    llm_latency_ms: float | None = Field(default=None, description="LLM wall time.")
    latency_ms: float = Field(description="End-to-end latency reported to the caller.")
    prompt_tokens: int | None = Field(default=None, description="Prompt tokens reported.")
    completion_tokens: int | None = Field(default=None, description="Completion tokens reported.")
    total_tokens: int | None = Field(default=None, description="Total tokens reported.")
    question: str = Field(default="", description="The user question.")
    prompt_text: str | None = Field(
        default=None, description="Exact prompt text; None unless the operator opted in."
    )
    record_hash: str = Field(default="", description="content_hash of the record minus this.")

    @model_validator(mode="after")
    def _fields_of_its_version(self) -> AuditRecord:
        later = [f for f, v in ADDED_IN_VERSION.items() if v > self.schema_version]
        if any(getattr(self, f) is not None for f in later):
            raise ValueError(f"a schema_version {self.schema_version} record has no {later}")
        return self

    def compute_hash(self) -> str:
        """`sha256:<hex>` over the canonical JSON of every field except `record_hash` (and
        the fields its schema version predates, see ADDED_IN_VERSION)."""
        later = {f for f, v in ADDED_IN_VERSION.items() if v > self.schema_version}
        return content_hash(self.model_dump(mode="json", exclude={"record_hash", *later}))

    def hash_ok(self) -> bool:
        """True when `record_hash` matches the content (the record is intact)."""
        return self.record_hash == self.compute_hash()


class FeedbackRecord(Contract):
    """A person's verdict on an answer, append-only."""

    request_id: str = Field(min_length=1, description="Request the feedback is about.")
    verdict: Literal["correct", "incorrect"] = Field(description="correct or incorrect.")
    comment: str = Field(default="", max_length=4000, description="Free text.")
    timestamp_utc: str = Field(description="ISO 8601 UTC time (…Z).")


class CallReplay(Contract):
    """The fresh verdict on one judged model call of a v4 record (answer or regeneration)."""

    stage: str = Field(description="answer or regenerate.")
    prompt_sha256: str = Field(description="The call's prompt hash.")
    stored_validation_status: ValidationStatus | None = Field(description="Verdict on record.")
    stored_failure_reason: str | None = Field(description="Reason on record.")
    new_validation_status: ValidationStatus = Field(description="Verdict now.")
    new_failure_reason: str | None = Field(description="Reason now.")
    verdict_changed: bool = Field(description="Status or reason differs.")


class ReplayReport(Contract):
    """Result of re-validating a stored raw answer with the current validator."""

    request_id: str = Field(description="Request replayed.")
    replayable: bool = Field(description="False when the model text or evidence is missing.")
    reason: str = Field(default="", description="Why replay was not possible, or notes.")
    stored_validation_status: ValidationStatus | None = Field(description="Verdict on record.")
    stored_failure_reason: str | None = Field(description="Reason on record.")
    stored_validator_version: str | None = Field(description="Validator that decided then.")
    policy_fingerprint_matches: bool = Field(description="Replay policy == recorded policy.")
    new_result: ValidationResult | None = Field(default=None, description="Fresh result.")
    verdict_changed: bool = Field(default=False, description="Status or reason differs.")
    calls: list[CallReplay] = Field(
        default_factory=list,
        description="Schema v4: every judged model call (answer, regeneration) validated "
        "again, in order; the last one is the request's verdict above.",
    )
    display_anchors: dict[str, str] | None = Field(
        default=None,
        description="The shown anchors the fresh result renumbers to (prompt anchor -> shown "
        "anchor); None when it is no answer.",
    )
    display_changed: bool = Field(
        default=False,
        description="Schema v5: the fresh shown anchors differ from the record's.",
    )
