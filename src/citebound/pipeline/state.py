"""`RequestState`: the SuperPrompt (docs/superprompt.md), one immutable carrier through every stage.

Stages never mutate a state: each returns a new one (`evolve`). Chunk rows in
`base_context_chunks` are immutable and unique by chunk_id; stages only write views (ordered id
lists) and the final selection.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, TypeAdapter

from citebound.contracts.assembly import (
    AnswerBundle,
    DropRecord,
    PromptBuildResult,
    SelectedEvidence,
)
from citebound.contracts.base import Contract
from citebound.contracts.conversation import MAX_HISTORY_TURNS, ConversationTurn
from citebound.contracts.execution import LLMExecutionResult, ModelCallRecord, ValidationResult
from citebound.contracts.public import PublicResponse
from citebound.contracts.question import PromptBody, Shape
from citebound.contracts.retrieval import FiltersApplied, RetrievalBundle, RetrievalRow
from citebound.validate.view import EvidenceView

# `RequestState.extras` key of the anchors the reader saw (prompt anchor -> shown anchor), set
# by the `recorded` stage from packaging, as the audit record keeps them (respond/renumber.py).
DISPLAY_ANCHORS = "display_anchors"


class StageRecord(Contract):
    """What one stage kept and dropped, for `--step` and the web page."""

    stage: str = Field(description="Stage name.")
    kept: list[str] = Field(default_factory=list, description="Chunk ids kept, in order.")
    dropped: list[DropRecord] = Field(default_factory=list, description="Drops with reasons.")
    note: str = Field(default="", description="One line about the decision.")
    latency_ms: float = Field(default=0.0, description="Stage wall time.")


class RequestState(Contract):
    """The whole request, stage by stage. JSON-serializable for step mode over HTTP."""

    request_id: str = Field(description="Request id.")
    run_id: str | None = Field(default=None, description="Run id (batch).")
    user_text: str = Field(description="Raw user prompt.")
    collection: str = Field(default="default", description="Collection searched.")
    filters: FiltersApplied | None = Field(default=None, description="Retrieval filters.")
    history: list[ConversationTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_TURNS,
        description="Earlier turn pairs (the last N4 at most); context only, never evidence.",
    )
    received_history: list[ConversationTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_TURNS,
        description="The earlier turns as the request carried them (the newest "
        "MAX_HISTORY_TURNS), for the audit record.",
    )
    received_turns: int = Field(default=0, ge=0, description="Earlier turns the request carried.")
    max_output_tokens: int | None = Field(
        default=None, ge=1, description="Caller's output cap; only ever lowers the policy's."
    )
    stage: str = Field(
        default="raw", description="Last completed request stage (raw, preprocessed, ..., a5)."
    )
    history_of_stages: list[str] = Field(
        default_factory=list,
        description="Request stages completed (raw, preprocessed, ..., a5), append-only.",
    )
    steps_done: list[str] = Field(
        default_factory=list,
        description="Every stage completed (pipeline/table.py), append-only; drives the order.",
    )
    body: PromptBody | None = Field(default=None, description="A0 canonical fields.")
    extras: dict[str, Any] = Field(default_factory=dict, description="Unknown headers, decisions.")
    prompt_ready: str = Field(default="", description="Snapshot of the canonical prompt.")
    shape: Shape | None = Field(default=None, description="A2 classification.")
    base_context_chunks: list[RetrievalRow] = Field(
        default_factory=list, description="Unique rows."
    )
    views_by_stage: dict[str, list[str]] = Field(default_factory=dict, description="Ordered ids.")
    final_selection_ids: list[str] = Field(default_factory=list, description="Current selection.")
    retrieval_bundle: RetrievalBundle | None = Field(default=None, description="After A3.")
    answer_bundle: AnswerBundle | None = Field(default=None, description="After assembly/prompt.")
    prompt: PromptBuildResult | None = Field(default=None, description="After prompt build.")
    llm_result: LLMExecutionResult | None = Field(default=None, description="After execute.")
    validation: ValidationResult | None = Field(default=None, description="After validate.")
    model_calls: list[ModelCallRecord] = Field(
        default_factory=list,
        description="Every model call so far, in order (the audit record's model_calls); "
        "holds model text, so a finished state handed to a client drops it.",
    )
    response: PublicResponse | None = Field(default=None, description="After package.")
    audit_record_hash: str | None = Field(default=None, description="Hash of the audit record.")
    system_md: str = Field(default="", description="Rendered system block.")
    prompt_md: str = Field(default="", description="Rendered prompt block.")
    s_ctx_md: str = Field(default="", description="Condensed context block.")
    attachments_md: str = Field(default="", description="Raw excerpts with provenance.")
    stage_log: list[StageRecord] = Field(default_factory=list, description="Per-stage decisions.")
    started_ns: int = Field(default=0, description="perf_counter_ns at start (latency).")
    policy_fingerprint: str = Field(default="", description="Policy in force.")
    config_fingerprint: str = Field(default="", description="Config in force.")
    # The EvidenceView of `answer_bundle` that the `validated` stage validated against, with
    # that bundle: packaging (`recorded`) validates the renumbered answer against the same view
    # instead of projecting the bundle again. Not a field: never serialized nor validated; a
    # state rebuilt from JSON (step mode over HTTP) has none and the view is built again.
    _view: tuple[AnswerBundle, EvidenceView] | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        # Fields only: pydantic's == also compares private attributes, so a state that kept its
        # view would differ from the same state rebuilt from JSON (which has none).
        if not isinstance(other, RequestState):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def evolve(self, **changes: Any) -> RequestState:
        """A new state with `changes` applied and validated.

        Only the changed fields are validated (each against its own annotation): the others
        were validated when this state was made and are immutable contracts or values no stage
        mutates. Re-validating the whole state after every stage cost about as much as the
        stages' own work (hundreds of rows checked 25 times per request).
        """
        unknown = changes.keys() - _FIELDS.keys()
        if unknown:
            raise ValueError(f"RequestState has no field(s) {sorted(unknown)}")
        checked = {k: _field_adapter(k).validate_python(v) for k, v in changes.items()}
        return self.model_copy(update=checked)

    def evidence_view(self) -> EvidenceView:
        """The EvidenceView of `answer_bundle`: the one `keeping_view` kept when it is of this
        very bundle, else projected now (the same view either way)."""
        bundle = self.answer_bundle
        if bundle is None:
            raise ValueError("no answer bundle yet: no evidence view")
        kept = self._view
        if kept is not None and kept[0] is bundle:
            return kept[1]
        return EvidenceView.from_bundle(bundle)

    def keeping_view(self, view: EvidenceView) -> RequestState:
        """This state, keeping `view` (of its `answer_bundle`) for the later stages."""
        state = self.model_copy()
        state._view = (self.answer_bundle, view) if self.answer_bundle is not None else None
        return state

    def rows_by_id(self) -> dict[str, RetrievalRow]:
        return {r.chunk_id: r for r in self.base_context_chunks}

    def shown_sources(self) -> dict[str, SelectedEvidence]:
        """shown anchor -> selected evidence of the packaged answer, first-citation order:
        how views join the public citations (shown anchors) to the bundle. From the
        renumbering the `recorded` stage kept in `extras` (a handed-out state has no
        validation); {} before that stage or when no answer was shown."""
        # Lazy: citebound.respond adds ~3 ms to importing citebound.pipeline (python -X importtime).
        from citebound.respond.renumber import evidence_by_shown

        return evidence_by_shown(self.answer_bundle, self.extras.get(DISPLAY_ANCHORS))


_FIELDS = RequestState.model_fields


@cache
def _field_adapter(name: str) -> TypeAdapter[Any]:
    """Validator of one RequestState field (its type and constraints), built once per field."""
    info = _FIELDS[name]
    form: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    return TypeAdapter(form)
