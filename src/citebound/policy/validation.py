"""Policy section `[validation]`: post-generation validation knobs and the verifier's
threshold (validate/verifier.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.base import Contract


class ValidationPolicy(Contract):
    """Post-generation validation knobs (seed 001 R5, seed 003 §6-7, seed 000 P2.2)."""

    new_facts: Literal["fail", "flag"] = Field(
        default="fail", description="UNSUPPORTED_NEW_FACT fails (fail) or is only recorded (flag)."
    )
    verifier: Literal["builtin", "none"] = Field(
        default="builtin",
        description="Model that decides whether cited evidence supports a sentence: the one "
        "citebound ships (builtin) or none (only the hard checks decide). nli_model_path, when "
        "set, replaces the shipped model.",
    )
    verifier_threshold: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="A cited sentence whose verifier score is below this is UNSUPPORTED_CLAIM.",
    )
    nli_model_path: str | None = Field(
        default=None,
        description="Local ONNX NLI/fact-checking export used as the verifier instead of the "
        "shipped one (validate/nli.py).",
    )
    high_confidence_support: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Confidence is high when every sentence's verifier score reaches this, "
        "else medium.",
    )
    low_support_action: Literal["fail", "low_confidence"] = Field(
        default="fail",
        description="What happens to a sentence below verifier_threshold: the answer fails "
        "(UNSUPPORTED_CLAIM) or passes with low confidence.",
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
        "regenerate_v2 instructions naming the rejected sentences (seed 003 §6); off = one call.",
    )
