"""Answer assembly (R2) and prompt build (R3) output contracts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from citebound.contracts.base import Contract, JsonBool, JsonFloat, JsonInt
from citebound.contracts.enums import AssemblyStatus, BuildStatus, CitationStyleInput
from citebound.contracts.retrieval import FiltersApplied, GateTrace, SourceRef


class Thresholds(Contract):
    """Every threshold assembly applied, copied from the policy into the trace."""

    min_top_similarity: JsonFloat = Field(description="Top-similarity gate at selection entry.")
    min_similarity_floor: JsonFloat = Field(description="Per-row similarity floor.")
    overlap_ratio_threshold: JsonFloat = Field(description="Near-duplicate overlap threshold.")
    max_chunks: JsonInt = Field(description="Max selected chunks.")
    max_chunks_per_knowledge_id: JsonInt = Field(description="Max chunks per knowledge_id.")
    max_evidence_tokens: JsonInt = Field(description="Evidence block token budget.")
    max_total_prompt_tokens: JsonInt = Field(description="Prompt + reserved output budget.")
    reserved_output_tokens: JsonInt = Field(description="Tokens reserved for the answer.")
    max_chunk_token_ratio: JsonFloat = Field(
        description="Max share of the evidence budget per chunk."
    )


class Trace(Contract):
    """Reproducibility fields carried from retrieval and policy into every record."""

    request_id: str = Field(description="Request id.")
    run_id: str | None = Field(default=None, description="Run id, when the caller gave one.")
    index_version: str = Field(min_length=1, description="Index version searched.")
    embedding_model: str = Field(min_length=1, description="Embedding model name.")
    retrieval_top_k: JsonInt = Field(description="top_k asked of retrieval.")
    policy_version: str = Field(min_length=1, description="Policy version.")
    policy_fingerprint: str = Field(description="sha256 of the policy's canonical JSON.")
    tokenizer: str = Field(description="Tokenizer used for every count.")
    thresholds: Thresholds = Field(description="Thresholds used.")
    filters_applied: FiltersApplied | None = Field(default=None, description="Retrieval filters.")
    gate: GateTrace | None = Field(default=None, description="Retrieval gate decision.")
    reranker: str | None = Field(default=None, description="Reranker named by the bundle.")


class DropRecord(Contract):
    """One row that did not make it into the evidence, and why."""

    chunk_id: str = Field(description="Dropped chunk.")
    rank: JsonInt = Field(description="Its retrieval rank.")
    reason_code: str = Field(description="A DROP_* reason code.")
    detail: str = Field(default="", description="Short human explanation.")


class SelectedEvidence(Contract):
    """One chunk admitted to the prompt, with its anchor."""

    chunk_id: str = Field(description="Chunk id.")
    knowledge_id: str = Field(description="Knowledge id.")
    rank: JsonInt = Field(description="Retrieval rank.")
    similarity_score: JsonFloat = Field(description="Calibrated retrieval similarity in [0, 1].")
    citation_anchor: str = Field(description="Anchor label without brackets: C0, S1, 1, ¹.")
    sanitized_text: str = Field(description="Evidence text after safe_normalize_v1 (and trimming).")
    knowledge_type_effective: str = Field(description="Knowledge type.")
    equipment_id: str | None = Field(default=None, description="Equipment id.")
    event_date: str | None = Field(default=None, description="Event date.")
    source: SourceRef | None = Field(default=None, description="Citation metadata.")
    token_count: JsonInt = Field(
        description="Tokens of the rendered evidence entry (header + text)."
    )
    truncated: JsonBool = Field(
        default=False, description="True when trimmed by max_chunk_token_ratio."
    )

    @property
    def source_reference(self) -> str:
        return self.source.reference() if self.source is not None else self.knowledge_id


class AssemblyMetrics(Contract):
    """Counts and flags recorded by selection (R2)."""

    retrieved_k: JsonInt = Field(description="Rows in the bundle.")
    selected_k: JsonInt = Field(description="Rows selected.")
    dedup_dropped_count: JsonInt = Field(default=0, description="DROP_DUP.")
    budget_dropped_count: JsonInt = Field(
        default=0, description="DROP_BUDGET + DROP_PROMPT_BUDGET."
    )
    per_knowledge_cap_dropped_count: JsonInt = Field(
        default=0, description="DROP_PER_KNOWLEDGE_CAP."
    )
    max_chunks_dropped_count: JsonInt = Field(default=0, description="DROP_MAX_CHUNKS.")
    similarity_dropped_count: JsonInt = Field(default=0, description="Similarity gate/floor drops.")
    filter_dropped_count: JsonInt = Field(default=0, description="Filter null/mismatch drops.")
    empty_dropped_count: JsonInt = Field(default=0, description="DROP_EMPTY_AFTER_SANITIZE.")
    structure_dropped_count: JsonInt = Field(default=0, description="DROP_STRUCTURE_CONFLICT.")
    evidence_token_count: JsonInt = Field(default=0, description="Tokens of evidence_block_text.")
    truncation_applied: JsonBool = Field(default=False, description="A chunk was trimmed.")
    drop_reason_codes: list[str] = Field(default_factory=list, description="Sorted unique codes.")
    drops: list[DropRecord] = Field(default_factory=list, description="Every drop, in rank order.")


class AnswerBundle(Contract):
    """Output of assembly (R2); input of prompt build and validation."""

    request_id: str = Field(description="Request id.")
    assembly_status: AssemblyStatus = Field(description="OK, NO_EVIDENCE or FAILED.")
    failure_reason: str | None = Field(default=None, description="First reason code when not OK.")
    reason_codes: list[str] = Field(default_factory=list, description="All failure reason codes.")
    messages: list[str] = Field(default_factory=list, description="Actionable explanations.")
    user_question: str = Field(default="", description="Question after whitespace normalization.")
    citation_style: CitationStyleInput = Field(description="Anchor style of this bundle.")
    selected_evidence: list[SelectedEvidence] = Field(default_factory=list, description="Evidence.")
    anchor_map: dict[str, str] = Field(default_factory=dict, description="anchor -> chunk_id.")
    evidence_block_text: str = Field(default="", description="Exact evidence bytes in the prompt.")
    trace: Trace | None = Field(default=None, description="Required when assembly_status is OK.")
    assembly_metrics: AssemblyMetrics = Field(description="Selection metrics.")

    @model_validator(mode="after")
    def _ok_is_complete(self) -> AnswerBundle:
        if self.assembly_status is AssemblyStatus.OK:
            if self.trace is None:
                raise ValueError("assembly_status OK requires trace fields")
            if not self.evidence_block_text:
                raise ValueError("assembly_status OK requires evidence_block_text")
            anchors = [e.citation_anchor for e in self.selected_evidence]
            expected = {e.citation_anchor: e.chunk_id for e in self.selected_evidence}
            if not anchors or self.anchor_map != expected or len(set(anchors)) != len(anchors):
                raise ValueError("assembly_status OK requires a complete, unique anchor map")
        elif self.evidence_block_text:
            raise ValueError("evidence_block_text must be empty unless assembly_status is OK")
        return self

    @property
    def allowed_anchors(self) -> list[str]:
        return [e.citation_anchor for e in self.selected_evidence]


class ChatMessage(Contract):
    role: Literal["system", "user", "assistant"] = Field(description="Chat role.")
    content: str = Field(description="Exact content bytes.")


class PromptTokenCounts(Contract):
    """Token allocation split between evidence and the rest of the prompt."""

    system_tokens: JsonInt = Field(description="System instruction block.")
    safety_tokens: JsonInt = Field(description="Safety and grounding block.")
    evidence_tokens: JsonInt = Field(description="Evidence section, header included.")
    question_tokens: JsonInt = Field(description="Question section, header included.")
    output_tokens: JsonInt = Field(description="Output formatting instructions block.")
    conversation_tokens: JsonInt = Field(
        default=0, description="Recent conversation section, header included (0 without one)."
    )
    reserved_output_tokens: JsonInt = Field(description="Reserved for the model's answer.")
    prompt_tokens: JsonInt = Field(description="Tokens of prompt_text as a whole.")
    total_prompt_tokens: JsonInt = Field(description="Sum of the blocks plus reserved output.")


class PromptBuildResult(Contract):
    """Output of the prompt builder (R3)."""

    request_id: str = Field(description="Request id.")
    build_status: BuildStatus = Field(description="OK, NO_EVIDENCE or FAILED.")
    failure_reason: str | None = Field(default=None, description="Reason code when not OK.")
    message: str = Field(default="", description="Actionable explanation when not OK.")
    template_id: str = Field(description="Template file name, e.g. qa_v1.")
    template_sha256: str = Field(description="sha256 of the template file bytes.")
    prompt_text: str = Field(default="", description="Exact prompt bytes (empty unless OK).")
    prompt_sha256: str = Field(default="", description="sha256 of prompt_text UTF-8 bytes.")
    messages: list[ChatMessage] = Field(default_factory=list, description="system + user.")
    token_counts: PromptTokenCounts | None = Field(default=None, description="Token split.")
    tokenizer: str = Field(description="Tokenizer used.")
    allowed_anchors: list[str] = Field(default_factory=list, description="Anchors in the prompt.")
    dropped_chunk_ids: list[str] = Field(default_factory=list, description="PB4 budget drops.")
    conversation_turns: JsonInt = Field(
        default=0, ge=0, description="Earlier turn pairs in the Recent conversation block."
    )
    conversation_turns_dropped: JsonInt = Field(
        default=0, ge=0, description="Older turn pairs left out to fit the conversation budget."
    )
