"""Policy: every value that changes an answer, versioned, fingerprinted, shipped as presets.

Presets are TOML files in `citebound/presets/` (`PRESET_SUMMARIES` says what each is;
`DEFAULT_PRESET`, strict-v1, has fitted values, `seed-v1` the frozen ones, literally). Load one by
name or a file path::

    >>> from citebound.policy import load_policy
    >>> p = load_policy("strict-v1")
    >>> p.policy_version
    'R2_POLICY_V1'
"""

from citebound.policy.answerer import AnswererPolicy
from citebound.policy.model import (
    Policy,
    TokenizerName,
    load_policy,
    policy_from_mapping,
)
from citebound.policy.sections import (
    ConversationPolicy,
    GatePolicy,
    LLMPolicy,
    RefusalPolicy,
    RetrievalPolicy,
    SuperPromptPolicy,
)
from citebound.policy.validation import SupportWeights, ValidationPolicy
from citebound.presets import DEFAULT_PRESET, PRESET_SUMMARIES, PRESETS

__all__ = [
    "DEFAULT_PRESET",
    "PRESETS",
    "PRESET_SUMMARIES",
    "AnswererPolicy",
    "ConversationPolicy",
    "GatePolicy",
    "LLMPolicy",
    "Policy",
    "RefusalPolicy",
    "RetrievalPolicy",
    "SuperPromptPolicy",
    "SupportWeights",
    "TokenizerName",
    "ValidationPolicy",
    "load_policy",
    "policy_from_mapping",
]
