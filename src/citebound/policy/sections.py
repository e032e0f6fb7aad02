"""Policy sections: refusal strings, retrieval gate, retrieval knobs, LLM execution, follow-up
questions and the superprompt-v1 contract (the `[refusal]`, `[gate]`, `[retrieval]`, `[llm]`,
`[conversation]` and `[superprompt]` tables of a preset)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from citebound.contracts.base import Contract


class RefusalPolicy(Contract):
    """Refusal strings. The validator accepts only these exact strings."""

    no_evidence_text: str = Field(
        min_length=1, description="Answer when the gate or assembly refuses before any LLM call."
    )
    model_text: str = Field(
        min_length=1,
        description="Exact string the model must output when evidence is insufficient.",
    )


class GatePolicy(Contract):
    """Retrieval gate (docs/gate.md): no LLM call unless evidence is sufficient.

    Besides the top similarity, the gate may look at the *coverage* of the best row: the share
    of the question's key terms it holds (`citebound.gate.measures.coverage`). A question whose
    best row holds few of its words is refused even above `min_score` (`min_coverage`); one
    whose best row holds most of them passes from `covered_min_score` (docs/answers.md). These
    are the rule's settings; the rule that reads them is `citebound.gate.rule`.
    """

    min_score: float = Field(ge=0, le=1, description="Top calibrated similarity must reach this.")
    min_chunks: int = Field(ge=1, description="At least this many rows must reach min_score.")
    min_coverage: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="The best row must hold at least this share of the question's key terms "
        "(questions without key terms are exempt); 0 turns the check off.",
    )
    covered_min_score: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A top similarity below min_score still passes from this value when the best "
        "row holds at least `covered_share` of the question's key terms; None turns it off.",
    )
    covered_share: float = Field(
        default=1.0, gt=0, le=1, description="Coverage that lets covered_min_score apply."
    )
    covered_min_terms: int = Field(
        default=1,
        ge=1,
        description="covered_min_score applies only to questions with at least this many key "
        "terms (two words such as 'litres' and 'hold' are found too easily).",
    )
    found_min_score: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A top similarity below min_score still passes from this value when the best "
        "row holds `found_min_terms` key terms and every name or number of the question "
        "(`gate.measures.names`; every key term when the question's case marks none) is in a "
        "ranked row; None turns it off.",
    )
    found_min_terms: int = Field(default=2, ge=1, description="Key terms for found_min_score.")
    rare_min_score: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A top similarity below min_score still passes from this value when the best "
        "row holds `rare_share` of the question's key terms weighted by their idf in the "
        "collection (its rarest words: `GateMeasures.rarity_held`); None turns it off.",
    )
    rare_share: float = Field(
        default=1.0, gt=0, le=1, description="Idf-weighted coverage that lets rare_min_score apply."
    )

    @model_validator(mode="after")
    def _covered_below_min(self) -> GatePolicy:
        if self.covered_min_score is not None and self.covered_min_score > self.min_score:
            raise ValueError("covered_min_score must not exceed min_score")
        if self.found_min_score is not None and self.found_min_score > self.min_score:
            raise ValueError("found_min_score must not exceed min_score")
        if self.rare_min_score is not None and self.rare_min_score > self.min_score:
            raise ValueError("rare_min_score must not exceed min_score")
        return self


class RetrievalPolicy(Contract):
    """N-constants and retrieval knobs (docs/retrieval.md)."""

    n0_query_pieces: int = Field(default=5, ge=1, description="Max query pieces (N0).")
    n1_retr_max_candidates: int = Field(default=200, ge=1, description="Candidates kept (N1).")
    n2_rerank_top_k: int = Field(default=50, ge=1, description="Candidates to the reranker (N2).")
    n3_final_selection_max: int = Field(default=24, ge=1, description="Final selection cap (N3).")
    top_k: int = Field(default=20, ge=1, description="Rows in the RetrievalBundle.")
    logavgexp_tau: float = Field(default=9.0, gt=0, description="LogAvgExp temperature (τ).")
    per_hit_neighbors: int = Field(default=0, ge=0, description="Neighbour chunks per hit.")
    mode: Literal["hybrid", "lexical", "dense"] = Field(default="hybrid", description="Index use.")
    lexical_weight: float = Field(default=0.4, ge=0, le=1, description="Lexical share in fusion.")
    promote_definitions: int = Field(
        default=0,
        ge=0,
        description="For 'What is X?' questions: how many chunks of the first N2 that hold a "
        "sentence defining X (for 'What N kinds ...?': the 'N Types' section) move to the "
        "front, similarities unchanged (retrieve/definitions.py; 0 = off).",
    )
    extra_chunks: int = Field(
        default=0,
        ge=0,
        description="Evidence slots beyond max_chunks / the per-document cap for rows those "
        "caps cut that are sections of the best row's document holding more of the question's "
        "key terms than the best row (assemble/extra.py; 0 = off).",
    )


class LLMPolicy(Contract):
    """Execution parameters frozen by policy (R4: temperature, retries, timeouts)."""

    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    max_output_tokens: int = Field(default=800, ge=1, description="Output-token cap.")
    max_attempts: int = Field(default=3, ge=1, le=10, description="Attempts incl. the first.")
    backoff_base_s: float = Field(default=0.5, ge=0, description="First retry delay.")
    backoff_max_s: float = Field(default=8.0, ge=0, description="Cap on one retry delay.")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-attempt timeout.")


class ConversationPolicy(Contract):
    """Follow-up questions (the last N4 turn pairs; docs/conversations.md).

    The last N4 turn pairs (`superprompt.n4_recent_conv_max_pairs`) go into a separate, fenced,
    never-citable block of the `qa_conversation_v1` template; a deterministic rewrite carries
    the entities of the last turns into the retrieval query.
    """

    max_conversation_tokens: int = Field(
        default=600,
        ge=0,
        description="Token cap of the Recent conversation block; the oldest pairs are left out "
        "first. 600 keeps about 8 short engineering Q/A pairs inside strict-v1's 3,500-token "
        "prompt budget next to 2,200 evidence tokens (sized on the sample corpus' answers).",
    )
    rewrite_turns: int = Field(
        default=2,
        ge=0,
        description="Most recent user questions whose entities the retrieval rewrite may carry.",
    )
    rewrite_max_terms: int = Field(
        default=6,
        ge=0,
        description="Most terms the rewrite appends to the retrieval query.",
    )
    rewrite_no_entity_max_words: int = Field(
        default=3,
        ge=0,
        description="A question with no entity and no reference back is a follow-up only when "
        "it is this short (content words of >= 4 letters): 'What is the torque?' continues, "
        "'Which valve must be fully open before starting the pump?' is a new topic.",
    )
    rewrite_answer_turns: int = Field(
        default=1,
        ge=0,
        description="Most recent answers whose entities and referred noun phrase an explicit "
        "follow-up ('it', 'them', 'what about ...') may carry; 0 = questions only.",
    )
    rewrite_answer_max_terms: int = Field(
        default=3,
        ge=0,
        description="Most of the appended terms that may come from earlier answers.",
    )
    rewrite_phrase_words: int = Field(
        default=2,
        ge=1,
        description="Words of the plural noun phrase a plural reference ('them') carries: the "
        "head noun and the modifiers before it ('telemetry values').",
    )


class SuperPromptPolicy(Contract):
    """Knobs of the `superprompt-v1` prompt contract (docs/superprompt.md)."""

    s_ctx_max_items: int = Field(
        default=12,
        ge=1,
        description="Most lines per S_CTX_MD list (facts, constraints): a readability cap "
        "set by hand, not fitted on data.",
    )
    a4_min_line_support: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="An LLM-condensed S_CTX line needs this share of its content words in one "
        "selected attachment (and every number/code in the attachments), else the extractive "
        "S_CTX replaces it. Chosen, not fitted: no labelled condenser outputs exist yet.",
    )
    n4_recent_conv_max_pairs: int = Field(
        default=8,
        ge=0,
        description="N4: most recent turn pairs a request carries, for every prompt contract "
        "(the Recent Conversation block and the follow-up rewrite); 0 = single-shot.",
    )
