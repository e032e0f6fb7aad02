"""The `Policy` model (all sections, its fingerprint) and loading it from a preset or a TOML
file."""

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
from citebound.policy.answerer import AnswererPolicy
from citebound.policy.sections import (
    ConversationPolicy,
    GatePolicy,
    LLMPolicy,
    RefusalPolicy,
    RetrievalPolicy,
    SuperPromptPolicy,
)
from citebound.policy.validation import ValidationPolicy
from citebound.presets import DEFAULT_PRESET, PRESETS

TokenizerName = Literal["cl100k_base", "o200k_base", "llama3", "qwen3", "chars"]


class Policy(Contract):
    """Frozen selection, prompt, execution and validation values (R2_POLICY_V1's snapshot first)."""

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
        "the System_MD, Prompt_MD, S_CTX_MD, Attachments_MD blocks (+ Recent Conversation).",
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
        ("retrieval", RetrievalPolicy, ("extra_chunks",)),
        (
            "gate",
            GatePolicy,
            ("min_coverage", "covered_min_score", "covered_share", "covered_min_terms"),
        ),
    )
    for name in names
}


def _json_default(name: str) -> object:
    """The JSON form of `Policy`'s declared default for field `name`."""
    value = Policy.model_fields[name].get_default(call_default_factory=True)
    return value.model_dump(mode="json") if isinstance(value, Contract) else value


_DEFAULTS = {name: _json_default(name) for name in _OMIT_WHEN_DEFAULT}


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


def load_policy(name_or_path: str | Path = DEFAULT_PRESET) -> Policy:
    """Load a preset by name (`PRESETS`; default `DEFAULT_PRESET`, strict-v1) or a TOML file
    by path."""
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
