"""Policy section `[validation]`: post-generation validation knobs and the weights of the
sentence support rule (validate/support.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.base import Contract


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
    """Post-generation validation knobs: R5 checks, support, regeneration (docs/validation.md)."""

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
        "regenerate_v1 instructions naming the rejected sentences; off = one call.",
    )
