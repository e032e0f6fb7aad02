"""The staged pipeline: RequestState, stage registry, controller (auto + step mode)."""

from citebound.pipeline.context import PipelineContext
from citebound.pipeline.controller import Pipeline, check_invariants, next_stage
from citebound.pipeline.conversation import FollowupRewrite, rewrite_query
from citebound.pipeline.preprocess import map_header, preprocess, retrieval_query
from citebound.pipeline.stages import REGISTRY, STAGE_LABELS
from citebound.pipeline.state import (
    SEED_BUTTONS,
    SEED_STAGE,
    STAGE_ORDER,
    MappingDecision,
    PromptBody,
    RequestState,
    Shape,
    StageRecord,
)

__all__ = [
    "REGISTRY",
    "SEED_BUTTONS",
    "SEED_STAGE",
    "STAGE_LABELS",
    "STAGE_ORDER",
    "FollowupRewrite",
    "MappingDecision",
    "Pipeline",
    "PipelineContext",
    "PromptBody",
    "RequestState",
    "Shape",
    "StageRecord",
    "check_invariants",
    "map_header",
    "next_stage",
    "preprocess",
    "retrieval_query",
    "rewrite_query",
]
