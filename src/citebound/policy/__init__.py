"""Policy: every value that changes an answer, versioned, fingerprinted, shipped as presets.

Presets are TOML files in `citebound/presets/`. Load one by name or a file path::

    >>> from citebound.policy import load_policy
    >>> p = load_policy("strict-v1")
    >>> p.policy_version
    'R2_POLICY_V1'
"""

from citebound.policy.answerer import AnswererPolicy
from citebound.policy.model import (
    PRESETS,
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
from citebound.policy.validation import ValidationPolicy

__all__ = [
    "PRESETS",
    "AnswererPolicy",
    "ConversationPolicy",
    "GatePolicy",
    "LLMPolicy",
    "Policy",
    "RefusalPolicy",
    "RetrievalPolicy",
    "SuperPromptPolicy",
    "TokenizerName",
    "ValidationPolicy",
    "load_policy",
    "policy_from_mapping",
]
