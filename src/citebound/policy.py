"""Policy: every value that changes an answer, versioned, fingerprinted, shipped as presets.

Presets are TOML files in `citebound/presets/`. Load one by name or a file path::

    >>> from citebound.policy import load_policy
    >>> p = load_policy("strict-v1")
    >>> p.policy_version
    'R2_POLICY_V1'
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from citebound.contracts.base import Contract, content_hash
from citebound.contracts.enums import CitationStyleInput, PromptStyle
from citebound.errors import ConfigError

TokenizerName = Literal["cl100k_base", "o200k_base", "llama3", "qwen3", "chars"]


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
    """Retrieval gate (seed 003 §2): no LLM call unless evidence is sufficient.

    Besides the top similarity, the gate may look at the *coverage* of the best row: the share
    of the question's key terms it holds (`citebound.text.terms.coverage`). A question whose
    best row holds few of its words is refused even above `min_score` (`min_coverage`); one
    whose best row holds most of them passes from `covered_min_score` (docs/answers.md).
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
        "(`text.terms.names`) is in a ranked row; None turns it off.",
    )
    found_min_terms: int = Field(default=2, ge=1, description="Key terms for found_min_score.")

    @model_validator(mode="after")
    def _covered_below_min(self) -> GatePolicy:
        if self.covered_min_score is not None and self.covered_min_score > self.min_score:
            raise ValueError("covered_min_score must not exceed min_score")
        if self.found_min_score is not None and self.found_min_score > self.min_score:
            raise ValueError("found_min_score must not exceed min_score")
        return self

    def similarity_suffices(
        self,
        top: float,
        coverage: float | None,
        min_score: float,
        key_terms: int = 0,
        names_unfound: int = 0,
    ) -> bool:
        """`top` reaches `min_score` (the similarity that suffices alone: the gate's
        `min_score`, or the assembly's `min_top_similarity`), or `covered_min_score` when the
        best row holds `covered_share` of at least `covered_min_terms` key terms, or
        `found_min_score` when it holds `found_min_terms` key terms and no name of the question
        is missing from the rows. Both stages apply this rule."""
        if top >= min_score:
            return True
        covered = (
            coverage is not None
            and coverage >= self.covered_share
            and key_terms >= self.covered_min_terms
        )
        low = self.covered_min_score
        if covered and low is not None and top >= low:
            return True
        held = 0 if coverage is None else round(coverage * key_terms)  # key terms in the row
        found = self.found_min_score
        named = not names_unfound and held >= self.found_min_terms
        return found is not None and top >= found and named

    def refusal(
        self,
        top: float | None,
        coverage: float | None,
        min_score: float,
        key_terms: int = 0,
        names_unfound: int = 0,
    ) -> str | None:
        """Why a top similarity `top` with best-row `coverage` of the question's `key_terms`
        (`names_unfound` of its names in no ranked row) is insufficient, or None
        (`similarity_suffices`, then the `min_coverage` floor).

        >>> g = GatePolicy(min_score=0.76, min_chunks=1, min_coverage=0.25,
        ...                covered_min_score=0.55, covered_share=0.6)
        >>> [g.refusal(*x, 0.76, 3) for x in [(0.8, 0.5), (0.8, 0.2), (0.6, 0.6), (0.6, 0.5)]]
        [None, 'GATE_LOW_COVERAGE', None, 'GATE_BELOW_MIN_SCORE']
        """
        if top is None or not self.similarity_suffices(
            top, coverage, min_score, key_terms, names_unfound
        ):
            return "GATE_BELOW_MIN_SCORE"
        if coverage is not None and coverage < self.min_coverage:
            return "GATE_LOW_COVERAGE"
        return None

    def lowest_score(self, min_score: float) -> float:
        """The lowest top similarity that can pass (with enough coverage)."""
        passes = (self.covered_min_score, self.found_min_score)
        return min([min_score, *(s for s in passes if s is not None)])


class RetrievalPolicy(Contract):
    """N-constants and retrieval knobs (seed 002 §4, §5.3; seed 004)."""

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


class LLMPolicy(Contract):
    """Execution parameters frozen by policy (seed 001 R4)."""

    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    max_output_tokens: int = Field(default=800, ge=1, description="Output-token cap.")
    max_attempts: int = Field(default=3, ge=1, le=10, description="Attempts incl. the first.")
    backoff_base_s: float = Field(default=0.5, ge=0, description="First retry delay.")
    backoff_max_s: float = Field(default=8.0, ge=0, description="Cap on one retry delay.")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-attempt timeout.")


class ConversationPolicy(Contract):
    """Follow-up questions (seed 002 `recentConversation`; docs/conversations.md).

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


class SupportWeights(Contract):
    """Weights of the sentence support rule: `sigmoid(intercept + coverage × c +
    window_coverage × w − missing_words × m − ...)` (validate/support.py). The default is
    lexical coverage alone; shipped presets carry fitted values."""

    intercept: float = Field(default=-4.0, description="Bias of the logistic rule.")
    coverage: float = Field(
        default=8.0, ge=0, description="Per share of content lemmas in the cited evidence."
    )
    window_coverage: float = Field(
        default=0.0, ge=0, description="Per share of content lemmas in the best window."
    )
    missing_words: float = Field(
        default=0.0, ge=0, description="Lost per content lemma absent from the cited evidence."
    )
    missing_names: float = Field(
        default=0.0, ge=0, description="Lost per capitalised name or number word absent."
    )
    names_outside_window: float = Field(
        default=0.0,
        ge=0,
        description="Lost per name or number the evidence has, but not in the best window.",
    )
    missing_numbers: float = Field(
        default=0.0, ge=0, description="Lost per number, date or code absent (identifiers)."
    )
    polarity_flip: float = Field(
        default=100.0,
        ge=0,
        description="Lost on a negation or antonym flip against the cited evidence.",
    )
    missing_tokens: float = Field(
        default=0.0,
        ge=0,
        description="Lost per word (function words too) in neither the cited evidence nor the "
        "question.",
    )
    echo_missing: float = Field(
        default=0.0,
        ge=0,
        description="Lost per word absent from the cited evidence, times the share of the "
        "sentence's content lemmas the question has (a reply restating the question).",
    )
    echo_scattered: float = Field(
        default=0.0,
        ge=0,
        description="Lost per content lemma of a clause that its best single evidence sentence "
        "lacks (the evidence has it elsewhere), times the share of the sentence's content lemmas "
        "the question has (a reply relating the question's words itself).",
    )
    slot_swap: float = Field(
        default=0.0,
        ge=0,
        description="Lost per sentence word that replaced a specific evidence token in place "
        "(same neighbours; validate/swap.py): a number, code, unit or name.",
    )
    word_swap: float = Field(
        default=0.0,
        ge=0,
        description="Lost per sentence word that replaced another content word of the evidence "
        "in place (not a plain adjective; validate/swap.py).",
    )


class ValidationPolicy(Contract):
    """Post-generation validation knobs (seed 001 R5, seed 003 §6-7, seed 000 P2.2)."""

    new_facts: Literal["fail", "flag"] = Field(
        default="fail", description="UNSUPPORTED_NEW_FACT fails (fail) or is only recorded (flag)."
    )
    min_sentence_support: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Lowest acceptable support score per cited sentence (validate/support.py).",
    )
    support_weights: SupportWeights = Field(
        default_factory=lambda: SupportWeights(),
        description="Logistic support rule over the paraphrase-robust signals (support.py).",
    )
    support_window: int = Field(
        default=2,
        ge=1,
        le=20,
        description="Consecutive evidence sentences the best-supporting window spans.",
    )
    support_prefix: int = Field(
        default=6,
        ge=0,
        le=20,
        description="A word also matches an evidence word sharing its first N characters "
        "(0 = whole lemmas only).",
    )
    negation_span_cover: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Share of a negated evidence span a plain sentence must repeat to flip it.",
    )
    nli_model_path: str | None = Field(
        default=None,
        description="Local ONNX NLI/fact-checking export (validate/nli.py); None = lexical only.",
    )
    nli_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Share of P(entailment) in a sentence's support score when a model is set.",
    )
    high_confidence_support: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Confidence is high when every sentence's support reaches this, else medium.",
    )
    low_support_action: Literal["fail", "low_confidence"] = Field(
        default="fail", description="What happens below min_sentence_support."
    )
    length_ratio_limit: float = Field(
        default=10.0, gt=0, description="Flag answers longer than this × evidence length."
    )
    min_attribution_coverage: float = Field(
        default=1.0, ge=0, le=1, description="Cited factual sentences ÷ factual sentences."
    )
    regenerate_on_failure: bool = Field(
        default=False,
        description="When R5 rejects a model answer, make at most one more call with the frozen "
        "regenerate_v1 instructions naming the rejected sentences (seed 003 §6); off = one call.",
    )


class AnswererPolicy(Contract):
    """Knobs of the built-in `extractive` answerer (llm/extractive, docs/answers.md).

    The defaults are the values fitted for strict-v1; each preset states them in `[answerer]`
    with what they were fitted on. A sentence's score is the IDF-weighted share of the
    question's terms it holds (+ `context_weight` for terms in its heading path) + type cues.
    """

    floor: float = Field(
        default=0.2,
        ge=0,
        lt=1,
        description="A sentence is a candidate only when its share of the question's terms is "
        "strictly above this.",
    )
    min_matches: int = Field(
        default=2,
        ge=1,
        description="Distinct question terms a sentence must share (a question of two content "
        "terms needs one).",
    )
    max_sentences: int = Field(
        default=3, ge=1, description="Most sentences outside lists and procedures."
    )
    max_sentence_chars: int = Field(
        default=600, ge=1, description="Longer 'sentences' (tables, run-on text) are never quoted."
    )
    relative_floor: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="A further sentence needs this share of the lead's score and a question "
        "term the answer lacks.",
    )
    rank_tolerance: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="The lead comes from the best-ranked evidence whose best sentence scores at "
        "least this share of the best sentence overall.",
    )
    max_steps: int = Field(
        default=8, ge=0, description="Most list items or procedure steps quoted after the lead."
    )
    context_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Weight of question terms found in the sentence's document title / heading "
        "path (never enough alone).",
    )
    type_bonus: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Added when the sentence has what the question type asks for (definition, "
        "number, reason).",
    )
    missing_number_penalty: float = Field(
        default=0.1, ge=0, le=1, description="Taken from a quantity answer without a digit."
    )
    step_bonus: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Added to items/steps for list and procedure questions.",
    )
    phrase_bonus: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Added per pair of neighbouring question terms the sentence also has side "
        "by side ('battle of Hastings').",
    )
    tie_share: float = Field(
        default=0.9,
        ge=0,
        le=2,
        description="A further sentence scoring at least this share of the lead's score is a "
        "near-tie the scores cannot separate: it joins even without a new question term "
        "(above 1: never).",
    )
    max_tied: int = Field(
        default=3, ge=1, description="Most sentences in an answer made of near-ties."
    )
    redundant_share: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="A further sentence whose content terms are at least this share already "
        "quoted says nothing new and is left out.",
    )
    intro_penalty: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Taken from a list intro ('... the following:') for other question types.",
    )
    prefer_defining: bool = Field(
        default=True,
        description="For a 'What is X?' question, the lead is a sentence that defines X (names "
        "X before its defining verb or colon) when there is one.",
    )
    subject_qualifiers: int = Field(
        default=2,
        ge=0,
        description="A defining sentence's subject phrase may hold this many terms besides X "
        "('`Svc::ComStub` is', 'A queued component has'); more is a phrase mentioning X.",
    )
    anaphora_penalty: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Taken from a sentence that starts by pointing back at an earlier one "
        "('In this case, this component ...', 'It ...', 'These ...').",
    )
    max_subject_terms: int = Field(
        default=3,
        ge=0,
        description="'What is / does X?' asks about a named subject when X has at most this "
        "many content terms ('the ActiveRateGroup component'); longer ones ('the name of the "
        "river that ...') are questions in definition form. Scopes the anaphora and intro "
        "rules.",
    )
    weak_lead: bool = Field(
        default=True,
        description="The lead is never a sentence that points back at an earlier one, nor (for "
        "questions other than list, procedure and open ones) a list intro ending in ':', when "
        "another sentence qualifies.",
    )
    prefer_overview: bool = Field(
        default=True,
        description="For a 'What is X?' question, a sentence defining X in an introduction / "
        "overview section leads before one defining it elsewhere (design notes, tables).",
    )
    max_code_lines: int = Field(
        default=3,
        ge=0,
        description="A 'How do I ...?' answer quotes a fenced code block of at most this many "
        "non-blank lines, verbatim in backticks, right after the sentence introducing it "
        "(0: code is never quoted).",
    )
    manner_follower: bool = Field(
        default=True,
        description="'How does X <verb> ...?': the sentence after a one-sentence lead joins "
        "when it goes on about the same subject and says how ('It does so by ...').",
    )
    neighbours: Literal["none", "next", "both"] = Field(
        default="next",
        description="A sentence right next to the lead in its evidence ('next': the one after, "
        "'both': also the one before) joins when it holds a question term the lead lacks, "
        "even with fewer shared terms than a candidate needs (it continues the lead).",
    )


class SuperPromptPolicy(Contract):
    """Knobs of the `superprompt-v1` prompt contract (seed 002 §4-§5.8)."""

    s_ctx_max_items: int = Field(
        default=12,
        ge=1,
        description="Most lines per S_CTX_MD list (facts, constraints): a readability cap "
        "(seed 002 §5.6), not fitted on data.",
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


class Policy(Contract):
    """Frozen selection, prompt, execution and validation values (seed 000 snapshot first)."""

    name: str = Field(description="Preset name.")
    policy_version: str = Field(min_length=1, description="Version recorded in every trace.")
    max_chunks: int = Field(ge=1, description="Max chunks in the evidence.")
    max_chunks_per_knowledge_id: int = Field(ge=1, description="Per-document cap.")
    max_evidence_tokens: int = Field(ge=1, description="Evidence block budget.")
    reserved_output_tokens: int = Field(ge=0, description="Reserved for the answer.")
    max_total_prompt_tokens: int = Field(ge=1, description="Prompt + reserved output budget.")
    max_chunk_token_ratio: float = Field(gt=0, le=1, description="Per-chunk share of the budget.")
    overlap_ratio_threshold: float = Field(gt=0, le=1, description="Near-duplicate threshold.")
    ordering_mode: Literal["rank_strict"] = Field(description="rank asc, then chunk_id asc.")
    sanitization_mode: Literal["safe_normalize_v1"] = Field(description="Sanitizer.")
    strict_no_evidence: Literal[True] = Field(
        description="Empty evidence is NO_EVIDENCE, never continued (only true is supported)."
    )
    min_top_similarity: float = Field(ge=0, le=1, description="Top-similarity gate at selection.")
    min_similarity_floor: float = Field(ge=0, le=1, description="Per-row floor.")
    max_question_tokens: int = Field(default=512, ge=1, description="Question block cap.")
    allowed_knowledge_types: list[str] = Field(
        description="V5 domain integrity; ['*'] allows any type."
    )
    citation_style: CitationStyleInput = Field(description="Anchor style.")
    prompt_style: PromptStyle = Field(default=PromptStyle.QA, description="qa or summarize.")
    prompt_contract: Literal["v1", "superprompt-v1"] = Field(
        default="v1",
        description="v1: the frozen five-section prompt (qa_v1 / summarize_v1); superprompt-v1: "
        "seed 002's System_MD, Prompt_MD, S_CTX_MD, Attachments_MD (+ Recent Conversation).",
    )
    superprompt: SuperPromptPolicy = Field(
        default_factory=SuperPromptPolicy, description="superprompt-v1 knobs."
    )
    tokenizer: TokenizerName = Field(description="Token counter for every budget.")
    refusal: RefusalPolicy = Field(description="Refusal strings.")
    gate: GatePolicy = Field(description="Retrieval gate.")
    retrieval: RetrievalPolicy = Field(default_factory=RetrievalPolicy, description="Retrieval.")
    llm: LLMPolicy = Field(default_factory=LLMPolicy, description="Execution.")
    validation: ValidationPolicy = Field(default_factory=ValidationPolicy, description="R5.")
    conversation: ConversationPolicy = Field(
        default_factory=ConversationPolicy, description="Follow-up questions."
    )
    answerer: AnswererPolicy = Field(
        default_factory=AnswererPolicy, description="Built-in extractive answerer."
    )

    @model_validator(mode="after")
    def _budgets_fit(self) -> Policy:
        if self.max_evidence_tokens + self.reserved_output_tokens > self.max_total_prompt_tokens:
            raise ValueError(
                "max_evidence_tokens + reserved_output_tokens must not exceed "
                "max_total_prompt_tokens"
            )
        return self

    @property
    def fingerprint(self) -> str:
        """`sha256:<hex>` of the canonical JSON of the policy.

        Fields added after V1 (`prompt_contract`, `superprompt`, `conversation`,
        `validation.regenerate_on_failure`, the gate's coverage fields) are left out while they
        hold their defaults, so a V1 policy keeps the fingerprint its audit records carry."""
        data = self.model_dump(mode="json")
        for name in _OMIT_WHEN_DEFAULT:
            if data[name] == _DEFAULTS[name]:
                del data[name]
        for (section, name), default in _OMIT_NESTED_WHEN_DEFAULT.items():
            if data[section][name] == default:
                del data[section][name]
        return content_hash(data)

    def evolve(self, **changes: object) -> Policy:
        """A validated copy with top-level fields replaced (unlike `model_copy(update=...)`).

        >>> load_policy("strict-v1").evolve(max_chunks=4).max_chunks
        4
        """
        try:
            return Policy.model_validate({**self.model_dump(), **changes})
        except ValidationError as err:
            raise _format_error(err, f"evolve({', '.join(changes)})") from None

    def allows_knowledge_type(self, value: str) -> bool:
        return "*" in self.allowed_knowledge_types or value in self.allowed_knowledge_types


_OMIT_WHEN_DEFAULT = ("prompt_contract", "superprompt", "conversation")
# The defaults are read from the models, not written again here: a default changed there is
# the one a policy is compared with.
_OMIT_NESTED_WHEN_DEFAULT: dict[tuple[str, str], object] = {
    (section, name): model.model_fields[name].default
    for section, model, names in (
        ("validation", ValidationPolicy, ("regenerate_on_failure",)),
        (
            "gate",
            GatePolicy,
            ("min_coverage", "covered_min_score", "covered_share", "covered_min_terms"),
        ),
    )
    for name in names
}
_DEFAULTS = {
    "prompt_contract": "v1",
    "superprompt": SuperPromptPolicy().model_dump(mode="json"),
    "conversation": ConversationPolicy().model_dump(mode="json"),
}

PRESETS = ("strict-v1", "hybridrag", "superprompt-v1")


def _format_error(err: ValidationError, source: str) -> ConfigError:
    first = err.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "<root>"
    return ConfigError(
        f"invalid policy {source}: field '{field}': {first['msg']}", field=field, source=source
    )


def policy_from_mapping(data: dict[str, object], source: str = "<mapping>") -> Policy:
    """Build a Policy from parsed TOML/JSON, raising ConfigError that names the bad field."""
    try:
        return Policy.model_validate(data)
    except ValidationError as err:
        raise _format_error(err, source) from None


@lru_cache(maxsize=16)
def _load_preset(name: str) -> Policy:
    text = resources.files("citebound.presets").joinpath(f"{name}.toml").read_text("utf-8")
    return policy_from_mapping(tomllib.loads(text), source=f"preset {name}")


def load_policy(name_or_path: str | Path = "strict-v1") -> Policy:
    """Load a preset by name (`strict-v1`, `hybridrag`) or a TOML file by path."""
    key = str(name_or_path)
    if key in PRESETS:
        return _load_preset(key)
    path = Path(key)
    if not path.is_file():
        raise ConfigError(
            f"unknown policy '{key}': not a preset ({', '.join(PRESETS)}) and not a file",
            source=key,
        )
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"policy file {path} is not valid TOML: {err}", source=key) from None
    return policy_from_mapping(data, source=str(path))
