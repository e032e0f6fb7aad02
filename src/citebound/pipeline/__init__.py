"""The staged pipeline: RequestState, the stage table, controller (auto + step mode)."""

from citebound.pipeline.context import PipelineContext
from citebound.pipeline.controller import Pipeline, check_invariants, next_stage
from citebound.pipeline.state import RequestState, StageRecord
from citebound.pipeline.table import STAGES, StageSpec, buttons

__all__ = [
    "STAGES",
    "Pipeline",
    "PipelineContext",
    "RequestState",
    "StageRecord",
    "StageSpec",
    "buttons",
    "check_invariants",
    "next_stage",
]
