"""What every stage shares: the `Stage` signature and `done`, the bookkeeping each stage ends
with (seed stage, steps done, stage log)."""

from __future__ import annotations

from collections.abc import Callable

from citebound.pipeline.context import PipelineContext
from citebound.pipeline.state import SEED_STAGE, RequestState, StageRecord

Stage = Callable[[RequestState, PipelineContext], RequestState]


def done(state: RequestState, name: str, record: StageRecord, **changes: object) -> RequestState:
    seed = SEED_STAGE[name]
    return state.evolve(
        stage=seed or state.stage,
        history_of_stages=[*state.history_of_stages, seed] if seed else state.history_of_stages,
        steps_done=[*state.steps_done, name],
        stage_log=[*state.stage_log, record],
        **changes,
    )
