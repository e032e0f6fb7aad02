"""The stages, in registry order. Each is memoryless: `(state, ctx) -> new state`.

Every stage copes with an upstream refusal or failure: after the gate refuses, the later
stages still run (so every request is validated, recorded and packaged the same way) but no
LLM is called.
"""

from __future__ import annotations

from citebound.pipeline.stages.answer import executed, packaged, recorded, validated
from citebound.pipeline.stages.prompt import a4_condense, a5_format, assembled, prompt_built
from citebound.pipeline.stages.question import a0_preprocess, a2_shape
from citebound.pipeline.stages.search import a3_gate, rerank, retrieval, search_pieces
from citebound.pipeline.stages.step import Stage

__all__ = ["REGISTRY", "STAGE_LABELS", "Stage", "search_pieces"]

REGISTRY: dict[str, Stage] = {
    "preprocessed": a0_preprocess,
    "a2": a2_shape,
    "retrieval": retrieval,
    "reranked": rerank,
    "a3": a3_gate,
    "assembled": assembled,
    "a4": a4_condense,
    "a5": a5_format,
    "prompt_built": prompt_built,
    "executed": executed,
    "validated": validated,
    "recorded": recorded,
    "packaged": packaged,
}
STAGE_LABELS = {
    "preprocessed": "A0 preprocess",
    "a2": "A2 shape",
    "retrieval": "retrieve",
    "reranked": "rerank",
    "a3": "A3 gate",
    "assembled": "assemble",
    "a4": "A4 condense",
    "a5": "A5 format",
    "prompt_built": "build prompt",
    "executed": "execute",
    "validated": "validate",
    "recorded": "record",
    "packaged": "package",
}
