"""The stage table: every stage once, in run order, with what the controller, the step page
and the CLI need to know of it (docs/superprompt.md).

Each stage is memoryless: `(state, ctx) -> new state`. Every stage copes with an upstream
refusal or failure: after the gate refuses, the later stages still run (so every request is
validated, recorded and packaged the same way) but no LLM is called.

A stage's `name` is what `RequestState.steps_done`, the stage log and audit records carry, so
it never changes. Its `seed` is its name in the vocabulary of `RequestState.stage` /
`history_of_stages`, or None for the stages outside it: assembly (part of A4's budgeted
selection) and the stages the Prompt_Builder button runs (build, execute, validate, record,
package; "the Prompt_Builder does not introduce a new stage", so `stage` stays `a5`). Every
stage, seed or not, is appended to `steps_done`, which drives the controller's order. Its
`button` is the manual-mode button that runs it: a button runs its consecutive stages.
"""

from __future__ import annotations

from dataclasses import dataclass

from citebound.pipeline.stages.answer import executed, packaged, recorded, validated
from citebound.pipeline.stages.prompt import a4_condense, a5_format, assembled, prompt_built
from citebound.pipeline.stages.question import a0_preprocess, a2_shape
from citebound.pipeline.stages.search import a3_gate, rerank, retrieval
from citebound.pipeline.stages.step import Stage


@dataclass(frozen=True)
class StageSpec:
    """One stage: its persisted name, seed stage, label, manual-mode button and function."""

    name: str
    seed: str | None
    label: str
    button: str
    run: Stage


_PROMPT_BUILDER = "Prompt_Builder"

STAGES: tuple[StageSpec, ...] = (
    StageSpec("preprocessed", "preprocessed", "A0 preprocess", "A0_PreProcessing", a0_preprocess),
    StageSpec("a2", "a2", "A2 shape", "A2_PromptShaper", a2_shape),
    StageSpec("retrieval", "retrieval", "retrieve", "Retrieval", retrieval),
    StageSpec("reranked", "reranked", "rerank", "ReRanker", rerank),
    StageSpec("a3", "a3", "A3 gate", "A3_NLI_Gate", a3_gate),
    StageSpec("assembled", None, "assemble", "A4_Condenser", assembled),
    StageSpec("a4", "a4", "A4 condense", "A4_Condenser", a4_condense),
    StageSpec("a5", "a5", "A5 format", "A5_Format_Enforcer", a5_format),
    StageSpec("prompt_built", None, "build prompt", _PROMPT_BUILDER, prompt_built),
    StageSpec("executed", None, "execute", _PROMPT_BUILDER, executed),
    StageSpec("validated", None, "validate", _PROMPT_BUILDER, validated),
    StageSpec("recorded", None, "record", _PROMPT_BUILDER, recorded),
    StageSpec("packaged", None, "package", _PROMPT_BUILDER, packaged),
)

# Lookups over the table, not tables of their own.
BY_NAME: dict[str, StageSpec] = {s.name: s for s in STAGES}
STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)


def buttons() -> list[tuple[str, tuple[str, ...]]]:
    """The manual-mode buttons in order, each with the stages it runs.

    >>> [name for name, _ in buttons()][-2:]
    ['A5_Format_Enforcer', 'Prompt_Builder']
    """
    out: list[tuple[str, tuple[str, ...]]] = []
    for s in STAGES:
        if out and out[-1][0] == s.button:
            out[-1] = (s.button, (*out[-1][1], s.name))
        else:
            out.append((s.button, (s.name,)))
    return out


def stage_label(name: str) -> str:
    """The stage's label for people (the step page, `--step`); an unknown name as it is."""
    spec = BY_NAME.get(name)
    return name if spec is None else spec.label
