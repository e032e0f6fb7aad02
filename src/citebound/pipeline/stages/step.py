"""What every stage shares: the `Stage` signature and `done`, the bookkeeping each stage ends
with (seed stage, steps done, stage log)."""

from __future__ import annotations

from collections.abc import Callable

from citebound.pipeline.context import PipelineContext
from citebound.pipeline.state import RequestState, StageRecord

Stage = Callable[[RequestState, PipelineContext], RequestState]


def done(state: RequestState, name: str, record: StageRecord, **changes: object) -> RequestState:
    # Imported here: the stage table holds the functions that call `done`, so importing it at
    # the top would be an import cycle (table -> stage modules -> step -> table).
    from citebound.pipeline.table import BY_NAME

    seed = BY_NAME[name].seed
    return state.evolve(
        stage=seed or state.stage,
        history_of_stages=[*state.history_of_stages, seed] if seed else state.history_of_stages,
        steps_done=[*state.steps_done, name],
        stage_log=[*state.stage_log, record],
        **changes,
    )
