"""The retrieval gate (docs/gate.md): what it measures of a question over the ranked rows
(`measures`), the rule that refuses before any model call (`rule`), and the A3 stage's decision
on the reranked rows (`decide`). Assembly's top-similarity check reads the same rule."""

from citebound.gate.decide import Decision, decide
from citebound.gate.measures import top_coverage
from citebound.gate.rule import apply_gate, lowest_score, refusal, similarity_suffices

__all__ = [
    "Decision",
    "apply_gate",
    "decide",
    "lowest_score",
    "refusal",
    "similarity_suffices",
    "top_coverage",
]
